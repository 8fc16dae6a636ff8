"""Both verifiers over one read snapshot, and their parity: the in-database verifier's report,
the cognitive bundle exported beside it, the portable verifier's verdict on that bundle, and
whether the two agree (`aimos verify`, the nightly dream, a restore and the TUI's verify)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from aimos.crypto.ed25519 import WHOLE_BRAIN_SIGNATURES, remembering
from aimos.errors import AimosError
from aimos.learning.export import export_cognitive
from aimos.learning.verifier import Report, verify_brain, verify_brain_state
from aimos.store.connection import damaged_text_error, unreadable_text

VERIFY_PHASES = ("in-database verifier", "cognitive export", "portable verifier", "parity")
# what damaged bytes can raise while a verifier walks them (an edited brain_meta, a NULL where a
# signed field belongs, text that is not UTF-8): reported as a failure, never an internal error
DAMAGED = (AimosError, apsw.Error, KeyError, AttributeError, TypeError, ValueError, RecursionError)


def _damage_detail(conn: apsw.Connection, exc: BaseException) -> str:
    """What stopped a walk: the damaged cells when it was text no read can decode (named by the
    store), an aimos error's own words, else the exception's name."""
    if unreadable_text(exc):
        located = damaged_text_error(conn)
        if located.where:
            return located.message
    return exc.message if isinstance(exc, AimosError) else type(exc).__name__


def _unwalkable(reason: str, exc: BaseException, conn: apsw.Connection) -> dict[str, Any]:
    return {
        "signer_agent_id": "-",
        "signer_valid_from": 0,
        "events": 0,
        "ok": False,
        "reason": reason,
        "detail": _damage_detail(conn, exc),
    }


def _guarded_brain_state(
    conn: apsw.Connection, anchor: dict[str, Any] | None, kept: dict[str, Any] | None
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


def verify_everything(
    conn: apsw.Connection,
    expected_master_fingerprint: str,
    memory_id: str | None = None,
    *,
    progress: Callable[[int, str], None] | None = None,
) -> dict[str, Any]:
    """Both verifiers over the brain (or one memory) and their parity, as one report.

    The in-database verifier runs here; the portable one gets the exported cognitive bundle and
    the trust anchor from outside the data. Parity: the same memories with the same (ok, class,
    chain length, signatures), and equal corpus roots when both verdicts are valid (a reason's
    wording may differ between the two under tampering, and the reason is part of the root).
    ``progress(done, phase)`` is told as each of the VERIFY_PHASES starts and (done = 4) at the end.
    """
    # both verifiers meet most signatures more than once (an event in its chain and again in the
    # disclosure check, then in the bundle): each distinct valid one goes to libsodium once
    with remembering(0 if memory_id else WHOLE_BRAIN_SIGNATURES):
        return _verify_everything(conn, expected_master_fingerprint, memory_id, progress)


def _verify_everything(
    conn: apsw.Connection,
    expected_master_fingerprint: str,
    memory_id: str | None,
    progress: Callable[[int, str], None] | None,
) -> dict[str, Any]:
    tell = progress or (lambda _done, _phase: None)
    from aimos.store.freshness import anchor_for, kept_anchor_for
    from aimos.verify.cognitive import CognitiveVerdict, verify_cognitive_bundle

    anchor = None if memory_id else anchor_for(conn)  # before the snapshot (see anchor_for)
    kept = None if memory_id else kept_anchor_for(conn)
    # one read snapshot for both: a save landing between them must not look like a disagreement
    own_snapshot = not conn.in_transaction
    if own_snapshot:
        conn.execute("BEGIN DEFERRED")
    bundle: dict[str, Any] | None = None
    try:
        tell(0, VERIFY_PHASES[0])
        brain = None if memory_id else _guarded_brain_state(conn, anchor, kept)
        try:
            report = verify_brain(conn, memory_id)
        except DAMAGED as exc:  # data too damaged to walk: the seal checks above name what
            report = Report([], [_unwalkable("in_database_verifier_failed", exc, conn)])
        tell(1, VERIFY_PHASES[1])
        try:
            bundle = export_cognitive(conn, memory_id=memory_id, report=report)
        except DAMAGED:
            bundle = None
    finally:
        if own_snapshot:
            conn.execute("COMMIT")
    tell(2, VERIFY_PHASES[2])
    if bundle is None:
        portable = CognitiveVerdict("invalid", "cognitive_export_failed")
    else:
        portable = verify_cognitive_bundle(
            bundle, expected_master_fingerprint=expected_master_fingerprint, memory_id=memory_id
        )
    tell(3, VERIFY_PHASES[3])
    in_db = {r.memory_id: r for r in report.records}
    mismatches = []
    for rec in portable.records:
        mine = in_db.get(rec["memory_id"])
        theirs = (rec["ok"], rec["certification_status"], rec["chain_length"], rec["sigs_verified"])
        ours = (mine.ok, mine.certification_status, mine.chain_length, mine.sigs_verified) if mine else None
        if ours != theirs:
            mismatches.append(rec["memory_id"])
    parity = not mismatches and len(portable.records) == len(report.records)
    if report.ok and portable.verdict == "valid":
        parity = parity and portable.corpus_proof_root == report.corpus_proof_root
    tell(4, "done")
    return {
        "ok": bool(report.ok and portable.verdict == "valid" and parity and (brain is None or brain["ok"])),
        "brain": brain,
        "in_database": {
            "ok": report.ok,
            "corpus_proof_root": report.corpus_proof_root,
            "memories": len(report.records),
            "failures": [r.__dict__ for r in report.records if not r.ok],
            "event_chains": report.event_chains,
        },
        "portable": {
            "verdict": portable.verdict,
            "primary_reason": portable.primary_reason,
            "detail": portable.detail,
            "corpus_proof_root": portable.corpus_proof_root,
            "memories": len(portable.records),
        },
        "parity": parity,
        "parity_mismatches": mismatches,
    }
