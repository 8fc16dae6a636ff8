"""An agent probing for a memory above its grant by an id prefix learns no full id.

`lowbie` may see clearance 2; the memory is at clearance 8. Given the memory's prefix, every
command lowbie signs refuses it without naming the memory's full id on stdout or stderr (the
refusal names the prefix it was given, or nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import Result, run_aimos

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def above_lowbie(installed: Path) -> str:
    """A memory at clearance 8 and the agent lowbie, whose grant stops at clearance 2."""
    run_aimos("agent", "enroll", "lowbie", "--clearance", "2").ok()
    memory_id = run_aimos("save", "The safe's combination is kept with the notary", "--clearance", "8").ok()
    return memory_id.out.strip()


def assert_no_full_id(result: Result, memory_id: str, code: int) -> None:
    assert result.code == code, result.describe()
    assert memory_id not in result.both, f"the full id leaked\n{result.describe()}"
    assert memory_id[9:] not in result.both, f"its tail leaked\n{result.describe()}"
    assert "Traceback" not in result.both


@pytest.mark.parametrize("flag", ["--as", "--agent"])
def test_correct_by_prefix_treats_the_memory_as_not_found(above_lowbie: str, flag: str) -> None:
    prefix = above_lowbie[:8]
    refused = run_aimos("correct", prefix, "rewritten by lowbie", flag, "lowbie")
    assert_no_full_id(refused, above_lowbie, 3)
    assert f"no memory with id {prefix}" in refused.err, refused.describe()
    # the owner's own agent still finds it by the same prefix
    assert run_aimos("correct", prefix, "The combination is with the notary in town").ok()


def test_label_by_prefix_names_no_full_id(above_lowbie: str) -> None:
    refused = run_aimos("label", above_lowbie[:8], "dispute", "--reason", "probing", "--as", "lowbie")
    assert refused.code != 0
    assert_no_full_id(refused, above_lowbie, refused.code)


def test_feedback_by_prefix_names_no_full_id(above_lowbie: str) -> None:
    for outcome in ("--good", "--bad"):
        refused = run_aimos("feedback", above_lowbie[:8], outcome, "--as", "lowbie")
        assert_no_full_id(refused, above_lowbie, 3)


def test_a_show_request_by_prefix_names_only_the_prefix(above_lowbie: str) -> None:
    """The signed show (the TUI's and MCP's path; MCP itself takes only whole ids) refuses a
    memory above the grant naming the id as it was asked for, and as it refuses an id that does
    not exist (issue 35, item 13: not even its existence is told)."""
    from aimos.actions.memory import show
    from aimos.actions.session import open_brain
    from aimos.errors import MemoryNotFoundError

    absent = "0000" + above_lowbie[4:8]
    with open_brain(write=True) as brain:
        with pytest.raises(MemoryNotFoundError) as refused:
            show(brain, "lowbie", above_lowbie[:8])
        with pytest.raises(MemoryNotFoundError) as missing:
            show(brain, "lowbie", absent)
    text = f"{refused.value.message} {refused.value.hint}"
    assert above_lowbie not in text and above_lowbie[:8] in text, text
    assert text.replace(above_lowbie[:8], "ID") == f"{missing.value.message} {missing.value.hint}".replace(
        absent, "ID"
    )
