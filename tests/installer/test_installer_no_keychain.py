"""`aimos install` on a machine with no desktop keychain (a server, WSL, a container): no D-Bus
session (DBUS_SESSION_BUS_ADDRESS and the keyring's variables unset, outside dbus-run-session's
bus), where `keyring` has no backend. The keystore is settled before any question: the file
keystore stands in, said in plain words (what protects the keys there is checked against the
files themselves), asked on a terminal (default yes) and used with --yes; an explicit
`--keystore os` is refused before anything is asked or read. With a keychain, nothing changes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.installer import (
    BRAIN,
    CLI_LOG,
    PASSPHRASE_ENV,
    PtySession,
    Reaper,
    b64u_decode,
    brain_id_of,
    query,
    require_keychain,
    run_aimos,
    scalar,
    tree,
)

pytestmark = pytest.mark.timeout(120)

NO_BUS = ("DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "PYTHON_KEYRING_BACKEND")
TYPED = "a passphrase typed at the terminal"
NOTICE = "No OS keychain can be used here"
ASK = re.escape("Keep this brain's keys in the file keystore? [Y/n]:")
BRAIN_NAME = re.escape("Brain name (what this brain is for")
FIRST = re.escape("Master passphrase (choose one):")


def without_bus(home: Path, *, passphrase_file: bool = False) -> dict[str, str]:
    """This environment with no D-Bus session and no keyring setting; AIMOS_HOME is ``home``.
    Checked: `keyring` has no backend here, and aimos's own keychain probe fails."""
    env = {k: v for k, v in os.environ.items() if k not in NO_BUS and k != "AIMOS_KEYSTORE"}
    if not passphrase_file:
        env.pop(PASSPHRASE_ENV, None)
    env["AIMOS_HOME"] = str(home)
    probe = (
        "import keyring\n"
        "from aimos.identity.keystore import os_keychain_problem\n"
        "backend = keyring.get_keyring()\n"
        "print(type(backend).__module__, os_keychain_problem() is not None)\n"
    )
    seen = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert seen.stdout.split() == ["keyring.backends.fail", "True"], seen.stdout + seen.stderr
    return env


def said(text: str) -> str:
    """Terminal text with its line breaks and runs of spaces made single spaces."""
    return " ".join(text.split())


def assert_explained(text: str) -> None:
    """The plain-words note on what the file keystore means for the keys."""
    text = said(text)
    assert NOTICE in text, text
    assert "readable by your user account only (files 0600, folders 0700)" in text, text
    assert "The master key is sealed with your master passphrase" in text, text
    assert "protected by those file permissions alone" in text, text
    assert "aimos keystore move --to os" in text, text


def test_without_a_bus_install_yes_uses_the_file_keystore_and_what_it_says_is_true(
    aimos_home: Path, passphrase: str
) -> None:
    env = without_bus(aimos_home, passphrase_file=True)
    result = run_aimos("install", "--yes", env=env, unset=NO_BUS).ok()
    assert_explained(result.err)
    assert "Using the file keystore" in result.err, result.describe()
    assert re.search(r"^keystore: file keystore \(no OS keychain answered", result.out, re.M), result.out
    status = run_aimos("status", "--json", env=env, unset=NO_BUS).json()
    assert status["keystore"]["kind"] == "file"
    run_aimos("save", "saved on a machine with no keychain", env=env, unset=NO_BUS).ok()

    # what the note says, held against the files: 0600 files in 0700 folders under the home ...
    keys = aimos_home / "state" / "keys" / brain_id_of(aimos_home)
    for folder in (aimos_home / "state" / "keys", keys):
        assert folder.stat().st_mode & 0o777 == 0o700, oct(folder.stat().st_mode)
    files = sorted(keys.iterdir())
    assert files and all(f.stat().st_mode & 0o777 == 0o600 for f in files), files
    # ... the master sealed with the passphrase (a copy of the file is no use without it) ...
    from aimos.errors import PassphraseError
    from aimos.identity.passphrase import unseal

    sealed = (keys / "master.key").read_text()
    assert json.loads(sealed)["kdf"] == "argon2id"
    with pytest.raises(PassphraseError, match="wrong master passphrase"):
        unseal(sealed, "a guess at the passphrase")
    assert len(unseal(sealed, passphrase)) == 32
    # ... and an agent's key readable as it is: whoever reads the file can sign as the agent
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    row = query(aimos_home, "SELECT valid_from, public_key_b64u FROM identity_epochs WHERE agent_id = 'cli'")
    seed = b64u_decode((keys / f"cli@{row[0]['valid_from']}.key").read_text())
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert der == b64u_decode(row[0]["public_key_b64u"])


def test_without_a_bus_the_keystore_is_asked_first_and_the_install_finishes(aimos_home: Path) -> None:
    session = PtySession(["install", "--service", "none"], without_bus(aimos_home))
    try:
        before = session.expect(ASK)
        assert_explained(before)
        assert "Brain name" not in before and "Master passphrase" not in before, before
        session.send("")  # Enter: yes
        session.expect(BRAIN_NAME)
        session.send("server")
        session.expect(FIRST)
        code = session.choose_passphrase(TYPED, then=r"keystore: file keystore \(no OS keychain answered")
    finally:
        session.close()
    assert code == 0, session.buffer
    assert "Traceback" not in session.buffer and "error:" not in session.buffer, session.buffer
    assert scalar(aimos_home, "SELECT value FROM brain_meta WHERE key = 'keystore'") == "file"
    assert scalar(aimos_home, "SELECT value FROM brain_meta WHERE key = 'brain_name'") == "server"


def test_declining_the_file_keystore_asks_nothing_more_and_installs_nothing(aimos_home: Path) -> None:
    session = PtySession(["install", "--service", "none"], without_bus(aimos_home))
    try:
        session.expect(ASK)
        session.send("n")
        code = session.wait()
    finally:
        session.close()
    assert code == 8, session.buffer
    text = said(session.buffer)
    assert "error: nothing was installed: no OS keychain answered and the file keystore was declined" in text
    assert "hint: Start the desktop session's keyring" in text, text
    assert "Brain name" not in text and "Master passphrase" not in text, text
    assert tree(aimos_home, ignore=CLI_LOG) == {}, sorted(tree(aimos_home, ignore=CLI_LOG))


@pytest.mark.parametrize("how", ["flag", "env"])
def test_keystore_os_without_a_bus_is_refused_before_any_question(aimos_home: Path, how: str) -> None:
    env = without_bus(aimos_home)
    args = ["install", "--service", "none"]
    if how == "flag":
        args += ["--keystore", "os"]
    else:
        env["AIMOS_KEYSTORE"] = "os"
    session = PtySession(args, env)
    try:
        code = session.wait()
    finally:
        session.close()
    assert code == 6, session.buffer
    text = said(session.buffer)
    assert "error: no OS keychain is reachable" in text and "hint:" in text, text
    assert "`--keystore file`" in text and "leave --keystore out" in text, text
    assert "Brain name" not in text and "Master passphrase" not in text, text
    assert "Traceback" not in text
    assert tree(aimos_home, ignore=CLI_LOG) == {}, sorted(tree(aimos_home, ignore=CLI_LOG))

    # with --yes and no passphrase anywhere: the keystore is refused first (before: exit 2, no terminal)
    refused = run_aimos("install", "--yes", *args[1:], env=env, unset=(*NO_BUS, PASSPHRASE_ENV))
    assert refused.code == 6 and "no OS keychain is reachable" in refused.err, refused.describe()
    assert tree(aimos_home, ignore=CLI_LOG) == {}, sorted(tree(aimos_home, ignore=CLI_LOG))


def test_without_a_bus_the_dry_run_plans_what_the_install_does(aimos_home: Path) -> None:
    env = without_bus(aimos_home, passphrase_file=True)
    dry = run_aimos("install", "--yes", "--dry-run", "--json", env=env, unset=NO_BUS).json()
    assert dry["plan"]["keystore"] == "file"
    assert tree(aimos_home, ignore=CLI_LOG) == {}
    done = run_aimos("install", "--yes", "--json", env=env, unset=NO_BUS).json()
    assert done["keystore_kind"] == "file" and done["plan_sha256"] == dry["plan_sha256"]


@pytest.mark.keychain
def test_with_a_keychain_the_default_is_the_keychain_and_nothing_is_asked_about_it(
    aimos_home: Path, reaper: Reaper
) -> None:
    require_keychain()
    env = {k: v for k, v in os.environ.items() if k != PASSPHRASE_ENV}
    session = PtySession(["install", "--service", "none"], env)
    try:
        before = session.expect(BRAIN_NAME)
        assert NOTICE not in before and "file keystore" not in before, before
        session.send("")
        session.expect(FIRST)
        code = session.choose_passphrase(TYPED)
    finally:
        session.close()
        if (aimos_home / BRAIN).exists():
            reaper.forget_keys_of(brain_id_of(aimos_home))
    assert code == 0, session.buffer
    assert "keystore: OS keychain" in session.buffer, session.buffer
    assert scalar(aimos_home, "SELECT value FROM brain_meta WHERE key = 'keystore'") == "os"


def test_a_keychain_that_is_there_but_fails_is_refused_not_replaced(aimos_home: Path, tmp_path: Path) -> None:
    """A Secret Service that runs but cannot make its default collection (a fresh user, an SSH
    login to a desktop: its prompt cannot be shown) is a keychain the person has: the default
    refuses, naming the fix, and does not quietly keep the keys in files instead. `--keystore
    auto` (whatever works) still stands the file keystore in, and says why."""
    data = tmp_path / "empty-keyring-data"
    data.mkdir()
    env = {k: v for k, v in without_bus(aimos_home, passphrase_file=True).items() if k != "XDG_DATA_HOME"}
    env["XDG_DATA_HOME"] = str(data)
    aimos = f"{sys.executable} -m aimos install --yes --no-service --no-guides"
    script = f"gnome-keyring-daemon --start --components=secrets >/dev/null 2>&1; {aimos}; echo rc=$?; {aimos} --keystore auto"
    done = subprocess.run(
        ["dbus-run-session", "--", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=110
    )
    first, _, second = done.stdout.partition("rc=")
    assert second.startswith("6") and "Installed brain" not in first, done.stdout + done.stderr
    assert "the OS keychain is here but did not work" in done.stderr, done.stderr
    assert "--keystore file" in done.stderr
    assert "keystore: file keystore (no OS keychain answered" in second, done.stdout + done.stderr
    assert (aimos_home / "brain.sqlite3").is_file()  # made by the second, --keystore auto
