"""Over MCP, as over the CLI (tests/epistemic/test_poison_labels_stay.py): an agent whose campaign
a person denied cannot clear its poison labels by saving the same answer once more."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import run_aimos, sqlite_value
from support.mcp import call, connect
from support.poison_campaign import AGAIN, DENIALS, POISON

pytestmark = pytest.mark.timeout(180)


def _labels(brain: Path, ids: list[str]) -> set[str]:
    marks = ",".join(f"'{i}'" for i in ids)
    return set(
        sqlite_value(brain, f"SELECT epistemic_label FROM memories WHERE memory_id IN ({marks})").split()
    )


@pytest.mark.parametrize("denial", DENIALS[:4])
def test_one_more_mcp_save_by_the_campaign_clears_nothing(installed: Path, denial: str) -> None:
    run_aimos("agent", "enroll", "evil").ok()
    brain = installed / "brain.sqlite3"

    async def campaign(texts: list[str]) -> list[str]:
        async with connect("evil") as session:
            return [str((await call(session, "save_memory", {"text": t}))["memory_id"]) for t in texts]

    poison = asyncio.run(campaign(POISON))
    run_aimos("save", denial).ok()
    assert _labels(brain, poison) == {"poison_likely"}
    again = asyncio.run(campaign([AGAIN]))
    assert _labels(brain, [*poison, *again]) == {"poison_likely"}
    cleared = sqlite_value(
        brain,
        "SELECT COUNT(*) FROM events WHERE operation = 'memory_epistemic_classified'"
        " AND json_extract(signed_body, '$.metadata.reason') LIKE 'cleared%'",
    )
    assert cleared == "0"
    shown = run_aimos("recall", "what is the capital of Freedonia", "--json").json()
    assert not {r["memory_id"] for r in shown["results"]} & {*poison, *again}
