"""Realistic secret shapes for `aimos eval secrets` and the tests, built when asked for.

Each shape has the right prefix, length and alphabet of the real thing, and is assembled here from
parts with a seeded random generator: no live-looking credential sits in the repository verbatim,
and every run builds the same fakes.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Shape:
    """One secret as a person might paste it: the kind it is counted under, and the text."""

    kind: str
    text: str


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        digits = body + check
        total = 0
        for i, ch in enumerate(reversed(digits)):
            d = int(ch)
            if i % 2:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


def _b64url_json(value: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _wrap(text: str, width: int = 64) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def shapes(seed: int = 18) -> list[Shape]:
    """Every shape the gate must refuse, in a fixed order."""
    rng = random.Random(seed)  # noqa: S311 (fakes that must be the same on every run)

    def pick(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    aws_id = "AK" + "IA" + pick(UPPER_DIGITS, 16)
    aws_secret = pick(B64, 40)
    ghp = "gh" + "p_" + pick(ALNUM, 36)
    jwt = ".".join(
        [
            _b64url_json({"alg": "HS256", "typ": "JWT"}),
            _b64url_json({"sub": "1234567890", "name": "Ada", "iat": 1700000000}),
            pick(B64URL, 43),
        ]
    )
    der_rsa = bytes.fromhex("308204a40201000282010100") + bytes(rng.randrange(256) for _ in range(1180))
    der_b64 = base64.b64encode(der_rsa).decode()
    openssh = base64.b64encode(b"openssh-key-v1\x00" + bytes(rng.randrange(256) for _ in range(380))).decode()
    card = _luhn_complete("4", 16, rng)
    amex = _luhn_complete("37", 15, rng)
    begin, end = "-----BEGIN " + "RSA PRIVATE KEY-----", "-----END " + "RSA PRIVATE KEY-----"
    out = [
        Shape("AWS access key id", f"prod deploy key {aws_id}"),
        Shape("AWS access key id, split across lines", f"the key is {aws_id[:8]}\n{aws_id[8:]}"),
        Shape("AWS access key id, zero-width space", f"id {aws_id[:4]}\u200b{aws_id[4:]}"),
        Shape("AWS access key id, URL-encoded", "id " + "".join(f"%{ord(c):02X}" for c in aws_id)),
        Shape("AWS access key id, full-width letters", "id " + "".join(chr(ord(c) + 0xFEE0) for c in aws_id)),
        Shape("AWS secret access key (assignment)", f"aws_secret_access_key = {aws_secret}"),
        Shape("AWS secret access key (prose)", f"the AWS secret for billing is {aws_secret}"),
        Shape("GitHub token", f"use {ghp} for the bot"),
        Shape("GitHub fine-grained token", "github" + "_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59)),
        Shape("GitLab token", "gl" + "pat-" + pick(ALNUM + "-_", 20)),
        Shape(
            "Slack token", "xo" + f"xb-{pick(string.digits, 12)}-{pick(string.digits, 13)}-{pick(ALNUM, 24)}"
        ),
        Shape(
            "Slack webhook URL",
            "alerts go to https://hooks.slack.com/services/"
            f"T{pick(UPPER_DIGITS, 8)}/B{pick(UPPER_DIGITS, 10)}/{pick(ALNUM, 24)}",
        ),
        Shape("HuggingFace token", "hf" + "_" + pick(ALNUM, 34)),
        Shape("npm token", "npm" + "_" + pick(ALNUM, 36)),
        Shape("SendGrid API key", "SG" + "." + pick(B64URL, 22) + "." + pick(B64URL, 43)),
        Shape("Twilio API key", "twilio SK" + pick(HEX, 32)),
        Shape("DigitalOcean token", "do" + "p_v1_" + pick(HEX, 64)),
        Shape("PyPI token", "pypi-" + "AgEIcHlwaS5vcmc" + pick(B64URL, 120)),
        Shape("Stripe secret key", "sk" + "_live_" + pick(ALNUM, 24)),
        Shape("OpenAI API key", "sk-" + "proj-" + pick(ALNUM, 48)),
        Shape("Anthropic API key", "sk-" + "ant-api03-" + pick(B64URL, 93) + "AA"),
        Shape("Google API key", "AI" + "za" + pick(B64URL, 35)),
        Shape("JSON Web Token", f"session {jwt}"),
        Shape("Discord bot token", "M" + pick(ALNUM, 23) + "." + pick(B64URL, 6) + "." + pick(B64URL, 27)),
        Shape("Telegram bot token", f"{pick(string.digits, 10)}:AA{pick(B64URL, 33)}"),
        Shape("Mailchimp API key", pick(HEX, 32) + "-us12"),
        Shape("Square OAuth secret", "sq0" + "csp-" + pick(B64URL, 43)),
        Shape("bearer token", f"Authorization: Bearer {pick(ALNUM, 40)}"),
        Shape("private key block (PEM)", f"{begin}\n{_wrap(der_b64)}\n{end}"),
        Shape("PEM body without its header", _wrap(der_b64)),
        Shape("PEM-wrapped key body of unknown format", "key body:\n" + _wrap(pick(B64, 64 * 5 + 20))),
        Shape("private key as one base64 line", f"key {der_b64}"),
        Shape("OpenSSH key body without its header", _wrap(openssh, 70)),
        Shape(
            "PuTTY private key",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: laptop\n"
            f"Public-Lines: 2\n{pick(B64, 64)}\n{pick(B64, 4)}\nPrivate-Lines: 1\n{pick(B64, 44)}",
        ),
        Shape("raw private key (64 hex)", f"wallet seed {pick(HEX, 64)}"),
        Shape("raw private key (64 hex, no words)", pick(HEX, 64)),
        Shape(
            "Azure storage AccountKey",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
            + pick(B64, 86)
            + "==;EndpointSuffix=core.windows.net",
        ),
        Shape("base64-wrapped token", base64.b64encode(f"token: {ghp}".encode()).decode()),
        Shape("hex-wrapped token", f"blob {f'key={aws_id}'.encode().hex()}"),
        Shape(
            "password in a URL",
            "db is postgres://app:" + f"Tr0ub4dor{pick(string.digits, 2)}@db.internal:5432/prod",
        ),
        Shape(
            "password in a URL, URL-encoded",
            "https://ada:" + urllib.parse.quote("p@ss w0rd!") + "@example.com",
        ),
        Shape("password: value", "password: hunter2"),
        Shape("password in a sentence", "my wifi password is BlueDog77"),
        Shape("PIN in a sentence", "the PIN is 4821"),
        Shape("door code in a sentence", "the alarm code is 1234# and the door code is 5590"),
        Shape("passphrase quoted", 'my passphrase is "correct horse battery staple"'),
        Shape("card number", f"card {card[:4]} {card[4:8]} {card[8:12]} {card[12:]}"),
        Shape("card number with CVV", f"amex {amex[:4]}-{amex[4:10]}-{amex[10:]} exp 04/29 CVV 4821"),
        Shape("card number (no spaces)", f"visa {card}"),
    ]
    return out


# ordinary text the gate must let through (beside the LoCoMo turns and the guides)
ORDINARY = (
    "I forgot my password again",
    "I keep all my passwords in a password manager",
    "the password must be at least 12 characters",
    "password: (removed)",
    "reset the password tomorrow",
    "call me at +1 (555) 010-0199 or 555-0100",
    "my birthday is 1990-04-12 and we met on 12/04/2019",
    "ISBN 978-3-16-148410-0 is the book",
    "ISBN 9780306406157",
    "order 112-3456789-1234567 arrives Friday",
    "tracking number 1Z999AA10123456784",
    "invoice 2024-000123, total 1,234.56 EUR",
    "the meeting room PIN pad is broken",
    "pin the tab in the browser",
    "the secret to good bread is patience",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "sha256 of the installer: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "the memory id is 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "AKIA is how AWS ids start",
    "SECRET-DEADBEEF is a canary, not a credential",
    "https://example.com/path?query=1&lang=en",
    "the token ring network was slow",
    "Luhn is a checksum used by card numbers",
)
