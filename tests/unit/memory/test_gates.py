"""The secret gate and the canary gate (pure)."""

from __future__ import annotations

import pytest

from aimos.errors import SecretDetectedError
from aimos.memory.gates import find_secret, refuse_secrets, scan_canary

SECRETS = {
    "private key block": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "AWS access key id": "my key is AKIAIOSFODNN7EXAMPLE ok",
    "GitHub token": "token ghp_" + "a1B2" * 9,
    "Anthropic API key": "sk-ant-api03-" + "x" * 30,
    "OpenAI-style API key": "use sk-proj-" + "Ab3" * 10,
    "Slack token": "xoxb-1234567890-abcdefghij",
    "Google API key": "AIza" + "S" * 35,
    "Stripe secret key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "credential assignment (api_key/secret/token/password = long value)": "password = hunter2hunter2hunter2",
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_secret_shape_is_refused_without_echo(name: str) -> None:
    text = SECRETS[name]
    assert find_secret(text) == name
    with pytest.raises(SecretDetectedError) as err:
        refuse_secrets("fine", text)
    message = f"{err.value.message} {err.value.hint}"
    assert name in message
    secret_core = max(text.split(), key=len)
    assert secret_core not in message


@pytest.mark.parametrize(
    "text",
    [
        "I keep my passwords in a password manager",
        "the sky is blue; sk is a prefix",
        "AKIA is how AWS ids start",
        "call me at 555-0100",
        "SECRET-DEADBEEF is a canary, not a credential",
    ],
)
def test_ordinary_text_passes(text: str) -> None:
    assert find_secret(text) is None
    refuse_secrets(text)


def test_canary_marker_grammar() -> None:
    assert scan_canary("seen SECRET-0A1B2C3D here").count == 1
    assert scan_canary("SECRET-0A1B2C3D and SECRET-FFFFFFFF", None).count == 2
    assert not scan_canary("SECRET-0a1b2c3d").detected  # lowercase hex is not the grammar
    assert not scan_canary("SECRET-0A1B2C3DX").detected  # followed by a word character
    assert not scan_canary("XSECRET-0A1B2C3D").detected  # no word boundary
