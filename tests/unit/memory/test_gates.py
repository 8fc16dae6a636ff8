"""The secret gate and the canary gate (pure)."""

from __future__ import annotations

import pytest

from aimos.errors import SecretDetectedError
from aimos.eval.secret_corpus import ORDINARY, shapes
from aimos.memory.gates import (
    find_secret,
    refuse_secret_fields,
    refuse_secrets,
    scan_canary,
    secret_kind,
    where,
)

SECRETS = {
    "private key block": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "AWS access key id": "my key is AKIAIOSFODNN7EXAMPLE ok",
    "GitHub token": "token ghp_" + "a1B2" * 9,
    "Anthropic API key": "sk-ant-api03-" + "x" * 30,
    "OpenAI-style API key": "use sk-proj-" + "Ab3" * 10,
    "Slack token": "xoxb-1234567890-abcdefghij",
    "Google API key": "AIza" + "S" * 35,
    "Stripe key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password or PIN with its value": "password = hunter2hunter2hunter2",
}


def fragments(text: str, size: int = 8) -> set[str]:
    """Pieces of the secret that must never be echoed: every run of ``size`` characters that is
    not plain letters (words such as "password" may well be in a message), and each whole word
    with a digit in it ("hunter2", "4821")."""
    pieces = {w.strip(".,;:\"'") for w in text.split() if len(w) >= 4 and any(c.isdigit() for c in w)}
    for word in text.split():
        pieces |= {word[i : i + size] for i in range(len(word) - size + 1)}
    return {p for p in pieces if p and not p.isalpha()}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_secret_shape_is_refused_without_echo(name: str) -> None:
    text = SECRETS[name]
    found = find_secret(text)
    assert found is not None and found.kind == name
    with pytest.raises(SecretDetectedError) as err:
        refuse_secrets("fine", text)
    message = f"{err.value.message} {err.value.hint}"
    assert name in message and "text 2" in message
    assert err.value.reason == "secret_detected"
    assert not any(piece in message for piece in fragments(text)), message


@pytest.mark.parametrize("shape", shapes(), ids=lambda s: s.kind)
def test_every_realistic_shape_is_caught_and_never_quoted(shape: object) -> None:
    from aimos.eval.secret_corpus import Shape

    assert isinstance(shape, Shape)
    with pytest.raises(SecretDetectedError) as err:
        refuse_secret_fields({"value": "fine", "key": None, "reason": shape.text})
    message = f"{err.value.message} {err.value.hint}"
    assert message.startswith("refused: the reason holds what looks like a secret (")
    assert not any(piece in message for piece in fragments(shape.text)), message


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_passes(text: str) -> None:
    assert find_secret(text) is None, find_secret(text)
    refuse_secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my password",
        "The master passphrase: change it.",
        'aimos redact ID --reason "it held my wifi password" removes one memory\'s text',
        "password manager",
        "my password is long and hard to type",
        "the PIN is wrong again",
        "pin 12 on the board",
        "a passphrase of four words",
        "postgres://user:password@localhost/db is the example in the docs",
        "his phone is 07700 900123, her card was declined",
        "the recipe: 4 eggs, 250 g flour",
        "flight BA2490 on 2024-06-01 at 14:35",
        "the merkle root is " + "ab12cd34" * 8,
        "public key " + "0f1e2d3c" * 8,
    ],
)
def test_prose_about_secrets_is_not_a_secret(text: str) -> None:
    assert find_secret(text) is None, find_secret(text)


def test_the_place_is_the_line_and_character_in_the_text_as_given() -> None:
    text = "first line\nsecond: AK\u200bIAIOSFODNN7EXAMPLE"
    found = find_secret(text)
    assert found is not None and "AWS access key id" in found.kind and "invisible" in found.kind
    assert where(text, found.start) == (2, 9)
    with pytest.raises(SecretDetectedError) as err:
        refuse_secret_fields({"value": text})
    assert "the value" in err.value.message and "line 2, character 9" in err.value.message


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("key AKIA1234\n  5678ABCDEFGH", "split across lines"),
        ("key %41%4B%49%41IOSFODNN7EXAMPLE", "%-encoded"),
        ("key ＡＫＩＡＩＯＳＦＯＤＮＮ７ＥＸＡＭＰＬＥ", "look-alike"),
        ("key AKIA\u00adIOSFODNN7EXAMPLE", "invisible"),
        ("blob " + b"aws AKIAIOSFODNN7EXAMPLE".hex(), "hex-wrapped"),
    ],
)
def test_hidden_secrets_are_found_and_say_how_they_were_hidden(text: str, note: str) -> None:
    found = find_secret(text)
    assert found is not None and note in found.kind, found


def test_library_plugins_catch_what_our_patterns_leave_to_them() -> None:
    discord = "M" + "a1B2c3D4e5" * 2 + "abcd" + ".Gh1jK2." + "x" * 27
    kind = secret_kind(discord)
    assert kind is not None and "detect-secrets" in kind


def test_secret_kind_of_plain_text_is_none() -> None:
    assert secret_kind("No such option: --bogus") is None
    assert secret_kind("No such option: -----BEGIN RSA PRIVATE KEY-----") == "private key block"


def test_canary_marker_grammar() -> None:
    assert scan_canary("seen SECRET-0A1B2C3D here").count == 1
    assert scan_canary("SECRET-0A1B2C3D and SECRET-FFFFFFFF", None).count == 2
    assert not scan_canary("SECRET-0a1b2c3d").detected  # lowercase hex is not the grammar
    assert not scan_canary("SECRET-0A1B2C3DX").detected  # followed by a word character
    assert not scan_canary("XSECRET-0A1B2C3D").detected  # no word boundary


@pytest.mark.timeout(120)
@pytest.mark.parametrize("unit", ["sk-", "eyJ", "//a/:_authToken=", "a", "password is ", "%4", "https://a:"])
def test_a_long_run_of_a_token_prefix_is_scanned_in_linear_time(unit: str) -> None:
    """Some library patterns take quadratic time on one long run ("sk-" 20,000 times took a
    minute); the gate gives them short words only. Generous timeout: this guards against a
    pattern that would take minutes on a 1 MiB memory, not against a slow machine."""
    assert find_secret(unit * (240_000 // len(unit))) is None
