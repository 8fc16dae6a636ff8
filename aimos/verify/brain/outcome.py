"""The outcome of the brain's newest full verification, where every command can see it.

A full verification (both verifiers and the brain checks, `verify.brain.parity.verify_everything`,
over the whole brain against its anchored master: the nightly job, `aimos verify` without
--memory, the TUI's verify) is the only check of what no request re-checks: the search indexes,
every row of every table, the whole seal chain, the schema (docs/verify.md). An
edit there (a memory's search-index row deleted: recall no longer finds it) is seen by nothing
else, so its outcome is kept outside the brain, in the state folder, as one small 0600 file named
by the outcome: ``verify-failed.json`` while the newest full verification failed, and every
command then ends with a one-line warning on stderr (cli/app.py looks for that one name, with one
stat and without opening the brain); ``verify-passed.json`` once one passes. Each names the
brain, when, which verification, and the failures' reason words (never a memory's text or id).

The nightly job's outcome is also signed into the ledger (its corpus proof root event, which says
whether the brain verified and why not); `aimos status` and `aimos doctor` show the newer of that
and the kept file. The files are a notice, not a proof: whoever can edit the brain can remove
them, but not the signed event, and the next nightly run writes them again.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aimos import paths
from aimos.vocabulary import CORPUS_ROOT_OPERATION, VERIFY_FAILED_FILE, VERIFY_PASSED_FILE

if TYPE_CHECKING:
    from aimos.store.connection import Connection

FAILED_FILE = VERIFY_FAILED_FILE
PASSED_FILE = VERIFY_PASSED_FILE
# which full verification it was, and how a person reads it
NIGHTLY, CLI, TUI = "nightly", "cli", "tui"
BY = {NIGHTLY: "the nightly verify", CLI: "`aimos verify`", TUI: "the TUI's verify"}
SHOWN_REASONS = 4
RECORD_BYTES = 4096  # a kept outcome is a few hundred bytes; never read more at a command's start
FIX = "run `aimos verify` to see what differs"


def failure_reasons(report: dict[str, Any]) -> list[str]:
    """The reason words of a full verification (``verify_everything``'s report), each once, in
    the order found: the brain checks' (with the table they name), the memories', the event
    chains', the portable verifier's, parity. Words and table names only: no text, no id."""
    found: list[Any] = []
    for failure in (report.get("brain") or {}).get("failures", []):
        table = failure.get("table")
        found.append(f"{failure['reason']} in {table}" if table else failure["reason"])
    in_db, portable = report["in_database"], report["portable"]
    found += [r["reason"] for r in in_db["failures"]]
    found += [c["reason"] for c in in_db["event_chains"] if not c["ok"]]
    if portable["verdict"] != "valid":
        found.append(portable["primary_reason"] or f"portable verifier {portable['verdict']}")
    if not report["parity"]:
        found.append("verifiers_disagree")
    return list(dict.fromkeys(str(word) for word in found if word))


def _path(name: str) -> Path:
    return paths.state_dir() / name


def record(brain_id: str | None, report: dict[str, Any], by: str, at: int | None = None) -> dict[str, Any]:
    """Keep a full verification's outcome: the file named by it written (0600), the other one
    removed. One that cannot be written is only missing (the nightly's is in the ledger too)."""
    ok = bool(report["ok"])
    entry = {
        "brain_id": brain_id,
        "at": int(time.time()) if at is None else at,
        "by": by,
        "ok": ok,
        "reasons": [] if ok else failure_reasons(report),
    }
    keep, drop = (PASSED_FILE, FAILED_FILE) if ok else (FAILED_FILE, PASSED_FILE)
    with contextlib.suppress(OSError):
        paths.write_private_file(_path(keep), json.dumps(entry, sort_keys=True).encode("utf-8"))
        _path(drop).unlink(missing_ok=True)
    return entry


def keep_outcome(
    conn: Connection, report: dict[str, Any], fingerprint: str, by: str
) -> dict[str, Any] | None:
    """``record`` a full verification of the live brain, when it was made against the master
    anchors.json holds for it: one against another fingerprint given by hand says nothing of the
    brain as this home anchors it (a mistyped one fails it). Returns the outcome kept, or None."""
    from aimos.identity.anchors import anchored_fingerprint, anchored_fingerprints
    from aimos.store.connection import EngineError
    from aimos.store.seals import brain_id_of

    try:
        brain_id = brain_id_of(conn)
    except EngineError:  # brain_meta too damaged to read: the verification said what it could
        brain_id = None
    anchored = {anchored_fingerprint(brain_id)} if brain_id else anchored_fingerprints()
    if fingerprint not in anchored:
        return None
    return record(brain_id, report, by)


def _read(path: Path) -> dict[str, Any] | None:
    """A kept outcome, or None when the file is missing, too long or not one."""
    try:
        with path.open("rb") as handle:
            data = handle.read(RECORD_BYTES + 1)
        entry = json.loads(data) if len(data) <= RECORD_BYTES else None
    except (OSError, ValueError):
        return None
    if not (
        isinstance(entry, dict)
        and type(entry.get("at")) is int
        and isinstance(entry.get("ok"), bool)
        and entry.get("by") in BY
        and isinstance(entry.get("reasons"), list)
        and all(isinstance(r, str) for r in entry["reasons"])
        and isinstance(entry.get("brain_id"), str | None)
    ):
        return None
    return entry


def kept(brain_id: str | None = None) -> dict[str, Any] | None:
    """The newest kept outcome (of this brain, when given), or None."""
    found = [
        entry
        for entry in (_read(_path(name)) for name in (FAILED_FILE, PASSED_FILE))
        if entry is not None and (brain_id is None or entry["brain_id"] in (None, brain_id))
    ]
    return max(found, key=lambda e: e["at"], default=None)


def reasons_text(reasons: list[str]) -> str:
    shown = ", ".join(reasons[:SHOWN_REASONS]) or "no reason recorded"
    return shown + (f" and {len(reasons) - SHOWN_REASONS} more" if len(reasons) > SHOWN_REASONS else "")


def _when(at: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def finding(outcome: dict[str, Any]) -> str:
    """What a failed outcome found, in words: who, when, why."""
    who, why = BY.get(outcome["by"], "a full verify"), reasons_text(outcome["reasons"])
    return f"{who} on {_when(outcome['at'])} found the brain does not verify ({why})"


def notice_line() -> str | None:
    """The warning every command ends with while the newest full verification failed; None
    (after one stat) when it did not. Read without opening the brain."""
    path = _path(FAILED_FILE)
    if not path.exists():
        return None
    entry = _read(path)
    if entry is None or entry["ok"]:
        return f"warning: {path} says the brain's newest full verify failed: {FIX}"
    return f"warning: {finding(entry)}: {FIX}"


# --- with the brain open: the nightly job's signed attestation ----------------------------------
def last_corpus_root(conn: Connection) -> dict[str, Any] | None:
    """The newest corpus proof root the housekeeper signed (nightly dream), or None; ``verified``
    and ``reasons`` are what that run found (an attestation from before the brain checks were
    signed into it says only what the two verifiers found)."""
    from aimos.crypto.canonical import json_loads
    from aimos.store.queries.verification import newest_event_of

    row = newest_event_of(conn, CORPUS_ROOT_OPERATION)
    if row is None:
        return None
    meta = json_loads(row["signed_body"]).get("metadata", {})
    verifiers_ok = bool(meta.get("in_database_ok")) and meta.get("portable_verdict") == "valid"
    verified = meta["verified"] if isinstance(meta.get("verified"), bool) else verifiers_ok
    reasons = meta.get("failure_reasons")
    if not isinstance(reasons, list):
        reasons = [] if verified else [str(meta.get("portable_primary_reason") or "the verifiers failed")]
    return {
        "event_id": row["event_id"],
        "computed_at": row["ts_signed"],
        "corpus_proof_root": meta.get("corpus_proof_root"),
        "memories": meta.get("memories"),
        "verified": verified,
        "reasons": [str(r) for r in reasons],
    }


def newest_outcome(conn: Connection, brain_id: str | None) -> dict[str, Any] | None:
    """The brain's newest full verification: the nightly job's signed attestation or the kept
    outcome, whichever is newer; None when none ran yet. {at, ok, by, reasons, signed}. At the same
    second the kept outcome counts: it is the newer or the same verification (the nightly job writes
    both at once; an `aimos verify` run in the nightly job's second follows it). Preferring the
    signed one protects nothing, since whoever can edit the file can also date it later."""
    found = []
    root = last_corpus_root(conn)
    if root is not None:
        found.append(
            {
                "at": int(root["computed_at"]),
                "ok": root["verified"],
                "by": NIGHTLY,
                "reasons": root["reasons"],
                "signed": True,
            }
        )
    outcome = kept(brain_id)
    if outcome is not None:
        found.append({**outcome, "signed": False})
    return max(found, key=lambda o: (o["at"], not o["signed"]), default=None)


def outcome_text(outcome: dict[str, Any]) -> str:
    """One line for `aimos status` and `aimos doctor`."""
    if not outcome["ok"]:
        return finding(outcome)
    return f"{BY.get(outcome['by'], 'a full verify')} on {_when(outcome['at'])} passed"
