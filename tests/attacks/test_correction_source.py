"""A correction's author and source are its signer's (issue 35, item 12).

Before, `aimos correct ID TEXT --as writer` kept the corrected memory's source: a correction written
by the agent `writer` said it came from the person's own `cli` (or the doctor's letter the person
named), so the detector and the person took the writer's words for the person's. Through the real
CLI on a real brain: the correction declares the writer's own source, keeps the memory's key, type,
scope and ceilings, and `--source` names another source when the writer has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(120)


def _shown(memory_id: str) -> dict[str, Any]:
    shown = run_aimos("show", memory_id, "--json").json()
    assert isinstance(shown, dict)
    return shown


def test_a_correction_by_another_agent_declares_that_agents_source(installed: Path) -> None:
    run_aimos("agent", "enroll", "writer").ok()
    letter = "the dentist appointment is on Tuesday at nine"
    old = (
        run_aimos(
            "save", letter, "--key", "health:dentist", "--type", "fact", "--source", "letter from Dr. Okafor"
        )
        .ok()
        .out.strip()
    )
    fixed = run_aimos("correct", old, "the dentist appointment is on Wednesday", "--as", "writer", "--json")
    new = fixed.json()["memory_id"]
    before, after = _shown(old), _shown(new)
    assert before["source"] == "letter from Dr. Okafor"
    assert after["source"] == "cli:writer", after  # not the letter's, not the person's cli
    assert (after["key"], after["memory_type"], after["scope"]) == ("health:dentist", "fact", "personal")
    assert after["clearance_level"] == before["clearance_level"]
    assert after["version"]["supersedes"] == old

    # the person's own correction says cli; a correction can name where it came from
    mine = run_aimos("correct", new, "the dentist appointment is on Thursday", "--json").json()["memory_id"]
    assert _shown(mine)["source"] == "cli"
    named = run_aimos(
        "correct",
        mine,
        "the dentist appointment is on Friday",
        "--source",
        "call from the clinic",
        "--as",
        "writer",
        "--json",
    ).json()["memory_id"]
    assert _shown(named)["source"] == "call from the clinic"


def test_a_save_by_another_agent_through_the_cli_declares_its_own_source(installed: Path) -> None:
    run_aimos("agent", "enroll", "writer").ok()
    theirs = run_aimos("save", "the spare key is in the shed", "--as", "writer").ok().out.strip()
    mine = run_aimos("save", "the spare key is under the flowerpot").ok().out.strip()
    assert _shown(theirs)["source"] == "cli:writer"
    assert _shown(mine)["source"] == "cli"
