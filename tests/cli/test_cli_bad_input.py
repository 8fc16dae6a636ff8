"""Bad input through the real CLI: the SPEC section 15 exit code, `error:` + `hint:` naming the fix,
no traceback, and nothing changed in the brain (row counts, file set, bytes, key files).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import (
    BRAIN,
    PASSPHRASE_ENV,
    assert_refused,
    assert_unchanged,
    edit_outside,
    keystore_dir,
    listing,
    parse_json,
    run_aimos,
    run_aimos_with_passphrase_fd,
    sha256_file,
    snapshot,
    sqlite,
    sqlite_value,
)

pytestmark = pytest.mark.timeout(120)

USAGE, NOT_FOUND, IDENTITY = 2, 3, 6
MISSING_ID = "7f3c2a10-0000-4000-8000-000000000000"


def _save(text: str) -> str:
    result = run_aimos("save", text).ok()
    return result.out.strip()


# --- identity and keychain (exit 6) ---------------------------------------------------------
def test_wrong_passphrase_is_refused(installed: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong-passphrase"
    wrong.write_text("hunter2-is-not-it\n")
    wrong.chmod(0o600)
    before = snapshot(installed)
    result = run_aimos("agent", "enroll", "bob", env={PASSPHRASE_ENV: str(wrong)})
    assert_refused(result, IDENTITY, "passphrase")
    assert "hunter2-is-not-it" not in result.both
    assert_unchanged(installed, before)


def test_os_keystore_without_a_keychain_is_refused_and_creates_nothing(aimos_home: Path) -> None:
    result = run_aimos(
        "install",
        "--yes",
        "--keystore",
        "os",
        unset=("DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "PYTHON_KEYRING_BACKEND"),
    )
    assert_refused(result, IDENTITY, "--keystore file")
    assert not (aimos_home / BRAIN).exists(), "a refused install left a brain file"
    assert not [p for p in aimos_home.iterdir() if p.name.startswith(BRAIN)]
    assert not (aimos_home / "state").exists(), "a refused install left a keystore folder"
    assert not (aimos_home / "config" / "anchors.json").exists()
    # only the one-line command log may exist
    assert {p.name for p in aimos_home.iterdir()} <= {"logs"}


def test_save_with_clearance_above_the_grant_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    result = run_aimos("save", "too secret for this agent", "--clearance", "11")
    assert_refused(result, IDENTITY, "--clearance 10")
    assert_unchanged(installed, before)


def test_save_with_data_class_above_the_grant_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    result = run_aimos("save", "restricted material", "--data-class", "restricted")
    assert_refused(result, IDENTITY, "confidential")
    assert_unchanged(installed, before)


def test_save_by_a_revoked_epoch_is_refused(installed: Path) -> None:
    run_aimos("agent", "enroll", "scout").ok()
    run_aimos("agent", "revoke", "scout").ok()
    before = snapshot(installed)
    result = run_aimos("save", "said after the revocation", "--agent", "scout")
    assert_refused(result, IDENTITY, "aimos agent rotate scout")
    assert_unchanged(installed, before)


# --- not found (exit 3) ---------------------------------------------------------------------
def test_save_before_install_is_refused(aimos_home: Path) -> None:
    result = run_aimos("save", "there is no brain yet")
    assert_refused(result, NOT_FOUND, "aimos install")
    assert not (aimos_home / BRAIN).exists()
    assert not (aimos_home / "state").exists()
    for command in (["show", MISSING_ID], ["list"], ["status"], ["agent", "list"]):
        assert_refused(run_aimos(*command), NOT_FOUND, "aimos install")
    assert not (aimos_home / BRAIN).exists()


@pytest.mark.parametrize("ref", [MISSING_ID, MISSING_ID[:8], "zzzz-not-an-id"])
def test_show_of_an_unknown_id_is_refused(installed: Path, ref: str) -> None:
    _save("a memory that exists")
    before = snapshot(installed)
    assert_refused(run_aimos("show", ref), NOT_FOUND, "aimos list")
    assert_refused(run_aimos("show", ref, "--json"), NOT_FOUND, "aimos list")
    assert_unchanged(installed, before)


def test_correct_of_an_unknown_id_is_refused(installed: Path) -> None:
    _save("a memory that exists")
    before = snapshot(installed)
    assert_refused(run_aimos("correct", MISSING_ID, "the correction"), NOT_FOUND, "aimos list")
    assert_unchanged(installed, before)


# --- usage (exit 2) -------------------------------------------------------------------------
def test_value_over_one_mebibyte_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    big = "a" * (1024 * 1024 + 1)  # over 1 MiB as canonical JSON even before the other fields
    result = run_aimos("save", input=big)
    assert_refused(result, USAGE, "split")
    assert big[:1000] not in result.both
    assert_unchanged(installed, before)


def test_value_just_under_the_limit_is_accepted(installed: Path) -> None:
    # the limit is on the canonical body: a value 1 KiB under 1 MiB still fits with its fields
    memory_id = run_aimos("save", input="b" * (1024 * 1024 - 1024)).ok().out.strip()
    assert len(parse_json(run_aimos("show", memory_id, "--json"))["value"]) == 1024 * 1024 - 1024


@pytest.mark.parametrize(
    ("pattern", "secret", "text"),
    [
        (
            "private key",
            "MC4CAQAwBQYDK2VwBCIEIHq0ZxQ7v1uK3oVd9eH2mW6pJ8sN4rT5yL0cB1aXfG2h",
            "my key:\n-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----\n",
        ),
        ("AWS", "AKIAZ7QW3ERT5YU8IOPL", "the deploy user is {secret} in us-east-1"),
        ("GitHub", "ghp_" + "Xk9mQ2vL7pR4tW8yB3nC6hJ1sD5fG0aZ2eU4", "token {secret} for the CI"),
        ("OpenAI", "sk-" + "Tq8Wm3Zr7Yp2Ln5Kx9Vb4Hc6Jd1Fg0As", "OPENAI key {secret} for the bot"),
    ],
)
def test_secrets_are_refused_without_echo(installed: Path, pattern: str, secret: str, text: str) -> None:
    before = snapshot(installed)
    value = text.format(secret=secret)
    for result in (run_aimos("save", value), run_aimos("save", input=value)):
        assert_refused(result, USAGE, "secret")
        assert pattern.lower() in result.err.lower(), f"stderr does not name the pattern\n{result.describe()}"
        assert secret not in result.both, "the refusal echoed the secret"
        assert secret[4:20] not in result.both, "the refusal echoed part of the secret"
    assert_unchanged(installed, before)


def test_refused_secret_is_not_written_to_the_log(installed: Path) -> None:
    """The command log is "one line per command, no arguments" (docs/security.md): a refused secret given
    as the text argument must not land in $AIMOS_HOME/logs either."""
    secret = "ghp_" + "Xk9mQ2vL7pR4tW8yB3nC6hJ1sD5fG0aZ2eU4"
    result = run_aimos("save", f"token {secret} for the CI")
    assert_refused(result, USAGE, "secret")
    logs = sorted((installed / "logs").iterdir())
    assert logs, "no command log was written"
    for log in logs:
        text = log.read_text("utf-8", "replace")
        assert secret not in text, f"{log.name} holds the refused secret: {text.splitlines()[-1]!r}"
        assert "for the CI" not in text, f"{log.name} holds the command's argument"


def test_secret_in_the_key_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    secret = "AKIAZ7QW3ERT5YU8IOPL"
    result = run_aimos("save", "an innocent value", "--key", secret)
    assert_refused(result, USAGE, "secret")
    assert secret not in result.both
    assert_unchanged(installed, before)


@pytest.mark.parametrize("how", ["argument", "stdin", "blank"])
def test_empty_text_is_refused(installed: Path, how: str) -> None:
    before = snapshot(installed)
    if how == "argument":
        result = run_aimos("save", "")
    elif how == "stdin":
        result = run_aimos("save", input="")
    else:
        result = run_aimos("save", "   \n\t ")
    assert_refused(result, USAGE)
    assert_unchanged(installed, before)


def test_passphrase_file_readable_by_others_is_refused(installed: Path) -> None:
    pass_file = Path(os.environ[PASSPHRASE_ENV])
    pass_file.chmod(0o644)
    before = snapshot(installed)
    result = run_aimos("agent", "enroll", "bob")
    assert_refused(result, USAGE, "chmod 600")
    assert pass_file.read_text("utf-8").strip() not in result.both
    assert_unchanged(installed, before)


def test_install_with_a_passphrase_file_readable_by_others_creates_nothing(aimos_home: Path) -> None:
    Path(os.environ[PASSPHRASE_ENV]).chmod(0o644)
    result = run_aimos("install", "--yes", "--keystore", "file")
    assert_refused(result, USAGE, "chmod 600")
    assert not (aimos_home / BRAIN).exists()
    assert not (aimos_home / "state").exists()


# --- the passphrase through a file descriptor -------------------------------------------------
def test_passphrase_fd_works(installed: Path, passphrase: str) -> None:
    result = run_aimos_with_passphrase_fd(passphrase, "agent", "enroll", "bob", "--json")
    enrolled = parse_json(result)
    assert enrolled["agent_id"] == "bob"
    assert passphrase not in result.both
    agents = parse_json(run_aimos("agent", "list", "--json"))
    assert ("bob", "active") in {(a["agent_id"], a["state"]) for a in agents}
    assert run_aimos("save", "saved by bob", "--agent", "bob").ok().out.strip()


def test_install_reads_the_new_passphrase_from_an_fd(aimos_home: Path, passphrase: str) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, (passphrase + "\n").encode())
    os.close(write_end)
    try:
        result = run_aimos(
            "install",
            "--yes",
            "--keystore",
            "file",
            "--passphrase-fd",
            str(read_end),
            pass_fds=(read_end,),
            unset=(PASSPHRASE_ENV,),
        )
    finally:
        os.close(read_end)
    result.ok()
    assert passphrase not in result.both
    # the master was sealed with the passphrase from the fd: the 0600 file (same text) unlocks it
    run_aimos("agent", "enroll", "bob").ok()


def test_wrong_passphrase_through_fd_is_refused(installed: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"a wrong passphrase\n")
    os.close(write_end)
    before = snapshot(installed)
    try:
        result = run_aimos(
            "agent",
            "enroll",
            "bob",
            "--passphrase-fd",
            str(read_end),
            pass_fds=(read_end,),
            unset=(PASSPHRASE_ENV,),
        )
    finally:
        os.close(read_end)
    assert_refused(result, IDENTITY, "passphrase")
    assert_unchanged(installed, before)


def test_no_passphrase_source_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    result = run_aimos("agent", "enroll", "bob", unset=(PASSPHRASE_ENV,))
    assert_refused(result, USAGE, "--passphrase-fd")
    assert_unchanged(installed, before)


# --- a brain from a newer aimos ----------------------------------------------------------------
def test_brain_with_a_newer_schema_is_refused(installed: Path) -> None:
    """A newer aimos records its migrations as it applies them; a version with no record is a
    hand edit, refused as damage (tests/attacks/test_schema_version.py)."""
    from aimos.store.connection import code_schema_version

    newer = code_schema_version() + 1
    memory_id = _save("written before the upgrade")
    brain = installed / BRAIN
    proc = sqlite(
        brain,
        "DROP TRIGGER schema_migrations_writer_only; DROP TRIGGER IF EXISTS schema_migrations_seal_aware; INSERT INTO schema_migrations"
        f" (version, name, applied_at) VALUES ({newer}, 'from_a_newer_aimos', 0);"
        f" PRAGMA user_version={newer}",
    )
    assert proc.returncode == 0, proc.stderr
    before = snapshot(installed)
    for command in (
        ["save", "a new memory"],
        ["show", memory_id],
        ["list"],
        ["status"],
        ["status", "--json"],
    ):
        result = run_aimos(*command)
        assert result.code != 0, result.describe()
        assert "Traceback" not in result.both, result.describe()
        assert "error:" in result.err, result.describe()
        assert "upgrade" in result.err.lower(), result.describe()
        assert result.out == "", result.describe()
    assert_unchanged(installed, before)
    assert sqlite_value(brain, "PRAGMA user_version") == str(newer)


# --- edits through the sqlite3 shell -------------------------------------------------------------
EDITS = {
    "update memories": ("memories", "UPDATE memories SET value = 'rewritten history'"),
    "delete memories": ("memories", "DELETE FROM memories"),
    "update events": ("events", "UPDATE events SET operation = 'nothing_happened'"),
    "delete events": ("events", "DELETE FROM events"),
    "insert events": (
        "events",
        "INSERT INTO events SELECT 'forged-' || event_id, company_id, operation, signer_agent_id,"
        " signer_valid_from, ledger_seq + 1000, subject_memory_id, signed_body, content_hash, nonce,"
        " ts_signed, signature_b64u, prev_mutation_hash, 'ff' || mutation_hash, signed_body_deflated"
        " FROM events LIMIT 1",
    ),
    "insert memories": (
        "memories",
        "INSERT INTO memories SELECT 'forged-' || memory_id, company_id, key, 'forged value', scope,"
        " memory_type, clearance_level, data_class, source, author_agent_id, author_valid_from,"
        " created_at, 'ff' || live_content_hash, save_provenance_id || 'x', save_mutation_hash || 'x',"
        " quarantine, retrieval_weight_milli, epistemic_label FROM memories LIMIT 1",
    ),
    "insert master_identity": (
        "master_identity",
        "INSERT INTO master_identity (fingerprint, public_key_b64u, created_at)"
        " VALUES ('" + "ab" * 32 + "', 'MCowBQYDK2VwAyEAforgedforgedforgedforgedforgedforgedforgedfo', 1)",
    ),
}


@pytest.fixture
def brain_with_rows(installed: Path) -> Path:
    first = _save("the first retained memory")
    run_aimos("correct", first, "the corrected retained memory").ok()
    return installed


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_sqlite_shell_cannot_edit_retained_rows(brain_with_rows: Path, edit: str) -> None:
    table, sql = EDITS[edit]
    brain = brain_with_rows / BRAIN
    dump_sql = f"SELECT * FROM {table} ORDER BY rowid"
    rows_before = sqlite(brain, dump_sql, "-quote").stdout  # (quote mode: a BLOB as X'..')
    assert rows_before.strip(), f"{table} has no rows to protect"
    before = snapshot(brain_with_rows)
    proc = sqlite(brain, sql)
    assert proc.returncode != 0, f"the sqlite3 shell was allowed to run: {sql}\n{proc.stdout}"
    assert "aimos" in proc.stderr, f"refused, but not by the brain's triggers: {proc.stderr}"
    assert sqlite(brain, dump_sql, "-quote").stdout == rows_before, f"{table} rows changed"
    assert_unchanged(brain_with_rows, before)
    # and aimos still reads the brain as before
    assert parse_json(run_aimos("status", "--json"))["counts"]["memories"] == before.counts["memories"]


# --- a second install -------------------------------------------------------------------------
def test_second_install_changes_nothing(installed: Path) -> None:
    _save("a memory before the second install")
    brain = installed / BRAIN
    digest = sha256_file(brain)
    keys = listing(keystore_dir(installed))
    anchors = (installed / "config" / "anchors.json").read_bytes()
    before = snapshot(installed)
    for args in (
        ["install", "--yes", "--keystore", "file"],
        ["install", "--yes"],
        ["install", "--yes", "--json"],
    ):
        result = run_aimos(*args).ok()
        assert "nothing was changed" in result.out or "already_installed" in result.out, result.describe()
    assert sha256_file(brain) == digest, "a second install changed the brain file"
    assert listing(keystore_dir(installed)) == keys
    assert (installed / "config" / "anchors.json").read_bytes() == anchors
    assert_unchanged(installed, before)


# --- found in review ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("save", "note", "--type", "sk-ant-api03-" + "A" * 30),
        ("save", "note", "--scope", "ghp_" + "a" * 36),
        ("save", "x_sk-proj-" + "A1b2" * 6),
        ("save", "AWS_KEY_AKIAIOSFODNN7EXAMPLE is here"),
    ],
)
def test_secrets_in_any_field_or_glued_to_a_word_are_refused(installed: Path, args: tuple[str, ...]) -> None:
    before = snapshot(installed)
    assert_refused(run_aimos(*args), USAGE, "secret")
    assert_unchanged(installed, before)


def test_an_unknown_command_word_is_not_logged(installed: Path) -> None:
    secret = "sk-ant-api03-" + "Q" * 30
    assert run_aimos(secret).code == USAGE
    for log in (installed / "logs").iterdir():
        assert secret not in log.read_text("utf-8", "replace")


def test_an_unfinished_install_is_replaced(aimos_home: Path) -> None:
    brain = aimos_home / BRAIN
    brain.write_bytes(b"")  # what a crash right after creating the file leaves
    result = run_aimos("install", "--yes", "--keystore", "file").ok()
    assert "master fingerprint" in result.out
    assert run_aimos("save", "after a crashed install").code == 0


def test_a_huge_limit_is_a_usage_error(installed: Path) -> None:
    result = run_aimos("list", "--limit", "99999999999999999999")
    assert result.code == USAGE
    assert "Traceback" not in result.both


def test_the_housekeeper_cannot_be_used_as_an_agent(installed: Path) -> None:
    before = snapshot(installed)
    assert_refused(run_aimos("save", "x", "--agent", "housekeeper"), USAGE, "agent id")
    assert_unchanged(installed, before)


def test_a_receipt_whose_evidence_was_rewritten_is_invalid_not_a_crash(installed: Path) -> None:
    """Evidence edited outside aimos into something that is not a list of entries: `receipt
    verify` says INVALID (exit 4) and `receipt show` says what it holds; neither crashes."""
    run_aimos("save", "The boiler is serviced every October").ok()
    receipt = parse_json(run_aimos("recall", "boiler", "--json"))["receipt"]["receipt_id"]
    edit_outside(
        installed,
        "recall_receipts",
        f"UPDATE recall_receipts SET evidence = '\"not a list\"' WHERE receipt_id = '{receipt}';",
    )
    verified = run_aimos("receipt", "verify", receipt)
    assert verified.code == 4, verified.describe()
    assert "evidence entries name their memories" in verified.out and "invalid" in verified.out
    shown = run_aimos("receipt", "show", receipt)
    assert "Traceback" not in shown.both and "internal error" not in shown.err, shown.describe()
