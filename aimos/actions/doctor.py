"""`aimos doctor`'s checks of one home: each a status (ok, warn, fail, or skip when what it looks
at is missing), what it found and, when not ok, the fix. Reads only: nothing is migrated, written
or started, and no secret is read out (a file keystore's items are looked at, never opened).

The checks a front end's own layer must make (the housekeeper's runs, the user service) are given
to ``diagnose`` as functions; it runs them in their place, after the brain's own.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.errors import (
    AimosError,
    IntegrityError,
    KeychainError,
    KeychainLockedError,
    SchemaTooNewError,
    StoreError,
)
from aimos.exit_codes import ExitCode, exit_code_for
from aimos.identity.agents import epochs_due
from aimos.identity.epochs import epochs
from aimos.identity.keystore import FileKeystore, holds, open_keystore
from aimos.identity.master import MASTER_ITEM, MASTER_PENDING_ITEM, master_row
from aimos.identity.signer import epoch_state
from aimos.identity.trusted import check_identities
from aimos.store.connection import Connection, EngineError, code_schema_version, open_reader, schema_version
from aimos.store.freshness import freshness_state
from aimos.store.meta import brain_meta
from aimos.verify.brain.outcome import newest_outcome, outcome_text
from aimos.vocabulary import CLI_AGENT, EXPIRY_WARNING_DAYS, HOUSEKEEPER

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
STATUSES = (OK, WARN, FAIL, SKIP)
# the order the checks are shown in (the front end's own two in their places)
NAMES = (
    "brain",
    "schema",
    "keystore",
    "anchors",
    "verify",
    "meaning",
    "agents",
    HOUSEKEEPER,
    "service",
    "nli",
    "disk",
    "permissions",
)
NEED_A_BRAIN = NAMES[1 : NAMES.index("service") + 1]  # skipped when there is no brain to look at

MIB = 1024 * 1024
DISK_FAIL_BELOW = 100 * MIB  # no room for a backup or a migration of a small brain
DISK_WARN_BELOW = 1024 * MIB
SHOWN_PATHS = 5  # a permission fix names paths one by one up to this many, then whole folders


@dataclass(frozen=True)
class Check:
    """One line of the report. ``code``: the exit code this check asks for when it fails."""

    name: str
    status: str
    found: str
    fix: str | None = None
    code: int = ExitCode.FAILURE

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "found": self.found,
            "fix": self.fix,
            "exit_code": int(self.code) if self.status == FAIL else None,
        }


@dataclass
class Diagnosis:
    home: str
    brain_path: str
    checks: list[Check] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when no check failed (warnings need no one now); the exit code of the failing checks
        when they agree (3 no brain, 5 damaged or rolled back, 6 keystore or identities); else 1."""
        codes = {int(c.code) for c in self.checks if c.status == FAIL}
        if not codes:
            return int(ExitCode.OK)
        return codes.pop() if len(codes) == 1 else int(ExitCode.FAILURE)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}

    def to_json(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "brain_path": self.brain_path,
            "ok": self.exit_code == 0,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "checks": [c.to_json() for c in self.checks],
        }


CheckFn = Callable[[], Check]


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    """A check that could not look (the brain refused a read, a file could not be opened) fails
    with what stopped it, and the others still run."""
    try:
        return run()
    except AimosError as exc:
        return Check(name, FAIL, f"could not check: {exc.message}", exc.hint, exit_code_for(exc))
    except UnicodeDecodeError:  # text aimos never writes: damage, which `aimos verify` locates
        damaged = "the brain holds text that is not valid UTF-8"
        return Check(name, FAIL, f"could not check: {damaged}", "aimos verify", ExitCode.INTEGRITY)
    except (EngineError, OSError) as exc:
        return Check(name, FAIL, f"could not check: {type(exc).__name__}: {exc}", "aimos verify")
    except Exception as exc:  # a home damaged in a way no check foresaw: a finding, not a crash
        damaged = f"could not check: {type(exc).__name__} (the home is damaged)"
        return Check(name, FAIL, damaged, "aimos verify")


def diagnose(
    *, housekeeper: CheckFn | None = None, service: CheckFn | None = None, now: int | None = None
) -> Diagnosis:
    """Every check of this home, in NAMES order. ``housekeeper`` and ``service`` are the front
    end's (the layers below cannot look at them); left out, they are skipped."""
    at = int(time.time()) if now is None else now
    report = Diagnosis(str(paths.data_dir()), str(paths.brain_path()))
    brain, conn, meta = _open_brain()
    found: dict[str, Check] = {"brain": brain}
    if conn is None:
        why = "no brain to check" if brain.code == ExitCode.NOT_FOUND else "the brain did not open"
        for name in NEED_A_BRAIN:
            found[name] = Check(name, SKIP, f"not checked: {why}")
    else:
        try:
            found["schema"] = _guarded("schema", lambda: _schema(conn))
            found["keystore"] = _guarded("keystore", lambda: _keystore(conn, meta, at))
            found["anchors"] = _guarded("anchors", lambda: _anchors(conn, meta))
            found["verify"] = _guarded("verify", lambda: _verify(conn, meta))
            found["meaning"] = _guarded("meaning", lambda: _meaning(conn))
            found["agents"] = _guarded("agents", lambda: _agents(conn, at))
        finally:
            conn.close()
        for name, extra in ((HOUSEKEEPER, housekeeper), ("service", service)):
            found[name] = _guarded(name, extra) if extra else Check(name, SKIP, "not checked here")
    found["nli"] = _guarded("nli", _nli)
    found["disk"] = _guarded("disk", _disk)
    found["permissions"] = _guarded("permissions", _permissions)
    report.checks = [found[name] for name in NAMES]
    return report


# --- the brain and its schema ----------------------------------------------------------------
def size_text(nbytes: int) -> str:
    """A size as people read it: 1.5 GiB, 512.0 MiB, 3.2 KiB, 12 bytes."""
    for unit, scale in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} bytes"


Opened = tuple[Check, Connection | None, dict[str, str]]


def _not_open(found: str, fix: str, code: int) -> Opened:
    return Check("brain", FAIL, found, fix, code), None, {}


def _open_brain() -> Opened:
    """The brain check, and when it opened a read-only connection (never migrated) and its metadata."""
    path = paths.brain_path()
    if not path.exists():
        return _not_open(
            f"no brain at {path}",
            "aimos install (a new brain); if this home had one, `aimos restore --list` shows the "
            "backups to bring it back from",
            ExitCode.NOT_FOUND,
        )
    try:
        conn = open_reader(path)
    except AimosError as exc:
        return _not_open(f"{path} does not open: {exc.message}", _restore_fix(exc), exit_code_for(exc))
    try:
        meta = brain_meta(conn)
    except (AimosError, EngineError, UnicodeDecodeError):
        conn.close()
        return _not_open(
            f"{path} opens, but its metadata does not read", _restore_fix(None), ExitCode.INTEGRITY
        )
    if "brain_id" not in meta:
        conn.close()
        return _not_open(f"{path} was never set up", "aimos install", ExitCode.NOT_FOUND)
    found = f"{path} opens: brain {meta.get('brain_name', 'personal')} ({meta['brain_id']})"
    return Check("brain", OK, f"{found}, {size_text(path.stat().st_size)}"), conn, meta


def _restore_fix(exc: AimosError | None) -> str:
    """A brain newer than this aimos wants a newer aimos; a damaged one, a backup; else the hint."""
    if isinstance(exc, SchemaTooNewError):
        return "upgrade aimos to the release that wrote this brain (pip install --upgrade aimos)"
    if exc is None or isinstance(exc, IntegrityError | StoreError):
        return "aimos restore --list, then aimos restore BACKUP (the brain file is kept beside it)"
    return exc.hint


def _schema(conn: Connection) -> Check:
    have, code = schema_version(conn), code_schema_version()
    if have == code:
        return Check("schema", OK, f"version {have}, this aimos's")
    pending = code - have
    return Check(
        "schema",
        WARN,
        f"version {have}; this aimos is at {code}: {pending} migration{'s' if pending != 1 else ''} "
        "pending, applied by the next command that writes (doctor migrated nothing)",
        "aimos verify (applies them, then checks the whole brain)",
    )


# --- the keystore ----------------------------------------------------------------------------
def _current_epochs(conn: Connection) -> dict[str, dict[str, Any]]:
    """Each identity's newest epoch (the one it signs with), by agent id."""
    current: dict[str, dict[str, Any]] = {}
    for epoch in epochs(conn):  # oldest first
        current[str(epoch["agent_id"])] = epoch
    return current


def _key_fix(missing: list[str], where: str) -> str:
    """Without the master key nothing new can be signed (no rotation replaces a key): the keystore
    itself must come back. Otherwise each identity gets a new key."""
    if "master" in missing:
        return f"put the keys back from your copy ({where}): without the master key no new key can be signed"
    return "; ".join(
        "aimos housekeeper rotate-key" if who == HOUSEKEEPER else f"aimos agent rotate {who}"
        for who in missing
    )


_NO_KEYCHAIN = (
    "start this session's keychain (Linux: a Secret Service such as gnome-keyring-daemon; macOS: "
    "log in to the desktop), then aimos doctor again"
)


def _keystore(conn: Connection, meta: dict[str, str], at: int) -> Check:
    keystore = open_keystore(meta["keystore"], meta["brain_id"])
    where = keystore.describe()
    try:
        wanted: dict[str, str | None] = {"master": None}
        wanted |= {
            agent: str(epoch["key_ref"])
            for agent, epoch in _current_epochs(conn).items()
            if epoch_state(epoch, at) in ("active", "not_yet_valid")
        }
        missing = [
            who
            for who, item in wanted.items()
            if not (
                holds(keystore, item)
                if item is not None
                else holds(keystore, MASTER_ITEM) or holds(keystore, MASTER_PENDING_ITEM)
            )
        ]
    except KeychainError as exc:
        fix = exc.hint if isinstance(exc, KeychainLockedError) else _NO_KEYCHAIN
        return Check("keystore", FAIL, f"{where}: {exc.message}", fix, ExitCode.IDENTITY)
    if missing:
        gone = isinstance(keystore, FileKeystore) and not keystore.directory.is_dir()
        keys = ", ".join(f"{who}'s key" if who != "master" else "the master key" for who in missing)
        found = f"{where}: {'the folder is missing' if gone else 'missing ' + keys}"
        return Check("keystore", FAIL, found, _key_fix(missing, where), ExitCode.IDENTITY)
    present = ", ".join(wanted)
    return Check("keystore", OK, f"{where}: keys present for {present}")


# --- anchors: the trust anchor, the newest seal and its anchor outside the brain ---------------
def _anchors(conn: Connection, meta: dict[str, str]) -> Check:
    try:  # the newest seal verifies, the identity rows are as sealed, the master is the anchored one
        check_identities(conn)
    except AimosError as exc:
        unanchored = getattr(exc, "reason", None) == "brain_unanchored"
        return Check(
            "anchors",
            FAIL,
            exc.message,
            f"aimos anchor (with the master passphrase), if this brain at {paths.brain_path()} is yours"
            if unanchored
            else "aimos verify (names what differs), then aimos restore BACKUP",
            exit_code_for(exc),
        )
    fresh = freshness_state(conn)
    if fresh["state"] == "anchor_lost":
        return Check(
            "anchors",
            FAIL,
            fresh["detail"],
            "aimos anchor (with the master passphrase), if this brain is the one you mean to keep; "
            "else put the newer brain file back",
            ExitCode.INTEGRITY,
        )
    if fresh["state"] in ("brain_rolled_back", "brain_history_mismatch"):
        return Check(
            "anchors",
            FAIL,
            f"this brain is not the newest one aimos wrote here: {fresh['detail']}",
            "aimos verify; an older copy put back on purpose goes back with aimos restore BACKUP, "
            "otherwise put the newer brain file back",
            ExitCode.INTEGRITY,
        )
    fingerprint = str(master_row(conn)["fingerprint"])
    if fresh["state"] != "ok":
        return Check(
            "anchors",
            WARN,
            f"master {fingerprint[:16]}... anchored; {fresh['detail']}",
            "aimos housekeeper run-job heartbeat (a signed write, which anchors the newest seal)",
        )
    return Check(
        "anchors",
        OK,
        f"master {fingerprint[:16]}... anchored in anchors.json; newest seal #{fresh['head_seal']} verifies "
        "and matches its anchor outside the brain",
    )


# --- verify: the newest full verification (the nightly job's, or `aimos verify`'s) -----------------
def _verify(conn: Connection, meta: dict[str, str]) -> Check:
    """What only a full verification sees (the search indexes, every row, the schema): its newest
    outcome, from the ledger (the nightly job signs it) or the one kept outside the brain."""
    outcome = newest_outcome(conn, meta["brain_id"])
    if outcome is None:
        return Check("verify", OK, "no full verification yet: the housekeeper's nightly job runs one")
    if outcome["ok"]:
        return Check("verify", OK, outcome_text(outcome))
    return Check(
        "verify",
        FAIL,
        outcome_text(outcome),
        "aimos verify (names what differs and how to repair it; this check is ok once it passes)",
        ExitCode.INTEGRITY,
    )


def _meaning(conn: Connection) -> Check:
    """Whether recall by meaning is on: the pinned model loads here (meaning/model). Off by choice
    or for want of a build for this platform is ok (recall works on words alone); a missing
    package or a model file that is not the pinned one warns, with the fix."""
    from aimos.meaning.index import meaning_state

    state = meaning_state(conn)
    if state.on or state.fix is None:
        return Check("meaning", OK, state.text())
    return Check("meaning", WARN, state.text(), state.fix)


# --- agents: epochs that end soon or have ended ------------------------------------------------
def _agents(conn: Connection, at: int) -> Check:
    current = _current_epochs(conn)
    keeper = current.get(HOUSEKEEPER)
    if keeper is None or keeper["revoked_at"] is not None:
        why = "has no epoch" if keeper is None else "'s epoch is revoked, with no new one"
        return Check(
            "agents",
            FAIL,
            f"the housekeeper {why}: no write can be sealed",
            "aimos housekeeper rotate-key",
            ExitCode.IDENTITY,
        )
    due = epochs_due(conn, at)
    ended = [d for d in due if d.ended(at)]
    if due:
        return Check(
            "agents",
            FAIL if ended else WARN,
            "; ".join(d.ends(at) for d in due),
            "aimos agent rotate --expiring"
            + (
                "; aimos agent revoke ID stops one no longer used"
                if {d.agent_id for d in due} - {CLI_AGENT}
                else ""
            ),
            ExitCode.IDENTITY,
        )
    live = sorted(a for a, e in current.items() if a != HOUSEKEEPER and epoch_state(e, at) == "active")
    revoked = sorted(a for a, e in current.items() if e["revoked_at"] is not None)
    found = f"{len(live)} active agent{'s' if len(live) != 1 else ''} ({', '.join(live) or 'none'})"
    found += f", none ending within {EXPIRY_WARNING_DAYS} days"
    if revoked:
        found += f"; revoked: {', '.join(revoked)}"
    return Check("agents", OK, found)


# --- the NLI judge ---------------------------------------------------------------------------
def _nli() -> Check:
    """Whether the NLI judge a person provides is on (epistemic/nli.py), and when on, whether its
    pinned files still match and its runtime is installed (looked for, not imported)."""
    import importlib.util

    from aimos.epistemic.nli import EXTRA, MODEL_FILE, OFF_HINT, changed, setting

    found = setting()
    if found is None:
        return Check("nli", OK, "the NLI judge is off (the default): the agreement detector judges by words")
    said = f"the NLI judge is on: {found.folder} (model.onnx sha256 {found.digests[MODEL_FILE][:16]}...)"
    differ = changed(found)
    if differ:
        return Check(
            "nli",
            FAIL,
            f"{said}; changed since it was enabled: {', '.join(differ)} (aimos refuses to load it)",
            f"aimos model nli {shlex.quote(str(found.folder))} pins the new bytes if you changed them; "
            f"{OFF_HINT}",
            ExitCode.VERIFICATION_FAILED,
        )
    missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        return Check("nli", FAIL, f"{said}; {', '.join(missing)} not installed", f"{EXTRA}; or {OFF_HINT}")
    return Check("nli", OK, f"{said}; its pinned files match")


# --- the disk --------------------------------------------------------------------------------
def disk_status(free: int, brain: int) -> str:
    """FAIL when a copy of the brain (a backup, a migration's journal) would not fit, or under
    100 MiB; WARN under 1 GiB or twice the brain; else OK."""
    if free < max(DISK_FAIL_BELOW, brain):
        return FAIL
    if free < max(DISK_WARN_BELOW, 2 * brain):
        return WARN
    return OK


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _disk() -> Check:
    folder = paths.data_dir()
    brain = paths.brain_path()
    size = sum(p.stat().st_size for p in (brain, Path(f"{brain}-wal")) if p.exists())
    free = shutil.disk_usage(_existing(folder)).free
    status = disk_status(free, size)
    found = f"{size_text(free)} free on the disk of {folder} (the brain takes {size_text(size)})"
    if status == OK:
        return Check("disk", OK, found)
    backups = folder / "backups"
    return Check(
        "disk",
        status,
        found,
        f"free space on that disk; du -sh {shlex.quote(str(backups))} shows what the brain's backups take",
    )


# --- permissions -----------------------------------------------------------------------------
def _private_roots() -> tuple[list[Path], list[Path]]:
    """(folders walked whole, entries of the data folder that are aimos's): the home, the brain
    and its side files, backups, config (anchors), state (keystore), logs."""
    data = paths.data_dir()
    walked = [
        data / "backups",
        data / "purge-receipts",
        paths.config_dir(),
        paths.state_dir(),
        paths.log_dir(),
    ]
    own = [data]
    if data.is_dir():
        brain = paths.BRAIN_FILENAME
        own += sorted(p for p in data.iterdir() if p.name.startswith((brain, f".{brain}")))
    return walked, own


def _walk(root: Path) -> Iterator[Path]:
    if not root.is_dir() or root.is_symlink():
        return
    yield root
    for entry in sorted(root.rglob("*")):
        if not entry.is_symlink():
            yield entry


def _open_to_others(path: Path) -> int | None:
    """The mode of ``path`` when group or others have any bit on it, else None."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)  # a symlinked home: the folder it points to
    except OSError:
        return None
    return mode if mode & 0o077 else None


def _permissions() -> Check:
    walked, own = _private_roots()
    seen: dict[Path, int] = {}
    for path in [p for root in walked for p in _walk(root)] + [p for p in own if p.exists()]:
        mode = _open_to_others(path)
        if mode is not None:
            seen[path] = mode
    if not seen:
        looked = [str(p) for p in [own[0], *walked] if p.exists()]
        return Check("permissions", OK, f"files 0600, folders 0700 in {', '.join(looked) or 'nothing yet'}")
    shown = ", ".join(f"{p} ({m:04o})" for p, m in list(seen.items())[:SHOWN_PATHS])
    more = f" and {len(seen) - SHOWN_PATHS} more" if len(seen) > SHOWN_PATHS else ""
    return Check(
        "permissions",
        FAIL,
        f"open to other users: {shown}{more}",
        _chmod_fix(list(seen), own[0], walked),
    )


def _quoted(found: list[Path]) -> str:
    return " ".join(shlex.quote(str(p)) for p in found)


def _chmod_fix(found: list[Path], home: Path, walked: list[Path]) -> str:
    """chmod 600 FILES / chmod 700 FOLDERS, by name; past a few, the folders aimos owns whole (and
    the home and the brain's files by name: the home may hold files that are not aimos's)."""
    if len(found) > SHOWN_PATHS:
        _, own = _private_roots()
        steps = [f"chmod -R go-rwx {_quoted([p for p in walked if p.exists()])}"]
        files = [p for p in own if p != home and p.is_file()]
        steps += [f"chmod 600 {_quoted(files)}"] if files else []
        return " && ".join([*steps, f"chmod 700 {_quoted([home])}"])
    files = [p for p in found if not p.is_dir()]
    folders = [p for p in found if p.is_dir()]
    steps = [f"chmod 600 {_quoted(files)}"] if files else []
    steps += [f"chmod 700 {_quoted(folders)}"] if folders else []
    return " && ".join(steps)
