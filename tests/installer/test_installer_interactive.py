"""`aimos install` with no --yes on a real pseudo-terminal: a person is asked only what a person
needs (the brain's name; the rest takes its flag or default and is said once), a bad answer is
refused (saying what is wrong and how to fix it) and asked again, and the passphrase is typed
at getpass prompts (AIMOS_PASSPHRASE_FILE unset, so the TTY is the source): a slip (too short,
or two that differ) is asked again in place, three slips end the install having changed nothing."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from support.installer import BRAIN, CLI_LOG, PASSPHRASE_ENV, PtySession, query, scalar, tree

pytestmark = pytest.mark.timeout(120)

ARGS = ["install", "--keystore", "file", "--service", "none"]
TYPED_PASSPHRASE = "a passphrase typed at the terminal"
SHORT = "abc12"  # shorter than 8 characters
# what the interview asked before issue 38: none of it is a person's question
NOT_ASKED = (
    "Company",
    "Agent id",
    "Model provider",
    "Model identifier",
    "Agent validity",
    "Clearance ceiling",
    "Data-class ceiling",
    "Read-only agent",
)
BRAIN_NAME = re.escape("Brain name (what this brain is for, e.g. personal or work)") + r" \[\w*\]:"
FIRST = re.escape("Master passphrase (choose one):")
REPEAT = re.escape("Repeat the master passphrase:")


def terminal_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PASSPHRASE_ENV}
    env["AIMOS_HOME"] = str(home)
    env.pop("AIMOS_KEYSTORE", None)
    return env


def unlocks(home: Path, passphrase: str) -> bool:
    """Whether ``passphrase`` unlocks the installed brain's master (file keystore)."""
    from aimos.errors import PassphraseError
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import unlock_master
    from aimos.store.connection import open_reader

    brain_id = scalar(home, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
    conn = open_reader(home / BRAIN)
    try:
        unlock_master(conn, open_keystore("file", brain_id), passphrase)
    except PassphraseError:
        return False
    finally:
        conn.close()
    return True


def answer_brain_name(session: PtySession, name: str = "") -> str:
    """Answer the one question; return what the terminal showed before the passphrase prompt."""
    session.expect(BRAIN_NAME)
    session.send(name)
    return session.expect(FIRST)


def test_interactive_install_asks_only_what_a_person_needs(aimos_home: Path) -> None:
    """Item 3: the brain's name is asked; company, agent, model, validity, clearance and data class
    take their flags (or defaults) without a question, and are said once."""
    flags = [
        "--company", "acme", "--agent-id", "alice", "--model-provider", "anthropic",
        "--model", "claude-sonnet-4", "--validity-days", "14", "--clearance", "7",
        "--data-class", "internal",
    ]  # fmt: skip
    session = PtySession([*ARGS, *flags], terminal_env(aimos_home))
    try:
        session.expect(BRAIN_NAME)
        session.send("my lab!")
        refusal = session.expect(BRAIN_NAME)
        assert "invalid brain name" in refusal and "letters, digits" in refusal, refusal
        session.send("lab")
        between = session.expect(FIRST)
        assert (
            "The rest keeps its setting: company acme, agent alice (valid 14 days, clearance <= 7, "
            "data class <= internal). `aimos install --help` lists the flags that change them."
        ) in " ".join(between.split()), between
        assert "]:" not in between and "?" not in between, f"another question was asked: {between}"
        code = session.choose_passphrase(TYPED_PASSPHRASE)
    finally:
        session.close()
    assert code == 0, session.buffer
    assert "Traceback" not in session.buffer
    assert TYPED_PASSPHRASE not in session.buffer, "the passphrase was echoed to the terminal"
    for label in NOT_ASKED:  # a prompt starts its line
        assert not re.search(rf"^{re.escape(label)}", session.buffer, re.MULTILINE), session.buffer

    home = aimos_home
    grants = query(
        home,
        "SELECT subject_agent_id, clearance_ceiling, data_class_ceiling, write_allowed FROM recall_grants"
        " WHERE subject_agent_id != 'housekeeper'",
    )
    assert grants == [
        {
            "subject_agent_id": "alice",
            "clearance_ceiling": 7,
            "data_class_ceiling": "internal",
            "write_allowed": 1,
        }
    ]
    epoch = query(home, "SELECT valid_from, valid_until FROM identity_epochs WHERE agent_id = 'alice'")
    assert len(epoch) == 1 and epoch[0]["valid_until"] - epoch[0]["valid_from"] == 14 * 86400, epoch
    assert scalar(home, "SELECT value FROM brain_meta WHERE key = 'brain_name'") == "lab"
    assert scalar(home, "SELECT value FROM brain_meta WHERE key = 'company_id'") == "acme"
    assert not query(home, "SELECT agent_id FROM identity_epochs WHERE agent_id = 'cli'")
    receipt = json.loads((home / "state" / "onboarding" / "first-launch-receipt.json").read_text())
    assert (receipt["agent"]["model_provider"], receipt["agent"]["model"]) == ("anthropic", "claude-sonnet-4")
    assert unlocks(home, TYPED_PASSPHRASE)  # the typed passphrase is the master's


def test_a_short_passphrase_is_said_at_once_and_asked_again(aimos_home: Path) -> None:
    """Item 2: too short is said right after the first entry (no repeat asked) and asked again."""
    session = PtySession(ARGS, terminal_env(aimos_home))
    try:
        answer_brain_name(session)
        session.send(SHORT)
        said = session.expect(FIRST)
        assert "Repeat" not in said, f"a too-short passphrase was asked to be repeated: {said}"
        assert "The passphrase is shorter than 8 characters" in said and "(2 tries left)" in said, said
        code = session.choose_passphrase(TYPED_PASSPHRASE)
    finally:
        session.close()
    assert code == 0, session.buffer
    assert SHORT not in session.buffer and TYPED_PASSPHRASE not in session.buffer
    assert unlocks(aimos_home, TYPED_PASSPHRASE) and not unlocks(aimos_home, SHORT + "xyz")


def test_passphrases_that_differ_ask_for_both_again(aimos_home: Path) -> None:
    """Item 2: a mismatch asks for both entries again; the matching pair seals the master."""
    session = PtySession(ARGS, terminal_env(aimos_home))
    try:
        answer_brain_name(session)
        session.send(TYPED_PASSPHRASE)
        session.expect(REPEAT)
        session.send(TYPED_PASSPHRASE + " but different")
        said = session.expect(FIRST)
        assert "The two passphrases differ" in said and "(2 tries left)" in said, said
        second = "the second passphrase, typed twice"
        code = session.choose_passphrase(second)
    finally:
        session.close()
    assert code == 0, session.buffer
    assert TYPED_PASSPHRASE not in session.buffer and second not in session.buffer
    assert unlocks(aimos_home, second) and not unlocks(aimos_home, TYPED_PASSPHRASE)


def test_three_slips_end_the_install_and_change_nothing(aimos_home: Path) -> None:
    """Item 2: short, a mismatch, short again: a clear error (exit 6), no brain, no keys, no home."""
    session = PtySession(ARGS, terminal_env(aimos_home))
    try:
        answer_brain_name(session)
        session.send(SHORT)
        assert "(2 tries left)" in session.expect(FIRST)
        session.send(TYPED_PASSPHRASE)
        session.expect(REPEAT)
        session.send(TYPED_PASSPHRASE + " but different")
        assert "(1 try left)" in session.expect(FIRST)
        session.send(SHORT)
        code = session.wait()
    finally:
        session.close()
    assert code == 6, session.buffer
    assert "Traceback" not in session.buffer
    said = " ".join(session.buffer.split())
    assert (
        "error: no passphrase was chosen in 3 tries (the last: the passphrase is shorter than 8 "
        "characters)" in said
    ), session.buffer
    assert "hint: Nothing was changed." in said and "the same twice" in said, session.buffer
    assert said.count("Master passphrase (choose one):") == 3, session.buffer
    assert SHORT not in session.buffer and TYPED_PASSPHRASE not in session.buffer
    assert not (aimos_home / BRAIN).exists()
    assert tree(aimos_home, ignore=CLI_LOG) == {}, sorted(tree(aimos_home, ignore=CLI_LOG))


@pytest.mark.parametrize("bad", ["flag", "foreign file"])
def test_what_would_fail_later_is_refused_before_any_question(aimos_home: Path, bad: str) -> None:
    """Nothing fails after the questions: a bad flag (no longer asked, so never corrected at a
    prompt) or a file in the brain's place is refused first, and nothing is asked or changed."""
    args = [*ARGS, "--clearance", "11"] if bad == "flag" else ARGS
    if bad == "foreign file":  # a database of the person's own where the brain would go
        import apsw

        mine = apsw.Connection(str(aimos_home / BRAIN))
        mine.execute("CREATE TABLE notes (text); INSERT INTO notes VALUES ('mine')")
        mine.close()
    before = tree(aimos_home, ignore=CLI_LOG)
    session = PtySession(args, terminal_env(aimos_home))
    try:
        code = session.wait()
    finally:
        session.close()
    assert code == 2, session.buffer
    expected = "clearance 11 is out of range" if bad == "flag" else "is not an installed brain"
    assert expected in session.buffer and "hint:" in session.buffer, session.buffer
    assert "Brain name" not in session.buffer and "Master passphrase" not in session.buffer
    assert tree(aimos_home, ignore=CLI_LOG) == before
