"""Attack: a forged creation time (issue 38, item 8).

A memory imported from another brain's export keeps its creation time as ``originated_at`` in its
signed save body. A hostile agent with a valid key signs a save whose creation time is after the
save (or is no time): the save path refuses it, whatever front end sent it, and nothing is
written. An attacker with the brain file edits the creation time of an imported memory: the
signed save no longer matches, so `aimos show` refuses the memory (exit 4) and `aimos verify`
fails; the forged date is never shown as the memory's."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.attacks import VERIFICATION_FAILED, assert_refused_closed, drop_guards, run_sql
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(120)

DAY = 86_400


def _signed_save(brain: Any, originated_at: object) -> Any:
    from aimos.actions.bodies import build_save_body
    from aimos.actions.memory import save_and_classify
    from aimos.identity.requests import sign_request
    from aimos.vocabulary import PATH_SAVE

    body = build_save_body(company_id="personal", value="The well was dug in 1890.", source="evil")
    body["originated_at"] = originated_at
    t = int(time.time())
    return save_and_classify(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, t), t)


def _count(brain: Any, table: str) -> int:
    return int(brain.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.mark.parametrize(
    ("forged", "words"),
    [
        ("future", "is in the future (after its save"),
        (True, "not a whole number of seconds (a bool)"),
        ("2020-01-01", "not a whole number of seconds (a str)"),
        (-1, "-1 is not a time between 1970 and 9999"),
        (253402300800, "is not a time between 1970 and 9999"),
    ],
)
def test_a_hostile_agent_cannot_sign_a_creation_time_that_is_no_past_time(
    brain: Any, forged: object, words: str
) -> None:
    from aimos.errors import UsageError

    before = {t: _count(brain, t) for t in ("memories", "memory_provenance", "events")}
    value = int(time.time()) + 10 * DAY if forged == "future" else forged
    with pytest.raises(UsageError) as refused:
        _signed_save(brain, value)
    assert words in refused.value.message
    assert {t: _count(brain, t) for t in before} == before


def test_a_creation_time_in_the_past_is_signed_with_the_save(brain: Any) -> None:
    saved = _signed_save(brain, 1_000_000_000)
    body = brain.conn.execute(
        "SELECT body_json FROM memory_provenance WHERE memory_id = ?", (saved.memory_id,)
    ).fetchone()[0]
    assert json.loads(body)["originated_at"] == 1_000_000_000  # in the signed, hashed body


def test_a_creation_time_edited_in_the_brain_file_is_refused(installed: Path, tmp_path: Path) -> None:
    export = tmp_path / "old.jsonl"
    export.write_text(
        json.dumps({"format": "aimos-text-export/v1"})
        + "\n"
        + json.dumps(
            {"text": "The orchard was planted by my grandfather.", "created_at": "2023-03-01T09:30:00Z"}
        )
        + "\n"
    )
    run_aimos("import", str(export)).ok()
    [memory] = run_aimos("list", "--json").json()["memories"]
    target = memory["memory_id"]
    assert "2023-03-01 09:30:00Z" in run_aimos("show", target).ok().out
    drop_guards(installed, "memory_provenance")
    run_sql(
        installed,
        "UPDATE memory_provenance SET body_json = json_set(body_json, '$.originated_at', 946684800)"
        f" WHERE memory_id = '{target}'",
    )
    assert_refused_closed(
        run_aimos("show", target),
        VERIFICATION_FAILED,
        f"memory {target} DOES NOT VERIFY",
        never=("2000-01-01", "orchard"),
    )
    assert run_aimos("verify").code == VERIFICATION_FAILED
