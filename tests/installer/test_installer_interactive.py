"""`aimos install` with no --yes on a real pseudo-terminal: every prompt answered as a person would,
a bad answer refused (saying what is wrong and how to fix it) and asked again, the passphrase typed
twice at getpass prompts (AIMOS_PASSPHRASE_FILE unset, so the TTY is the source)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from installer_support import BRAIN, CLI_LOG, PASSPHRASE_ENV, PtySession, query, scalar, tree

from aimos.vocabulary import DEFAULT_VALIDITY_DAYS

pytestmark = pytest.mark.timeout(120)

ARGS = ["install", "--keystore", "file", "--service", "none"]
TYPED_PASSPHRASE = "a passphrase typed at the terminal"


def terminal_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PASSPHRASE_ENV}
    env["AIMOS_HOME"] = str(home)
    env.pop("AIMOS_KEYSTORE", None)
    return env


def test_interactive_install_on_a_terminal(aimos_home: Path) -> None:
    session = PtySession(ARGS, terminal_env(aimos_home))
    try:
        session.expect(re.escape("Brain name [personal]:"))
        session.send("lab")
        session.expect(re.escape("Company [personal]:"))
        session.send("acme")
        session.expect(re.escape("Agent id for this CLI [cli]:"))
        session.send("bad id!")
        refusal = session.expect(re.escape("Agent id for this CLI [cli]:"))
        assert "agent id given is not valid" in refusal and "letters, digits" in refusal, refusal
        session.send("alice")
        session.expect(re.escape("Model provider (optional):"))
        session.send("anthropic")
        session.expect(re.escape("Model identifier (optional):"))
        session.send("claude-sonnet-4")
        session.expect(re.escape(f"Agent validity in days (1-365) [{DEFAULT_VALIDITY_DAYS}]:"))
        session.send("14")
        session.expect(re.escape("Clearance ceiling (0-10) [10]:"))
        session.send("11")
        refusal = session.expect(re.escape("Clearance ceiling (0-10) [10]:"))
        assert "clearance 11 is out of range" in refusal and "0 to 10" in refusal, refusal
        session.send("7")
        session.expect(re.escape("Data-class ceiling (public, internal, confidential, restricted)"))
        session.send("internal")
        session.expect(re.escape("Read-only agent (may recall, may not save)? [y/N]:"))
        session.send("n")
        session.expect(re.escape("Master passphrase (choose one):"))
        session.send(TYPED_PASSPHRASE)
        session.expect(re.escape("Repeat the master passphrase:"))
        session.send(TYPED_PASSPHRASE)
        session.expect(r"master fingerprint: [0-9a-f]{64}", timeout=60)
        code = session.wait()
    finally:
        session.close()
    assert code == 0, session.buffer
    assert "Traceback" not in session.buffer
    assert TYPED_PASSPHRASE not in session.buffer, "the passphrase was echoed to the terminal"

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

    # the typed passphrase is the master's: it unlocks the master for the next enrolment
    from aimos.identity.epochs import unlock_master
    from aimos.identity.keystore import open_keystore
    from aimos.store.connection import open_reader

    conn = open_reader(home / BRAIN)
    try:
        master = unlock_master(conn, open_keystore("file", receipt["brain"]["brain_id"]), TYPED_PASSPHRASE)
    finally:
        conn.close()
    assert master.fingerprint == receipt["master_fingerprint"]


def test_interactive_passphrases_that_differ(aimos_home: Path) -> None:
    session = PtySession(ARGS, terminal_env(aimos_home))
    try:
        for label in (
            "Brain name",
            "Company",
            "Agent id for this CLI",
            "Model provider (optional)",
            "Model identifier (optional)",
            "Agent validity in days",
            "Clearance ceiling",
            "Data-class ceiling",
            "Read-only agent",
        ):
            session.expect(re.escape(label))
            session.send("")  # Enter: keep the default
        session.expect(re.escape("Master passphrase (choose one):"))
        session.send(TYPED_PASSPHRASE)
        session.expect(re.escape("Repeat the master passphrase:"))
        session.send(TYPED_PASSPHRASE + " but different")
        code = session.wait()
    finally:
        session.close()
    assert code == 6, session.buffer
    assert "Traceback" not in session.buffer
    assert "the two passphrases differ" in session.buffer and "same passphrase twice" in session.buffer
    assert not (aimos_home / BRAIN).exists()
    assert tree(aimos_home, ignore=CLI_LOG) == {}, sorted(tree(aimos_home, ignore=CLI_LOG))
