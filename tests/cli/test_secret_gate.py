"""The secret gate through the real CLI: every realistic shape refused on save (exit 2, the kind
named, the secret neither echoed nor in the brain file), and the same for a recall query, a
judgment's reason, a correction, a revocation reason, an agent id and any argument the argument
parser would quote; ordinary text about passwords, numbers and dates still saves."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import BRAIN, Result, run_aimos, sqlite_value, table_counts

from aimos.eval.secret_corpus import ORDINARY, Shape, shapes

pytestmark = pytest.mark.timeout(600)

SHAPES = shapes()
SECRET_EXIT = 2  # SecretDetectedError is a UsageError (aimos/exit_codes.py)


def pieces(text: str, size: int) -> set[str]:
    """Pieces of the secret: every run of ``size`` characters that is not plain letters, and
    each whole word with a digit in it at least ``size`` - 1 long ("hunter2", "BlueDog77")."""
    found = {w.strip(".,;:\"'") for w in text.split() if len(w) >= size - 1 and any(c.isdigit() for c in w)}
    for word in text.split():
        found |= {word[i : i + size] for i in range(len(word) - size + 1)}
    return {p for p in found if p and not p.isalpha()}


def assert_not_echoed(result: Result, text: str) -> None:
    leaked = [p for p in pieces(text, 8) if p in result.both]
    assert not leaked, f"echoed {leaked}\n{result.describe()}"


def assert_not_in_brain(home: Path, text: str) -> None:
    data = b"".join(p.read_bytes() for p in home.glob(BRAIN + "*"))
    leaked = [p for p in pieces(text, 12) if p.encode() in data]
    assert not leaked, f"the brain file holds {leaked}"


def assert_secret_refused(result: Result, text: str, field: str) -> None:
    assert result.code == SECRET_EXIT, result.describe()
    assert f"the {field} holds what looks like a secret (" in result.err, result.describe()
    assert "hint:" in result.err and result.out == "", result.describe()
    assert_not_echoed(result, text)


def test_every_shape_is_refused_on_save_and_never_reaches_the_brain(installed: Path) -> None:
    before = table_counts(installed / BRAIN)
    for i, shape in enumerate(SHAPES):
        result = run_aimos("save", "--", shape.text)
        assert_secret_refused(result, shape.text, "value")
        assert "nothing was saved" in result.err
        if i % 4 == 0:
            piped = run_aimos("save", "--key", "note", input=shape.text)  # the text on stdin
            assert_secret_refused(piped, shape.text, "value")
    assert table_counts(installed / BRAIN) == before
    for shape in SHAPES:
        assert_not_in_brain(installed, shape.text)


# the shapes people paste that the red team found saved (issue 35 item 10), each with the words its
# refusal names
PASTED = {
    "passphrase of several words": "password or PIN with its value",
    "password with no separator": "password or PIN with its value",
    "URL credentials with an empty user": "credentials in a URL",
    "SECRET_KEY quoted (Django)": "credential assignment",
    "seed phrase: 12 words": "wallet recovery phrase",
    "seed phrase: 24 words numbered": "wallet recovery phrase",
    "IBAN grouped in fours": "bank account number (IBAN)",
    "US SSN (dashes)": "US Social Security number",
    "OTP seed: otpauth URI": "one-time-password seed",
    "OTP seed: setup key in groups": "one-time-password seed",
    "HTTP Basic header": "HTTP Basic credentials",
    "command line: curl -u": "password in a command line",
    "command line: mysql -pSECRET": "password in a command line",
    "command line: sshpass": "password in a command line",
    ".env line: password": "secret setting with its value",
    ".env file": "secret setting with its value",
    "Bitcoin private key (WIF, compressed)": "Bitcoin private key (WIF)",
    "age secret key": "age secret key",
    "Mailgun API key": "Mailgun API key",
    "password in French": "password or PIN with its value",
    "password in Chinese": "password or PIN with its value",
    "password in Korean": "password or PIN with its value",
}


def test_the_shapes_people_paste_are_refused_by_kind_and_never_saved(installed: Path) -> None:
    """Attack: each of these was saved before; now refused (exit 2) naming its kind, its value on
    neither stdout nor stderr (not a word run of it, not a piece), and nothing written."""
    before = table_counts(installed / BRAIN)
    for kind, words in PASTED.items():
        shape = next(s for s in SHAPES if s.kind == kind)
        result = run_aimos("save", "--", shape.text)
        assert_secret_refused(result, shape.text, "value")
        assert f"secret ({words}" in result.err and "nothing was saved" in result.err, result.describe()
        parts = shape.text.split()
        runs = {" ".join(parts[i : i + 3]) for i in range(len(parts) - 2) if len(parts[i]) > 2}
        assert not [r for r in runs if r in result.both], result.describe()
    assert table_counts(installed / BRAIN) == before
    for kind in PASTED:
        assert_not_in_brain(installed, next(s for s in SHAPES if s.kind == kind).text)


def test_the_key_and_other_fields_are_gated_and_named(installed: Path) -> None:
    token = next(s for s in SHAPES if s.kind == "GitHub token").text
    result = run_aimos("save", "a harmless value", "--key", token)
    assert_secret_refused(result, token, "key")
    result = run_aimos("save", "a harmless value", "--source", "password: hunter2")
    assert_secret_refused(result, "password: hunter2", "source")


def test_the_refusal_says_where_the_secret_is(installed: Path) -> None:
    text = "line one is fine\nthen the wifi password is BlueDog77 ok"
    result = run_aimos("save", "--", text)
    assert_secret_refused(result, text, "value")
    assert "(password or PIN with its value) at line 2, character 15" in result.err, result.err


PROBES = [
    s
    for s in SHAPES
    if s.kind
    in {
        "GitHub token",
        "password: value",
        "card number with CVV",
        "AWS access key id, zero-width space",
        "base64-wrapped token",
    }
]


def test_a_secret_in_a_recall_query_is_refused_and_no_receipt_keeps_it(installed: Path) -> None:
    run_aimos("save", "the cat is called Miso").ok()
    run_aimos("recall", "cat").ok()
    before = table_counts(installed / BRAIN, ("recall_receipts", "request_nonces", "events"))
    for shape in PROBES:
        result = run_aimos("recall", "--", shape.text)
        assert_secret_refused(result, shape.text, "query")
        assert "nothing was recalled or recorded" in result.err
        assert_not_in_brain(installed, shape.text)
    assert table_counts(installed / BRAIN, ("recall_receipts", "request_nonces", "events")) == before


def test_a_secret_in_a_judgment_reason_or_a_correction_is_refused(installed: Path) -> None:
    memory_id = run_aimos("save", "the deploy runs on Fridays").ok().out.strip()
    labels = int(sqlite_value(installed / BRAIN, "SELECT count(*) FROM memory_classifications"))
    for shape in PROBES:
        result = run_aimos("label", memory_id, "dispute", "--reason", shape.text)
        assert_secret_refused(result, shape.text, "reason")
        assert "no judgment was recorded" in result.err
        corrected = run_aimos("correct", memory_id, "--", shape.text)
        assert_secret_refused(corrected, shape.text, "value")
        assert_not_in_brain(installed, shape.text)
    assert int(sqlite_value(installed / BRAIN, "SELECT count(*) FROM memory_classifications")) == labels
    run_aimos("label", memory_id, "dispute", "--reason", "I forgot my password and guessed").ok()
    run_aimos("correct", memory_id, "password: (removed)").ok()


def test_agent_ids_and_revocation_reasons_are_gated(installed: Path) -> None:
    token = next(s for s in SHAPES if s.kind == "npm token").text
    result = run_aimos("agent", "enroll", token[:60])
    assert result.code == SECRET_EXIT and "agent id" in result.err, result.describe()
    assert_not_echoed(result, token)
    run_aimos("agent", "enroll", "bob").ok()
    result = run_aimos("agent", "revoke", "bob", "--reason", "its password: hunter2")
    assert_secret_refused(result, "its password: hunter2", "reason")
    assert sqlite_value(installed / BRAIN, "SELECT count(*) FROM agent_revocations") == "0"


TOKEN = "ghp_" + "a1B2c3D4e5" * 4
# (exit code, whether the message would have quoted the argument, argv)
ARGV = [
    (2, True, "-----BEGIN RSA PRIVATE KEY-----MIIEpAIBAAKCAQEAz1x"),  # no such option, at the root
    (2, True, "save", "--" + TOKEN),  # no such option, in a command
    (2, True, "nosuchcommand-sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),  # no such command
    (2, True, "label", "x", TOKEN, "--reason", "r"),  # aimos's own error quotes a judgment word
    (2, False, "save", "x", "--data-class", TOKEN),  # not quoted: "unknown data class"
    (2, False, "save", "x", "--clearance", TOKEN),  # Typer's int error does not quote it
    (3, False, "show", TOKEN),  # not a memory id: not quoted
]


@pytest.mark.parametrize("case", ARGV, ids=lambda a: " ".join(str(w)[:10] for w in a[2:4]))
def test_the_argument_parser_never_echoes_a_secret(installed: Path, case: tuple[object, ...]) -> None:
    from aimos.memory.gates import find_secret

    code, quoted, *words = case
    argv = [str(w) for w in words]
    result = run_aimos(*argv)
    assert result.code == code, result.describe()
    if quoted:
        assert "looks like a secret" in result.err and "not shown" in result.err, result.describe()
    for arg in argv:
        if find_secret(arg):
            assert_not_echoed(result, arg)
            assert arg not in result.both


def test_usage_errors_without_a_secret_are_shown_as_before(installed: Path) -> None:
    result = run_aimos("save", "--bogus")
    assert result.code == 2 and "No such option: --bogus" in result.err, result.describe()
    result = run_aimos("nosuchcommand")
    assert result.code == 2 and "No such command 'nosuchcommand'" in result.err, result.describe()


@pytest.mark.parametrize("text", [*ORDINARY, "my PIN pad at the office", "ISBN 0-306-40615-2"])
def test_ordinary_text_saves(installed: Path, text: str) -> None:
    run_aimos("save", "--", text).ok()


def test_shapes_cover_what_the_issue_lists() -> None:
    kinds = " ".join(s.kind for s in SHAPES).lower()
    for word in (
        "aws secret access key (assignment)",
        "aws secret access key (prose)",
        "split across lines",
        "zero-width",
        "url-encoded",
        "full-width",
        "gitlab",
        "slack webhook",
        "huggingface",
        "npm",
        "sendgrid",
        "twilio",
        "digitalocean",
        "pypi",
        "pem body",
        "putty",
        "64 hex",
        "azure",
        "base64-wrapped",
        "hex-wrapped",
        "password in a url",
        "password: value",
        "password in a sentence",
        "card number with cvv",
        "passphrase of several words",
        "password with no separator",
        "empty user",
        "secret_key quoted",
        "seed phrase",
        "iban",
        "us ssn",
        "otp seed",
        "http basic",
        "command line",
        ".env",
        "wif",
        "age secret key",
        "mailgun",
        "password in french",
        "password in japanese",
    ):
        assert word in kinds, word
    assert all(isinstance(s, Shape) and s.text for s in SHAPES)
