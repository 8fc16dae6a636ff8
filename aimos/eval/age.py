"""`aimos eval age`: a scaled year of use in one scratch brain, beside the bare baseline.

Everything goes through the real signed paths of a CLI session (`actions.session.open_brain`):
memories saved one at a time as every caller saves (signed request, writer, classifier, one
transaction), a share of them brought in by `aimos import` of a generated folder of markdown notes
(its real read, plan and run), recalls interleaved with the saves so each is made on a brain of
the size reached by then, outcomes on what recalls disclosed (some of them weight transitions), a
person's judgments (the master co-signing those that raise trust, as `aimos label` does), and the
housekeeper's jobs run in-process as the scheduler runs them (`housekeeper.runs.run_job`, each on
the signed record), at ``nights`` points spread over the run: each night is owed every job once,
as a scheduler catching up after a gap runs them.

At each checkpoint (a brain of that many memories) the last ``window`` saves before it, then the
recalls, outcomes and judgments due by then, are taken one kind after the other, so that each
kind's bytes (SQLite's dbstat, `eval.storage.table_bytes`) and time (median, p95) are its own;
the rest of the run interleaves them. At the end: `aimos verify`'s work (as `aimos eval verify`
times it) and the housekeeper's online backup (and its check) on the full brain. The bare parts of
a signed write (`eval.perf.bare_parts`) are measured in the same run, at the start and again at
each checkpoint, and every time figure is also given as its ratio to them (a checkpoint's to its
own); save and recall growth is the last checkpoint's median over the first's (the issue's
target: flat within 25%), and the same of their ratios, which a machine busy with other work
at one checkpoint and not at another moves less. A night that falls inside a measured window
runs after it.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos.errors import UsageError
from aimos.eval.stats import summary_ms

DEFAULT_CHECKPOINTS = (1000, 5000, 20_000)
GROWTH_TARGET = 1.25  # the last checkpoint's median over the first's, for saves and recalls
SECTIONS_PER_NOTE = 5  # the imported notes: markdown with this many sections, imported by section
JUDGMENT_WORDS = ("support", "dispute", "not-poison", "poison")  # a person's words, in turn
BARE_SAMPLES = 1000


def checkpoints_for(memories: int, given: Sequence[int] | None) -> list[int]:
    """The checkpoints of a run of ``memories``: those given (else the defaults below it), and
    ``memories`` itself, so the run ends on one."""
    chosen = sorted(set(given)) if given else [c for c in DEFAULT_CHECKPOINTS if c < memories]
    bad = [c for c in chosen if not 1 <= c <= memories]
    if bad:
        raise UsageError(
            f"checkpoint {bad[0]:,} is outside the run of {memories:,} memories",
            "Give checkpoints between 1 and --memories.",
        )
    return sorted({*chosen, memories})


def plan_windows(checkpoints: Sequence[int], window: int, imported: int) -> list[int]:
    """The measured window before each checkpoint: ``window`` saves, fewer where the stretch since
    the previous checkpoint is shorter; the import comes right after the first checkpoint (at the
    start when there is only one), and its stretch must still hold a window of one save."""
    windows = []
    previous = 0
    for i, c in enumerate(checkpoints):
        import_here = imported if i == (1 if len(checkpoints) > 1 else 0) else 0
        room = c - previous - import_here
        if room < 1:
            raise UsageError(
                f"the {imported:,} imported memories do not fit before the checkpoint at {c:,}",
                "Import fewer (--imported) or move the checkpoints apart.",
            )
        windows.append(min(window, room))
        previous = c
    return windows


def _note(words: Callable[[int], str], rng: secrets.SystemRandom, n: int, sections: int) -> str:
    """A markdown note of ``sections`` sections (a memory each when imported by section)."""
    parts = [f"## part {k}\n\n{words(rng.randint(8, 30))}" for k in range(sections)]
    return f"# note {n}\n\n" + "\n\n".join(parts) + "\n"


class _Year:
    """The scratch brain and what has happened in it so far."""

    def __init__(self, brain: Any, passphrase: str, rng: secrets.SystemRandom) -> None:
        from aimos.eval.perf import zipf_words

        self.brain = brain
        self.agent = brain.signer("cli")
        self.housekeeper = brain.housekeeper()
        self.master = brain.master_with(passphrase)
        self.rng = rng
        self.words = zipf_words(rng)
        self.texts: list[str] = []  # what recalls draw their words from
        self.saved_ids: list[str] = []  # memories saved one at a time, not yet judged
        self.disclosed: deque[tuple[str, str]] = deque(maxlen=5000)  # (memory, receipt) awaiting an outcome
        self.memories = 0
        self.counts = dict.fromkeys(("recalls", "outcomes", "transitions", "judgments"), 0)
        ops = ("save", "recall", "outcome", "transition", "judgment")
        self.times: dict[str, list[float]] = {op: [] for op in ops}  # seconds each call took
        self.terminals: dict[str, int] = {}

    def save(self) -> float:
        from aimos.actions.bodies import build_save_body
        from aimos.actions.memory import save_and_classify
        from aimos.identity.requests import sign_request
        from aimos.vocabulary import PATH_SAVE

        text = f"memory {self.memories}: " + self.words(self.rng.randint(8, 30))
        body = build_save_body(company_id=self.brain.company_id, value=text)
        t0 = time.perf_counter()
        t = int(time.time())
        done = save_and_classify(
            self.brain.conn, self.housekeeper, sign_request(self.agent, body, PATH_SAVE, t), t
        )
        spent = time.perf_counter() - t0
        self.memories += 1
        self.texts.append(text)
        self.saved_ids.append(done.memory_id)
        self.times["save"].append(spent)
        return spent

    def recall(self) -> float:
        from aimos.actions.bodies import build_recall_body
        from aimos.identity.requests import sign_request
        from aimos.recall.pipeline import recall
        from aimos.vocabulary import PATH_RECALL

        words = [w for w in self.rng.choice(self.texts).split()[2:] if w.isalpha()]
        query = " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 4))))
        t0 = time.perf_counter()
        t = int(time.time())
        got = recall(
            self.brain.conn,
            self.housekeeper,
            sign_request(self.agent, build_recall_body(query=query, limit=10), PATH_RECALL, t),
            t,
        )
        spent = time.perf_counter() - t0
        self.counts["recalls"] += 1
        self.times["recall"].append(spent)
        self.disclosed.extend((r["memory_id"], got.receipt["receipt_id"]) for r in got.results[:1])
        return spent

    def outcome(self) -> tuple[float, bool] | None:
        """Feedback on the most recent disclosure not yet judged (None: nothing disclosed yet)."""
        from aimos.actions.bodies import build_outcome_body
        from aimos.identity.requests import sign_request
        from aimos.learning.outcomes import record_outcome
        from aimos.vocabulary import PATH_OUTCOME

        if not self.disclosed:
            return None
        memory_id, receipt_id = self.disclosed.pop()
        word = "bad" if self.counts["outcomes"] % 3 == 0 else "good"
        body = build_outcome_body(memory_id=memory_id, receipt_id=receipt_id, outcome=word)
        t0 = time.perf_counter()
        t = int(time.time())
        done = record_outcome(
            self.brain.conn, self.housekeeper, sign_request(self.agent, body, PATH_OUTCOME, t), t
        )
        spent = time.perf_counter() - t0
        moved = done.terminal == "authorized_transition"
        self.counts["outcomes"] += 1
        self.counts["transitions"] += moved
        self.terminals[done.terminal] = self.terminals.get(done.terminal, 0) + 1
        self.times["outcome"].append(spent)
        if moved:
            self.times["transition"].append(spent)
        return spent, moved

    def judge(self) -> float | None:
        """A person's judgment of a memory not judged before, as `aimos label` records it."""
        from aimos.actions.labels import judge_memory, judgment_for, needs_master

        if not self.saved_ids:
            return None
        memory_id = self.saved_ids.pop(self.rng.randrange(len(self.saved_ids)))
        judgment = judgment_for(JUDGMENT_WORDS[self.counts["judgments"] % len(JUDGMENT_WORDS)])
        t0 = time.perf_counter()
        master = self.master if needs_master(self.brain, "cli", memory_id, judgment) else None
        judge_memory(self.brain, "cli", memory_id, judgment, "a person looked at it", master=master)
        spent = time.perf_counter() - t0
        self.counts["judgments"] += 1
        self.times["judgment"].append(spent)
        return spent

    def catch_up(self, plan: dict[str, int]) -> None:
        """The recalls, outcomes and judgments due at this many memories, interleaved."""

        def due(kind: str) -> bool:
            return self.counts[kind] < plan[kind] * self.memories // plan["memories"]

        acted = True
        while acted:
            acted = False
            if due("recalls"):
                self.recall()
                acted = True
            if due("outcomes"):
                acted = self.outcome() is not None or acted
            if due("judgments"):
                acted = self.judge() is not None or acted

    def import_notes(self, count: int, folder: Path) -> dict[str, Any]:
        """``count`` memories by `aimos import` of a folder of markdown notes (by section)."""
        from aimos.actions import imports
        from aimos.memory.text_formats import MARKDOWN

        folder.mkdir(mode=0o700)
        notes = -(-count // SECTIONS_PER_NOTE)
        for n in range(notes):
            sections = min(SECTIONS_PER_NOTE, count - n * SECTIONS_PER_NOTE)
            (folder / f"note-{n:05d}.md").write_text(_note(self.words, self.rng, n, sections))
        marks: list[float] = []
        t0 = time.perf_counter()
        files = imports.read(folder, MARKDOWN, by_section=True)
        planned = imports.plan(self.brain, "cli", files)
        planned_at = time.perf_counter()
        summary = imports.run(
            self.brain, "cli", planned, lambda _done, _name: marks.append(time.perf_counter())
        )
        finished = time.perf_counter()
        for f in files:
            self.texts += [p.item.value for p in f.planned if p.status == "new"]
        self.memories += int(summary["saved"]) + int(summary["quarantined"])
        each = [b - a for a, b in zip([planned_at, *marks[:-1]], marks, strict=True)]
        return {
            "memories": int(summary["saved"]) + int(summary["quarantined"]),
            "saved": summary["saved"],
            "quarantined": summary["quarantined"],
            "occurrences": summary["occurrences"],
            "files": len(files),
            "seconds": round(finished - t0, 2),
            "read_and_plan_seconds": round(planned_at - t0, 2),
            # each memory's save inside its file's transaction (a file's commit is in the next one)
            "save": summary_ms(each) if each else None,
            "per_memory_ms": round((finished - planned_at) * 1000 / max(1, len(marks)), 4),
        }

    def checkpoint(self, plan: dict[str, int], at: int, window: int, folder: Path) -> dict[str, Any]:
        """The brain reaches ``at`` memories by ``window`` saves, then the recalls and outcomes due
        by then are made, each kind after the other so that its bytes and times are its own; the
        bare parts are measured again beside them (in ``folder``), so that each ratio is to a
        baseline taken under the same load of the machine."""
        from aimos.eval.perf import bare_parts
        from aimos.eval.storage import table_bytes
        from aimos.store.queries.eval import brain_bytes

        conn = self.brain.conn
        b0 = table_bytes(conn)
        saves = [self.save() for _ in range(window)]
        b1 = table_bytes(conn)
        due = plan["recalls"] * at // plan["memories"] - self.counts["recalls"]
        recalls = [self.recall() for _ in range(max(0, due))]
        b2 = table_bytes(conn)
        outcomes: list[float] = []
        transitions: list[float] = []
        for _ in range(max(0, plan["outcomes"] * at // plan["memories"] - self.counts["outcomes"])):
            done = self.outcome()
            if done is None:
                break
            outcomes.append(done[0])
            if done[1]:
                transitions.append(done[0])
        b3 = table_bytes(conn)
        self.catch_up(plan)  # the judgments due by now
        folder.mkdir(mode=0o700)
        bare = bare_parts(self.agent, folder, BARE_SAMPLES)
        bare_ms = bare["bare_parts_median_ms"]
        size = brain_bytes(conn)  # its pages, the WAL's newest copies included
        return {
            "memories": self.memories,
            "bare_parts_median_ms": bare_ms,
            **self.counts,
            "brain_bytes": size,
            "brain_bytes_per_memory": round(size / self.memories, 1),
            "window": {"saves": window, "recalls": len(recalls), "outcomes": len(outcomes)},
            "bytes_per_memory": _per_unit(b1, b0, window),
            "bytes_per_recall": _per_unit(b2, b1, len(recalls)),
            "bytes_per_outcome": _per_unit(b3, b2, len(outcomes)),
            "save": _figure(saves, bare_ms),
            "recall": _figure(recalls, bare_ms),
            "outcome": _figure(outcomes, bare_ms),
            "transition": _figure(transitions, bare_ms),
        }


@dataclass(frozen=True)
class Housekeeping:
    """The housekeeper's parts a year runs, given by the command line (the evaluations sit below
    the housekeeper's package): every job once as the scheduler runs each (name -> status, ms,
    error), the online backup at a time, and the backup's check."""

    night: Callable[[], dict[str, dict[str, Any]]]
    online_backup: Callable[[int], Path]
    check_backup: Callable[[Path], dict[str, Any]]


def _verify_and_back_up(
    conn: Any, home: Path, master_fingerprint: str, housekeeping: Housekeeping
) -> dict[str, Any]:
    """At the end: `aimos verify`'s work (as `aimos eval verify` times it) and the housekeeper's
    online backup with its check, on the whole brain."""
    from aimos.store.queries.eval import checkpoint
    from aimos.verify.brain.parity import verify_everything

    checkpoint(conn)
    brain_file = (home / "brain.sqlite3").stat().st_size
    t0 = time.perf_counter()
    verified = verify_everything(conn, master_fingerprint)
    verify_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    backup = housekeeping.online_backup(int(time.time()))
    backup_seconds = time.perf_counter() - t0
    checked = housekeeping.check_backup(backup)
    check_seconds = time.perf_counter() - t0 - backup_seconds
    return {
        "brain_file_bytes": brain_file,
        "verify": {"seconds": round(verify_seconds, 2), "ok": bool(verified["ok"])},
        "backup": {
            "seconds": round(backup_seconds, 2),
            "bytes": backup.stat().st_size,
            "check_seconds": round(check_seconds, 2),
            "ok": bool(checked["integrity"] and checked["verifies"]),
        },
    }


def _figure(times: Sequence[float], bare_ms: float) -> dict[str, Any] | None:
    if not times:
        return None
    s: dict[str, Any] = summary_ms(times)
    s["ratio_to_bare"] = round(s["median_ms"] / bare_ms, 2)
    return s


def _per_unit(after: dict[str, dict[str, int]], before: dict[str, dict[str, int]], n: int) -> float | None:
    """Stored bytes (pages) per unit of what ran between two dbstat readings."""
    if n <= 0:
        return None
    grown = sum(v["stored"] for v in after.values()) - sum(v["stored"] for v in before.values())
    return round(grown / n, 1)


def _night(year: _Year, housekeeping: Housekeeping) -> dict[str, Any]:
    """Every housekeeper job once, in the registry's order, as the scheduler runs each."""
    return {"memories": year.memories, "jobs": housekeeping.night()}


def run_age(
    housekeeping: Housekeeping,
    memories: int = DEFAULT_CHECKPOINTS[-1],
    recalls: int = 20_000,
    outcomes: int = 4000,
    judgments: int = 200,
    imported: int = 2000,
    checkpoints: Sequence[int] | None = None,
    window: int = 500,
    nights: int = 12,
    progress: Callable[[int, str], None] | None = None,
) -> dict[str, Any]:
    """The year (module docstring); ``progress(memories, phase)`` is told as the run goes."""
    from aimos.actions.session import open_brain
    from aimos.eval.perf import bare_parts
    from aimos.eval.scratch import install_scratch, scratch_home

    marks = checkpoints_for(memories, checkpoints)
    windows = plan_windows(marks, window, imported)
    plan = {"memories": memories, "recalls": recalls, "outcomes": outcomes, "judgments": judgments}
    night_at = sorted({max(1, memories * (k + 1) // nights) for k in range(nights)})
    import_after = marks[0] if len(marks) > 1 else 0
    rng = secrets.SystemRandom()
    passphrase = secrets.token_urlsafe(24)
    started = time.perf_counter()
    with scratch_home("aimos-eval-age-") as home:
        installed = install_scratch("age", "file", passphrase=passphrase)
        brain = open_brain(write=True)
        try:
            year = _Year(brain, passphrase, rng)
            bare = bare_parts(year.agent, home, BARE_SAMPLES)
            bare_ms = bare["bare_parts_median_ms"]
            nights_run: list[dict[str, Any]] = []

            def tell(phase: str) -> None:
                if progress is not None:
                    progress(year.memories, phase)

            def nights_due() -> None:
                while night_at and night_at[0] <= year.memories:
                    night_at.pop(0)
                    tell("the housekeeper's jobs")
                    nights_run.append(_night(year, housekeeping))

            points = []
            import_report = None
            for c, w in zip(marks, windows, strict=True):
                if import_report is None and imported and year.memories >= import_after:
                    tell("import")
                    import_report = year.import_notes(imported, home / "notes")
                    year.catch_up(plan)
                    nights_due()
                while year.memories < c - w:  # the interleaved stretch
                    tell("saves and recalls")
                    year.save()
                    year.catch_up(plan)
                    nights_due()
                tell(f"checkpoint at {c:,}")
                points.append(year.checkpoint(plan, c, w, home / f"bare-{c}"))
                nights_due()
            nights_due()

            tell("verify and backup")
            end = _verify_and_back_up(brain.conn, home, installed.master_fingerprint, housekeeping)
            counts = dict(year.counts)
            overall = {k: _figure(v, bare_ms) for k, v in year.times.items()}
            terminals = dict(year.terminals)
            total_memories = year.memories
        finally:
            brain.close()
    first, last = points[0], points[-1]

    def growth(kind: str, figure: str = "median_ms") -> float | None:
        a, b = first[kind], last[kind]
        return round(float(b[figure]) / float(a[figure]), 3) if a and b else None

    return {
        "memories": total_memories,
        **counts,
        "outcome_terminals": terminals,
        "scratch_home": str(home),
        "bare": bare,
        "checkpoints": points,
        "import": import_report,
        "overall": overall,
        "nights": nights_run,
        "growth": {
            "save": growth("save"),
            "recall": growth("recall"),
            # the same of the ratios to the bare parts: growth with the machine's load taken out
            "save_ratio_to_bare": growth("save", "ratio_to_bare"),
            "recall_ratio_to_bare": growth("recall", "ratio_to_bare"),
            "from_memories": first["memories"],
            "to_memories": last["memories"],
            "target": GROWTH_TARGET,
        },
        **end,
        "seconds": round(time.perf_counter() - started, 1),
    }
