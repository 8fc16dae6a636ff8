"""Attack: edit a memory's value in the brain file, then read it with `aimos show`.

Before: `aimos show ID` printed the edited value with exit 0 (the TUI's detail screen and
`aimos recall` already refused it). Now show verifies the memory's signed record in the brain
first (the in-database verifier on that memory, as the TUI does): a failure is exit 4, worded as
the TUI words it (``DOES NOT VERIFY: reason (detail)``), and nothing of the value is printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.attacks import VERIFICATION_FAILED, assert_refused_closed, drop_guards, run_sql, save
from support.cli import BRAIN, run_aimos, sqlite

from aimos.crypto.commitments import live_content_hash

pytestmark = pytest.mark.timeout(120)

ORIGINAL = "The heron colony nests by the east lake"
FORGED = "The heron colony nests by the west quarry"


def row(home: Path, memory_id: str) -> dict[str, Any]:
    proc = sqlite(home / BRAIN, f"SELECT * FROM memories WHERE memory_id = '{memory_id}'", "-json")
    assert proc.returncode == 0, proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)
    assert len(found) == 1
    return found[0]


def tui_verdict(memory_id: str) -> dict[str, Any]:
    """What the TUI's detail screen says about the memory (its own loader, on a reader)."""
    from aimos.store.connection import open_reader
    from aimos.tui.detail import load

    conn = open_reader()
    try:
        verdict: dict[str, Any] = load(conn, memory_id)["verification"]
        return verdict
    finally:
        conn.close()


def test_an_intact_memory_is_shown_and_says_it_verifies(installed: Path) -> None:
    target = save(ORIGINAL)
    shown = run_aimos("show", target).ok()
    assert shown.out.startswith(ORIGINAL + "\n"), shown.describe()
    assert "verifies            yes: no outcomes yet" in shown.out, shown.describe()
    detail = run_aimos("show", target, "--json").json()
    assert detail["value"] == ORIGINAL
    assert detail["verification"] == {
        "ok": True,
        "status": "default_empty_chain",
        "chain_length": 0,
        "sigs_verified": 0,
    }


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_an_edited_value_is_refused_with_exit_4_and_the_tui_s_reason(installed: Path, json_out: bool) -> None:
    target = save(ORIGINAL)
    drop_guards(installed, "memories")
    run_sql(installed, f"UPDATE memories SET value = '{FORGED}' WHERE memory_id = '{target}'")
    verdict = tui_verdict(target)
    assert verdict["ok"] is False
    assert (verdict["reason"], verdict["detail"]) == ("save_record_invalid", "live_content_hash_mismatch")

    result = run_aimos("show", target, *(["--json"] if json_out else []))
    assert_refused_closed(
        result,
        VERIFICATION_FAILED,
        f"memory {target} DOES NOT VERIFY: save_record_invalid (live_content_hash_mismatch)",
        never=("west quarry", "east lake"),
    )
    assert "restore the brain from a backup" in result.err


def test_an_edit_with_a_recomputed_live_hash_is_still_refused(installed: Path) -> None:
    """The forger recomputes the row's live content hash: the signed save no longer matches."""
    target = save(ORIGINAL)
    forged = dict(row(installed, target), value=FORGED)
    new_hash = live_content_hash(forged).hex()
    drop_guards(installed, "memories")
    run_sql(
        installed,
        f"UPDATE memories SET value = '{FORGED}', live_content_hash = '{new_hash}'"
        f" WHERE memory_id = '{target}'",
    )
    verdict = tui_verdict(target)
    for args in (("show", target), ("show", target[:8], "--json")):
        assert_refused_closed(
            run_aimos(*args),
            VERIFICATION_FAILED,
            f"DOES NOT VERIFY: {verdict['reason']} ({verdict['detail']})",
            never=("west quarry", "east lake"),
        )
    assert verdict["detail"] == "live_row_differs_from_signed_save"


def test_a_weight_edited_in_the_file_is_refused(installed: Path) -> None:
    """No signed projection supports the edited weight: the memory's chain does not verify."""
    target = save(ORIGINAL)
    drop_guards(installed, "memories")
    run_sql(installed, f"UPDATE memories SET retrieval_weight_milli = 3000 WHERE memory_id = '{target}'")
    verdict = tui_verdict(target)
    assert verdict["ok"] is False
    assert_refused_closed(
        run_aimos("show", target),
        VERIFICATION_FAILED,
        f"DOES NOT VERIFY: {verdict['reason']}",
        never=("east lake",),
    )


def test_the_other_memories_are_still_shown(installed: Path) -> None:
    target = save(ORIGINAL)
    other = save("Herons eat fish and frogs")
    drop_guards(installed, "memories")
    run_sql(installed, f"UPDATE memories SET value = '{FORGED}' WHERE memory_id = '{target}'")
    assert run_aimos("show", other).ok().out.startswith("Herons eat fish and frogs\n")
