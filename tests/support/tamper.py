"""The tamper harness: an attacker with the plain brain file edits one cell (or deletes one row)
of a copy of a used brain, and `aimos verify`'s two verifiers are run on the copy in-process.

The attacker uses apsw with none of aimos's SQL functions (what anyone with the file has): it
drops the guard triggers of the table it edits, changes exactly one cell to a plausible different
value (integers +1, text changed by one character, hex changed by one hex digit, JSON with one
value changed and still valid JSON, NULL where the column allows it), then re-creates the dropped
triggers from their original SQL, so the schema reads as it did. The verification opens the copy
the way `aimos verify` does (`open_for_verification()` under the copy's AIMOS_HOME, the master
fingerprint from its config/anchors.json, which is the original's) and calls `verify_everything`.

Cases run in a pool of forked workers (one private AIMOS_HOME each), since each verification of
the whole brain takes ~0.1 s and there are a few thousand cells.

AIMOS_TAMPER_ATTACKER=disable switches the attacker to SQLite's SQLITE_DBCONFIG_ENABLE_TRIGGER=0
(triggers switched off for its connection, the schema never touched); the default is "recreate".
AIMOS_TAMPER_JOBS sets the number of workers (default: the CPU count, at most 4).
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import re
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from support.cells import cell_int, cell_str

HEXDIGITS = "0123456789abcdef"
HEX = re.compile(r"[0-9a-f]{8,}")
FTS5 = re.compile(r"USING\s+fts5\s*\(", re.IGNORECASE)
BRAIN = "brain.sqlite3"

# The kinds of case; the first three need no row.
UNTOUCHED = "untouched"  # the copy as it is
CONTROL = "control"  # guards dropped and re-created, nothing edited: must still verify
EDIT = "edit"  # one cell changed to a plausible different value
NULL = "null"  # one nullable cell set to NULL
DELETE = "delete"  # one row deleted
MOVE = "move"  # one row's rowid moved past the last one (its place in write order)
FTS_EDIT = "fts-edit"  # one search index row replaced by a one-character-different text
FTS_DELETE = "fts-delete"  # one search index row deleted


# --- the schema ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    name: str
    type: str
    notnull: bool
    pk: int


@dataclass(frozen=True)
class Schema:
    tables: dict[str, tuple[Column, ...]]  # regular tables (no virtual tables, no shadow tables)
    fts: tuple[str, ...]  # the FTS5 virtual tables (edited through the virtual table)
    skipped: tuple[str, ...]  # shadow tables and other virtual tables (fts5vocab), not edited

    def column_pairs(self) -> list[tuple[str, str]]:
        return [(t, c.name) for t, cols in self.tables.items() for c in cols]


def read_schema(conn: apsw.Connection) -> Schema:
    """Every table in sqlite_master: regular ones with their columns, FTS5 ones, and the skipped."""
    found = [
        (cell_str(n), cell_str(sql or ""))
        for n, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
    ]
    virtual = [n for n, sql in found if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    shadow = [n for n, _ in found if n not in virtual and any(n.startswith(v + "_") for v in virtual)]
    fts = tuple(n for n, sql in found if n in virtual and FTS5.search(sql))
    tables = {
        n: tuple(
            Column(str(c[1]), str(c[2]).upper(), bool(c[3]), cell_int(c[5]))
            for c in conn.execute(f'PRAGMA table_info("{n}")').fetchall()
        )
        for n, _ in found
        if n not in virtual and n not in shadow and not n.startswith("sqlite_")
    }
    skipped = tuple(n for n, _ in found if n not in tables and n not in fts)
    return Schema(tables, fts, skipped)


def code_schema() -> Schema:
    """The schema the code's migrations make (an empty in-memory brain): what the tests are
    parametrized over, checked against the used brain's own sqlite_master."""
    from aimos.store.schema import migrated_in_memory

    conn = migrated_in_memory()
    try:
        return read_schema(conn)
    finally:
        conn.close()


def triggers(conn: apsw.Connection, table: str, on: str) -> list[tuple[str, str]]:
    """(name, sql) of ``table``'s triggers that fire on ``on`` (UPDATE or DELETE), in schema order."""
    out = []
    for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? ORDER BY rowid", (table,)
    ).fetchall():
        header = re.split(r"\bBEGIN\b", cell_str(sql), maxsplit=1, flags=re.IGNORECASE)[0]
        if re.search(rf"\b{on}\b", header, re.IGNORECASE):
            out.append((str(name), str(sql)))
    return out


# --- plausible edits ---------------------------------------------------------------------------
def one_char(text: str) -> str:
    """``text`` with one character changed (the one nearest the middle that is a letter or digit),
    keeping its class: a hex digit stays a hex digit, a digit a digit, a letter a letter."""
    if not text:
        return "x"
    hexy = HEX.fullmatch(text) is not None
    middle = len(text) // 2
    for i in sorted(range(len(text)), key=lambda i: abs(i - middle)):
        c = text[i]
        if hexy:
            new = HEXDIGITS[(HEXDIGITS.index(c) + 1) % 16]
        elif c.isdigit() and c.isascii():
            new = str((int(c) + 1) % 10)
        elif "a" <= c <= "z":
            new = chr((ord(c) - 97 + 1) % 26 + 97)
        elif "A" <= c <= "Z":
            new = chr((ord(c) - 65 + 1) % 26 + 65)
        else:
            continue
        return text[:i] + new + text[i + 1 :]
    return text[:-1] + ("y" if text[-1] == "x" else "x")


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterable[tuple[tuple[Any, ...], Any]]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, (*path, i))
    else:
        yield path, doc


def _serializer(text: str, doc: Any) -> Any:
    """The json.dumps settings that give back ``text`` exactly, so only the changed value differs."""
    for kwargs in (
        {"separators": (",", ":"), "sort_keys": True, "ensure_ascii": False},
        {"separators": (",", ":"), "sort_keys": False, "ensure_ascii": False},
        {"separators": (",", ":"), "sort_keys": True},
        {"separators": (",", ":")},
        {"sort_keys": True, "ensure_ascii": False},
        {"ensure_ascii": False},
        {"sort_keys": True},
        {},
        {"indent": 2, "sort_keys": True},
    ):
        if json.dumps(doc, **kwargs) == text:
            return lambda d, kw=kwargs: json.dumps(d, **kw)
    return None


def json_variant(text: str, turn: int) -> tuple[str, str] | None:
    """``text`` (a JSON object or array) with one leaf value changed, re-serialized the way it was
    written; the leaf is chosen by ``turn`` (so successive rows change different leaves). The new
    text and the path of the changed leaf; None when ``text`` is not such JSON."""
    if not text.startswith(("{", "[")):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    leaves = list(_leaves(doc))
    dump = _serializer(text, doc)
    if not leaves or dump is None:
        return None
    for k in range(len(leaves)):
        path, value = leaves[(turn + k) % len(leaves)]
        if isinstance(value, bool):
            new: Any = not value
        elif isinstance(value, int):
            new = value + 1
        elif isinstance(value, float):
            new = value + 1.0
        elif isinstance(value, str):
            new = one_char(value)
        else:
            continue  # null: any change would change its type
        changed = copy.deepcopy(doc)
        target = changed
        for step in path[:-1]:
            target = target[step]
        if path:
            target[path[-1]] = new
        else:
            changed = new
        return dump(changed), "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return None


def variants(old: Any, column: Column, others: Sequence[Any], turn: int) -> tuple[tuple[Any, ...], str]:
    """Candidate new values for a cell, most plausible first (the attacker writes the first one the
    table's CHECK, UNIQUE and type constraints accept), and a note on what was changed."""
    candidates: list[Any] = []
    note = ""
    if old is None:
        candidates += [v for v in others if v is not None]
        candidates.append(1 if "INT" in column.type else "x")
        note = "NULL replaced by a value"
    elif isinstance(old, int):
        candidates += [old + 1, old - 1, 1 - old, -old, old + 2, old + 1000]
    elif isinstance(old, str):
        changed = json_variant(old, turn)
        if changed is not None:
            candidates.append(changed[0])
            note = f"JSON {changed[1]} changed"
        candidates.append(one_char(old))
        candidates += [v for v in others if isinstance(v, str)]
    else:
        candidates.append(bytes(old) + b"x")
    unique: list[Any] = []
    for c in candidates:
        if c != old and c not in unique:
            unique.append(c)
    return tuple(unique), note


# --- cases ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    kind: str
    table: str = ""
    rowid: int = 0
    column: str | None = None
    old: Any = None
    candidates: tuple[Any, ...] = ()
    note: str = ""

    @property
    def group(self) -> tuple[str, ...]:
        """The test the case belongs to: (edit, table, column) for edit and null, else (kind, table)."""
        if self.kind in (EDIT, NULL):
            return (EDIT, self.table, str(self.column))
        return (self.kind, self.table)


@dataclass
class Outcome:
    case: Case
    applied: Any = None  # the value the attacker wrote
    ok: bool | None = None  # verify_everything's verdict
    in_database_ok: bool | None = None
    portable_verdict: str | None = None
    reasons: list[str] = field(default_factory=list)  # named_reasons(result), with their side
    error: str | None = None  # verification raised (an aimos refusal or a crash)
    attack_error: str | None = None  # the attacker's tool failed (a harness error)
    blocked: str | None = None  # the schema's own constraints refuse every candidate value
    made_by_aimos: str | None = None  # not detected, and a state aimos itself makes (remade_state)
    seconds: float = 0.0

    @property
    def detected(self) -> bool:
        """Caught with a named reason, impossible without changing the schema (blocked), or leaving
        derived or cached data in a state aimos itself makes and remakes (made_by_aimos)."""
        if self.blocked or self.made_by_aimos:
            return True
        return self.error is None and self.attack_error is None and self.ok is False and bool(self.reasons)

    @property
    def one_sided(self) -> str | None:
        """Which side alone noticed, when only one did: 'in-database only' or 'portable only'."""
        if self.in_database_ok is None or self.portable_verdict is None:
            return None
        portable_failed = self.portable_verdict != "valid"
        if not self.in_database_ok and not portable_failed:
            return "in-database only"
        if self.in_database_ok and portable_failed:
            return "portable only"
        return None

    def describe(self) -> str:
        c = self.case
        where = f"{c.table} rowid {c.rowid}" + (f" column {c.column}" if c.column else "")
        what = {
            EDIT: f"{short(c.old)} -> {short(self.applied)}" + (f" ({c.note})" if c.note else ""),
            NULL: f"{short(c.old)} -> NULL",
            DELETE: "row deleted",
            MOVE: f"rowid moved to {short(self.applied)}",
            FTS_EDIT: f"index text replaced by {short(self.applied)}",
            FTS_DELETE: "index row deleted",
        }.get(c.kind, c.kind)
        if self.blocked:
            verdict = f"blocked by the schema: {self.blocked}"
        elif self.made_by_aimos:
            verdict = f"verify ok, a state aimos makes: {self.made_by_aimos}"
        elif self.attack_error:
            verdict = f"the attacker could not edit: {self.attack_error}"
        elif self.error:
            verdict = f"verify raised {self.error}"
        elif self.ok:
            verdict = "verify ok"
        elif not self.reasons:
            verdict = "verify not ok but no named reason"
        else:
            verdict = "detected: " + ", ".join(self.reasons[:4])
        return f"{where}: {what}: {verdict}"


def short(value: Any, limit: int = 90) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 20] + "..." + text[-17:]


def plan(db: Path, schema: Schema) -> list[Case]:
    """Every case over the brain at ``db``: the untouched copy, a control per table, and per row of
    every table an edit of every cell (and NULL for nullable cells), its deletion and its move;
    per FTS5 row, an edit and a deletion through the virtual table."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        cases = [Case(UNTOUCHED)]
        for table, columns in schema.tables.items():
            cases.append(Case(CONTROL, table))
            data = conn.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid').fetchall()
            distinct = {
                c.name: [r[0] for r in conn.execute(f'SELECT DISTINCT "{c.name}" FROM "{table}" ORDER BY 1')]
                for c in columns
            }
            rowid_is_column = any(c.pk == 1 and c.type == "INTEGER" for c in columns) and (
                sum(1 for c in columns if c.pk) == 1
            )
            for row in data:
                rowid = cell_int(row[0])
                for i, column in enumerate(columns):
                    old = row[i + 1]
                    candidates, note = variants(old, column, distinct[column.name], rowid - 1 + i)
                    cases.append(Case(EDIT, table, rowid, column.name, old, candidates, note))
                    if old is not None and not column.notnull and not column.pk:
                        cases.append(Case(NULL, table, rowid, column.name, old, (None,)))
                cases.append(Case(DELETE, table, rowid))
                if not rowid_is_column:
                    cases.append(Case(MOVE, table, rowid))
        texts = {
            cell_int(r[0]): str(r[1])
            for r in conn.execute("SELECT rowid, COALESCE(key, '') || ' ' || value FROM memories").fetchall()
        }
        for fts in schema.fts:
            for (cell,) in conn.execute(f'SELECT rowid FROM "{fts}" ORDER BY rowid').fetchall():
                rowid = cell_int(cell)
                text = texts.get(rowid, "index text")
                cases.append(Case(FTS_EDIT, fts, rowid, "text", None, (one_char(text),)))
                cases.append(Case(FTS_DELETE, fts, rowid))
        return cases
    finally:
        conn.close()


# --- the attacker -------------------------------------------------------------------------------
class CouldNotEdit(Exception):
    pass


class Blocked(Exception):
    """The table's constraints (CHECK with checks ignored, UNIQUE, NOT NULL, STRICT types) refuse
    every candidate: an attacker who leaves the schema as it was cannot make this edit."""


def _write_cell(conn: apsw.Connection, case: Case) -> Any:
    sql = f'UPDATE "{case.table}" SET "{case.column}" = ? WHERE rowid = ?'
    last: apsw.ConstraintError | None = None
    for ignore_checks in (False, True):
        if ignore_checks:
            conn.execute("PRAGMA ignore_check_constraints = ON")
        for value in case.candidates:
            try:
                with conn:  # a savepoint inside the attacker's transaction
                    conn.execute(sql, (value, case.rowid))
                    if conn.changes() != 1:
                        raise CouldNotEdit(f"no row with rowid {case.rowid}")
                return value
            except apsw.ConstraintError as exc:
                last = exc
                continue
    raise Blocked(f"{last}")


def _act(conn: apsw.Connection, case: Case) -> Any:
    table = f'"{case.table}"'
    if case.kind in (EDIT, NULL):
        return _write_cell(conn, case)
    if case.kind in (DELETE, FTS_DELETE):
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (case.rowid,))
    elif case.kind == MOVE:
        new = conn.execute(f"SELECT MAX(rowid) + 1 FROM {table}").fetchall()[0][0]
        conn.execute(f"UPDATE {table} SET rowid = ? WHERE rowid = ?", (new, case.rowid))
        return new
    elif case.kind == FTS_EDIT:
        conn.execute(f"UPDATE {table} SET text = ? WHERE rowid = ?", (case.candidates[0], case.rowid))
        return case.candidates[0]
    if case.kind != CONTROL and conn.changes() != 1:
        raise CouldNotEdit(f"no row with rowid {case.rowid}")
    return None


def attack(db: Path, case: Case, mode: str = "recreate") -> Any:
    """Apply ``case`` to the brain file at ``db`` as an attacker with plain apsw; what was written."""
    if case.kind == UNTOUCHED:
        return None
    conn = apsw.Connection(str(db))
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        on = "DELETE" if case.kind in (DELETE, FTS_DELETE) else "UPDATE"
        if mode == "disable":
            conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
            dropped: list[tuple[str, str]] = []
        else:
            dropped = [] if case.kind.startswith("fts") else triggers(conn, case.table, on)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for name, _ in dropped:
                conn.execute(f'DROP TRIGGER "{name}"')
            applied = _act(conn, case)
            conn.execute("PRAGMA ignore_check_constraints = OFF")
            for _, sql in dropped:
                conn.execute(sql)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return applied
    finally:
        conn.close()


# --- verification --------------------------------------------------------------------------------
def named_reasons(result: dict[str, Any]) -> list[str]:
    """Every reason a verification result names: the in-database verifier's memory failures and
    failed event chains, the portable verifier's primary reason, and brain-level failures."""
    in_db = result.get("in_database", {})
    reasons = [str(f["reason"]) for f in in_db.get("failures", []) if f.get("reason")]
    reasons += [
        str(c["reason"]) for c in in_db.get("event_chains", []) if not c.get("ok") and c.get("reason")
    ]
    primary = result.get("portable", {}).get("primary_reason")
    if primary:
        reasons.append(str(primary))
    reasons += [str(f["reason"]) for f in result.get("brain", {}).get("failures", []) if f.get("reason")]
    return reasons


def sided_reasons(result: dict[str, Any]) -> list[str]:
    """named_reasons with the side that named each (for messages), de-duplicated."""
    in_db = result.get("in_database", {})
    out = [f"in-database:{f['reason']}" for f in in_db.get("failures", []) if f.get("reason")]
    out += [
        f"events:{c['reason']}" for c in in_db.get("event_chains", []) if not c.get("ok") and c.get("reason")
    ]
    if result.get("portable", {}).get("primary_reason"):
        out.append(f"portable:{result['portable']['primary_reason']}")
    out += [f"brain:{f['reason']}" for f in result.get("brain", {}).get("failures", []) if f.get("reason")]
    return list(dict.fromkeys(out))


def verify_home() -> dict[str, Any]:
    """What `aimos verify --json` computes, for the brain of the current AIMOS_HOME."""
    from aimos.actions.session import expected_master_fingerprint, open_for_verification
    from aimos.verify.brain.parity import verify_everything

    fingerprint = expected_master_fingerprint(None, announce=False)
    conn = open_for_verification()
    try:
        return verify_everything(conn, fingerprint)
    finally:
        conn.close()


# --- running cases ------------------------------------------------------------------------------
_worker: dict[str, Any] = {}
REPORTS: list[str] = []  # printed at the end of the pytest run (conftest.py)


def _init_worker(source_home: str, scratch: str, mode: str) -> None:
    """A worker's own AIMOS_HOME: a copy of the original home (config/anchors.json, keystore)."""
    home = Path(scratch) / f"worker-{os.getpid()}"
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(source_home, home)
    os.environ["AIMOS_HOME"] = str(home)
    _worker.update(source=Path(source_home) / BRAIN, home=home, mode=mode)


def remade_state(db: Path, case: Case) -> str | None:
    """Why an edit verify passed leaves a state aimos itself makes, checked on the attacked copy;
    None for any other edit (a miss). Two such states, both of the memories' vectors (derived, not
    sealed, migration 19), which no check can tell from the state aimos made:
    - the newest vector deleted: its memory waits for its vector as it did after its save (vectors
      are made in rowid order, so one missing below the newest is `vector_missing`), and the next
      recall makes it again (meaning/index.prepare takes store/vectors.pending);
    - the generation count changed or its row deleted (no row: 0): any count is one aimos writes
      after as many replacements; its only reader, the vectors a process keeps in memory, reloads
      when it moves, and verify checks the vectors themselves."""
    from aimos.meaning.model import MODEL_NAME
    from aimos.store import vectors

    if (case.table, case.kind) not in {
        ("memory_vectors", DELETE),
        ("memory_vectors_generation", DELETE),
        ("memory_vectors_generation", EDIT),
    } or case.column not in (None, "generation"):
        return None
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        if case.table == "memory_vectors":
            waiting = vectors.pending(conn, MODEL_NAME, 1)
            if waiting and waiting[0][0] == case.rowid:
                return "the newest vector's memory waits for it, and the next recall makes it again"
            return None
        rows = vectors.generations(conn)
        if not rows or (rows[0][0] == 1 and isinstance(rows[0][1], int) and rows[0][1] >= 0):
            return "a generation count aimos writes (its row absent: 0)"
        return None
    finally:
        conn.close()


def run_one(case: Case) -> Outcome:
    """Copy the brain, attack the copy, verify it."""
    started = time.perf_counter()
    home: Path = _worker["home"]
    db = home / BRAIN
    for leftover in (home / f"{BRAIN}-wal", home / f"{BRAIN}-shm"):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(_worker["source"], db)
    outcome = Outcome(case)
    try:
        outcome.applied = attack(db, case, _worker["mode"])
    except Blocked as exc:
        outcome.blocked = str(exc)
        outcome.seconds = time.perf_counter() - started
        return outcome
    except (CouldNotEdit, apsw.Error) as exc:
        outcome.attack_error = f"{type(exc).__name__}: {exc}"
        outcome.seconds = time.perf_counter() - started
        return outcome
    try:
        result = verify_home()
    except Exception as exc:  # an aimos refusal or a crash: either way, no named reason
        outcome.error = f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"
    else:
        outcome.ok = bool(result["ok"])
        outcome.in_database_ok = bool(result["in_database"]["ok"])
        outcome.portable_verdict = str(result["portable"]["verdict"])
        outcome.reasons = sided_reasons(result)
        assert len(outcome.reasons) >= len(set(named_reasons(result)))
        if outcome.ok:
            outcome.made_by_aimos = remade_state(db, case)
    outcome.seconds = time.perf_counter() - started
    return outcome


def run_cases(source_home: Path, scratch: Path, cases: Sequence[Case], jobs: int, mode: str) -> list[Outcome]:
    """Run ``cases`` in ``jobs`` forked workers (inline when jobs is 1)."""
    scratch.mkdir(parents=True, exist_ok=True)
    if jobs <= 1:
        saved = os.environ.get("AIMOS_HOME")
        try:
            _init_worker(str(source_home), str(scratch), mode)
            return [run_one(c) for c in cases]
        finally:
            if saved is None:
                os.environ.pop("AIMOS_HOME", None)
            else:
                os.environ["AIMOS_HOME"] = saved
    context = multiprocessing.get_context("fork")
    with context.Pool(
        jobs, initializer=_init_worker, initargs=(str(source_home), str(scratch), mode)
    ) as pool:
        return list(pool.imap(run_one, cases, chunksize=16))


def default_jobs() -> int:
    configured = os.environ.get("AIMOS_TAMPER_JOBS")
    if configured:
        return max(1, int(configured))
    return max(1, min(4, os.cpu_count() or 1))


# --- the report --------------------------------------------------------------------------------
def report(outcomes: Sequence[Outcome], seconds: float, jobs: int, mode: str) -> str:
    """The summary: what was not detected, grouped by table; one-sided detections; timings."""
    lines = [
        f"tamper harness: {len(outcomes)} cases in {seconds:.1f} s with {jobs} workers (attacker: {mode})",
    ]
    if outcomes:
        times = sorted(o.seconds for o in outcomes)
        lines.append(
            f"per case (copy + attack + verify): median {times[len(times) // 2] * 1000:.0f} ms,"
            f" max {times[-1] * 1000:.0f} ms"
        )
    by_kind: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_kind.setdefault(o.case.kind, []).append(o)
    for kind, group in by_kind.items():
        if kind in (UNTOUCHED, CONTROL):
            passed = [o for o in group if o.ok and o.error is None]
            lines.append(f"  {kind:10} {len(group):5} cases, {len(passed):5} verify ok (all must)")
            continue
        missed = [o for o in group if not o.detected]
        lines.append(f"  {kind:10} {len(group):5} cases, {len(missed):5} not detected with a named reason")
    for kind in (UNTOUCHED, CONTROL):
        for o in by_kind.get(kind, []):
            if not o.ok:
                lines.append(f"  ! {kind} {o.case.table or 'copy'} does NOT verify: {o.describe()}")
    lines.append("")
    lines.append("NOT DETECTED (table: column [rows missed/rows] ...):")
    undetected: dict[str, dict[str, list[Outcome]]] = {}
    totals: dict[tuple[str, str, str], int] = {}
    for o in outcomes:
        if o.case.kind in (UNTOUCHED, CONTROL):
            continue
        label = (
            o.case.column
            if o.case.kind == EDIT
            else f"<{o.case.kind}>"
            if o.case.kind != NULL
            else (f"{o.case.column}=NULL")
        )
        key = (o.case.table, str(label), o.case.kind)
        totals[key] = totals.get(key, 0) + 1
        if not o.detected:
            undetected.setdefault(o.case.table, {}).setdefault(str(label), []).append(o)
    for table in sorted(undetected):
        parts = []
        for label, missed in undetected[table].items():
            total = totals[(table, label, missed[0].case.kind)]
            parts.append(f"{label} [{len(missed)}/{total}]")
        lines.append(f"  {table}: " + ", ".join(parts))
    edits = {(t, lbl) for (t, lbl, k) in totals if k == EDIT}
    missed_edits = {
        (t, lbl) for t, cols in undetected.items() for lbl, os_ in cols.items() if os_[0].case.kind == EDIT
    }
    lines.append(
        f"(table, column) edits detected in every row: {len(edits) - len(missed_edits)} of {len(edits)}"
    )
    one_sided: dict[str, list[Outcome]] = {}
    for o in outcomes:
        side = o.one_sided
        if side:
            one_sided.setdefault(side, []).append(o)
    lines.append("")
    lines.append("ONLY ONE VERIFIER NOTICED:")
    for side, group in sorted(one_sided.items()):
        kinds: dict[str, int] = {}
        for o in group:
            label = f"{o.case.table}.{o.case.column}" if o.case.column else f"{o.case.table} <{o.case.kind}>"
            kinds[label] = kinds.get(label, 0) + 1
        lines.append(
            f"  {side}: {len(group)} cases: " + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
        )
    remade = [o for o in outcomes if o.made_by_aimos]
    if remade:
        lines.append("")
        lines.append("A STATE AIMOS ITSELF MAKES (derived or cached data; counted as detected):")
        lines += [f"  {o.describe()}" for o in remade]
    blocked = [o for o in outcomes if o.blocked]
    if blocked:
        lines.append("")
        lines.append("BLOCKED BY THE SCHEMA (impossible without changing it; counted as detected):")
        lines += [f"  {o.describe()}" for o in blocked]
    errors = [o for o in outcomes if o.error or o.attack_error]
    if errors:
        lines.append("")
        lines.append("VERIFY RAISED / ATTACK FAILED:")
        lines += [f"  {o.describe()}" for o in errors[:60]]
    lines.append("")
    lines.append("EVERY CASE NOT DETECTED:")
    lines += [
        f"  {o.describe()}" for o in outcomes if not o.detected and o.case.kind not in (UNTOUCHED, CONTROL)
    ]
    return "\n".join(lines) + "\n"
