"""Both verifiers over one read snapshot, and their parity: the in-database verifier's report,
the cognitive bundle exported beside it, the portable verifier's verdict on that bundle, and
whether the two agree (`aimos verify`, the nightly dream, a restore and the TUI's verify)."""

from __future__ import annotations

import gc
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from aimos.crypto.ed25519 import WHOLE_BRAIN_SIGNATURES, remembering
from aimos.errors import AimosError
from aimos.store.connection import Connection, EngineError, damaged_text_error, unreadable_text
from aimos.store.engine import read_snapshot
from aimos.verify.brain.evidence import cognitive_evidence, with_sql_records
from aimos.verify.brain.verifier import Count, Report, verify_brain, verify_brain_state

VERIFY_PHASES = ("in-database verifier", "cognitive export", "portable verifier", "vectors", "parity")
# what damaged bytes can raise while a verifier walks them (an edited brain_meta, a NULL where a
# signed field belongs, text that is not UTF-8): reported as a failure, never an internal error
DAMAGED = (AimosError, EngineError, KeyError, AttributeError, TypeError, ValueError, RecursionError)


def _damage_detail(conn: Connection, exc: BaseException) -> str:
    """What stopped a walk: the damaged cells when it was text no read can decode (named by the
    store), an aimos error's own words, else the exception's name."""
    if unreadable_text(exc):
        located = damaged_text_error(conn)
        if located.where:
            return located.message
    return exc.message if isinstance(exc, AimosError) else type(exc).__name__


def _unwalkable(reason: str, exc: BaseException, conn: Connection) -> dict[str, Any]:
    return {
        "signer_agent_id": "-",
        "signer_valid_from": 0,
        "events": 0,
        "ok": False,
        "reason": reason,
        "detail": _damage_detail(conn, exc),
    }


def _guarded_brain_state(
    conn: Connection, anchor: dict[str, Any] | None, kept: dict[str, Any] | None
) -> dict[str, Any]:
    try:
        return verify_brain_state(conn, anchor, kept)
    except DAMAGED as exc:
        failure = {
            "check": "brain",
            "reason": "brain_check_failed",
            "detail": _damage_detail(conn, exc),
            "table": None,
        }
        return {
            "ok": False,
            "failures": [failure],
            "seals": 0,
            "head_seal": None,
            "rows": 0,
            "anchored_seal": anchor,
        }


class PortableRun:
    """The portable verifier over an exported bundle. A whole brain's is verified in a child forked
    now, on the other core, while this process goes on (the brain checks) - where forking is
    sound: Linux, more than one core, no other thread in this process. The child is handed the
    bundle by the fork itself (nothing copied or re-read) and sends back only its counts (told to
    ``count`` by a thread here as they come) and the verdict; elsewhere, or when the child dies or
    sends nothing readable, the bundle is verified here when the verdict is asked for. The verdict
    is the same either way: the same function over the same bundle."""

    def __init__(
        self,
        bundle: dict[str, Any],
        fingerprint: str,
        memory_id: str | None,
        *,
        alone: bool,
        count: Count | None,
    ) -> None:
        self._args = (bundle, fingerprint, memory_id)
        self._count = count
        self._found: list[Any] = []
        self._reader: threading.Thread | None = None
        child = _fork_verifier(bundle, fingerprint, memory_id) if alone and _can_fork() else None
        if child is not None:
            self._reader = threading.Thread(
                target=lambda: self._found.append(_collect(*child, count)), name="aimos-portable", daemon=True
            )
            self._reader.start()

    def verdict(self) -> Any:
        from aimos.verify.cognitive import verify_cognitive_bundle

        if self._reader is not None:
            self._reader.join()
            self._reader = None
            if self._found and self._found[0] is not None:
                return self._found[0]
        bundle, fingerprint, memory_id = self._args
        return verify_cognitive_bundle(
            bundle, expected_master_fingerprint=fingerprint, memory_id=memory_id, progress=self._count
        )


def _can_fork() -> bool:
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


def _fork_verifier(bundle: dict[str, Any], fingerprint: str, memory_id: str | None) -> tuple[int, int] | None:
    """Fork a child that verifies ``bundle`` and writes ("count", done, total) messages, then
    ("verdict", verdict), to a pipe: (its pid, the pipe's reading end), or None when no child."""
    from aimos.verify.cognitive import verify_cognitive_bundle

    read_fd, write_fd = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is left for the child to write again
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child: verify, send, and leave at once (no exit handlers, no flushing)
        # no cycle collection: it would walk (and so copy) every page of the parent's heap it
        # shares, for a process that lives only as long as one verification
        gc.disable()
        try:
            os.close(read_fd)
            with os.fdopen(write_fd, "wb") as pipe:

                def tell(done: int, total: int) -> None:
                    pickle.dump(("count", done, total), pipe)
                    pipe.flush()

                verdict = verify_cognitive_bundle(
                    bundle,
                    expected_master_fingerprint=fingerprint,
                    memory_id=memory_id,
                    progress=_every(tell),
                )
                pickle.dump(("verdict", verdict), pipe)
        finally:
            os._exit(0)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int, count: Count | None) -> Any:
    """The forked verifier's verdict (its counts told to ``count`` as they come), or None when it
    sent none; the child is reaped either way."""
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            while True:
                message = pickle.load(pipe)  # noqa: S301 (our own forked child's, over its pipe)
                if message[0] == "verdict":
                    return message[1]
                if count is not None:
                    count(message[1], message[2])
    except (EOFError, OSError, pickle.UnpicklingError, IndexError, TypeError):
        return None
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def verify_everything(
    conn: Connection,
    expected_master_fingerprint: str,
    memory_id: str | None = None,
    *,
    progress: Callable[[int, str], None] | None = None,
    count: Count | None = None,
    vectors: str | None = None,
) -> dict[str, Any]:
    """Both verifiers over the brain (or one memory) and their parity, as one report.

    The in-database verifier runs here; the portable one gets the exported cognitive bundle and
    the trust anchor from outside the data. Parity: the same memories with the same (ok, class,
    chain length, signatures), and equal corpus roots when both verdicts are valid (a reason's
    wording may differ between the two under tampering, and the reason is part of the root).
    ``progress(done, phase)`` is told as each of the VERIFY_PHASES starts and (done = 5) at the end;
    ``count(done, total)``, the memories the current phase has checked, every COUNT_EVERY of them
    (the vectors recomputed: each batch).

    A whole brain's vectors are always checked for their form (in the brain checks); ``vectors``
    ("sample" or "all") also recomputes some or all of them by the model, after the snapshot (each
    vector is read with its memory's text in one statement), when the model is available here.
    """
    # both verifiers meet most signatures more than once (an event in its chain and again in the
    # disclosure check, then in the bundle): each distinct valid one goes to libsodium once
    with remembering(0 if memory_id else WHOLE_BRAIN_SIGNATURES):
        return _verify_everything(
            conn, expected_master_fingerprint, memory_id, progress, count, None if memory_id else vectors
        )


def _recompute_vectors(conn: Connection, brain: dict[str, Any], how: str, count: Count | None) -> None:
    """The brain checks' report extended by the recompute of its vectors (meaning/index)."""
    from aimos.meaning.index import recompute_failures

    started = time.perf_counter()
    try:
        failures, told = recompute_failures(conn, how, count)
    except DAMAGED as exc:
        failures = [
            {
                "check": "vectors",
                "reason": "vector_check_failed",
                "detail": _damage_detail(conn, exc),
                "table": "memory_vectors",
            }
        ]
        told = {"recompute": how, "recomputed": 0, "skipped": None}
    brain.setdefault("vectors", {}).update(told)
    brain.setdefault("seconds", {})["recompute"] = round(time.perf_counter() - started, 3)
    brain["failures"] = [*brain["failures"], *failures]
    brain["ok"] = bool(brain["ok"] and not failures)


COUNT_EVERY = 500  # memories between two counts told
FORK_FROM = 2_000  # memories: a smaller brain's portable verification costs less than a fork


def _every(count: Count | None) -> Count | None:
    """``count``, told only at every COUNT_EVERY-th item and at the last."""
    if count is None:
        return None

    def told(done: int, total: int) -> None:
        if done % COUNT_EVERY == 0 or done >= total:
            count(done, total)

    return told


def _verify_everything(
    conn: Connection,
    expected_master_fingerprint: str,
    memory_id: str | None,
    progress: Callable[[int, str], None] | None,
    each: Count | None,
    vectors: str | None,
) -> dict[str, Any]:
    tell = progress or (lambda _done, _phase: None)
    count = _every(each)
    from aimos.store.freshness import anchor_for, kept_anchor_for
    from aimos.verify.cognitive import CognitiveVerdict

    anchor = None if memory_id else anchor_for(conn)  # before the snapshot (see anchor_for)
    kept = None if memory_id else kept_anchor_for(conn)
    bundle: dict[str, Any] | None = None
    evidence: list[dict[str, Any]] = []  # the bundle but for the verifier's records, once read
    portable: PortableRun | None = None

    def read_evidence() -> None:  # while the signatures are checked on the other threads
        try:
            evidence.append(cognitive_evidence(conn, memory_id))
        except DAMAGED:
            pass

    # one read snapshot for both: a save landing between them must not look like a disagreement
    with read_snapshot(conn):
        tell(0, VERIFY_PHASES[0])
        try:
            report = verify_brain(conn, memory_id, count=count, meanwhile=read_evidence)
        except DAMAGED as exc:  # data too damaged to walk: the seal checks name what
            report = Report([], [_unwalkable("in_database_verifier_failed", exc, conn)])
        tell(1, VERIFY_PHASES[1])
        if evidence:
            bundle = with_sql_records(evidence[0], report)
        tell(2, VERIFY_PHASES[2])
        if bundle is not None:  # on the other core when it can, while the brain checks run here
            alone = memory_id is None and len(bundle["memories"]) >= FORK_FROM
            portable = PortableRun(bundle, expected_master_fingerprint, memory_id, alone=alone, count=count)
        brain = None if memory_id else _guarded_brain_state(conn, anchor, kept)
    verdict = portable.verdict() if portable is not None else None
    if verdict is None:
        verdict = CognitiveVerdict("invalid", "cognitive_export_failed")
    tell(3, VERIFY_PHASES[3])
    if brain is not None and vectors is not None:  # each batch told: a vector takes ~25 ms
        _recompute_vectors(conn, brain, vectors, each)
    tell(4, VERIFY_PHASES[4])
    in_db = {r.memory_id: r for r in report.records}
    mismatches = []
    for rec in verdict.records:
        mine = in_db.get(rec["memory_id"])
        theirs = (rec["ok"], rec["certification_status"], rec["chain_length"], rec["sigs_verified"])
        ours = (mine.ok, mine.certification_status, mine.chain_length, mine.sigs_verified) if mine else None
        if ours != theirs:
            mismatches.append(rec["memory_id"])
    parity = not mismatches and len(verdict.records) == len(report.records)
    if report.ok and verdict.verdict == "valid":
        parity = parity and verdict.corpus_proof_root == report.corpus_proof_root
    tell(5, "done")
    return {
        "ok": bool(report.ok and verdict.verdict == "valid" and parity and (brain is None or brain["ok"])),
        "brain": brain,
        "in_database": {
            "ok": report.ok,
            "corpus_proof_root": report.corpus_proof_root,
            "memories": len(report.records),
            "failures": [r.__dict__ for r in report.records if not r.ok],
            "event_chains": report.event_chains,
        },
        "portable": {
            "verdict": verdict.verdict,
            "primary_reason": verdict.primary_reason,
            "detail": verdict.detail,
            "corpus_proof_root": verdict.corpus_proof_root,
            "memories": len(verdict.records),
        },
        "parity": parity,
        "parity_mismatches": mismatches,
    }
