"""The secret shapes the write gate looks for (pure, no I/O; the forms of a text it looks at are
in secret_forms).

A finding carries the kind of secret and its span in the text as given, never the matched text.
Three families of shapes:

- well-known token formats, from detect-secrets' regex plugins (imported lazily, and only for a
  text holding a word long enough to be a token: the library costs ~0.2 s to import) and our own
  patterns for the formats it lacks or matches too narrowly (Anthropic, HuggingFace,
  DigitalOcean, npm without an .npmrc, GitLab, Stripe test keys, Azure keys of any length, ...);
- secrets told in words: a password, passphrase or PIN with its value, credentials in a URL, a
  card number that passes the Luhn check and its CVV, an AWS secret access key near "aws" or
  "secret", a bearer token;
- key material without its label: a PEM body without its header, a PuTTY key, base64 DER of a
  private key, and 32 or 64 bytes in hex (unless the text says it is a hash, an id or a public key).

detect-secrets' high-entropy and keyword plugins are not used: they flag ordinary prose and
hashes (aimos prints many) and have no notion of a value in a sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aimos.memory.secret_forms import B64_RUN, b64_bytes

_B = r"(?<![A-Za-z0-9])"  # not inside a longer token (an underscore before still counts)
_E = r"(?![A-Za-z0-9])"


@dataclass(frozen=True)
class Finding:
    """A secret shape: its kind (words for a person) and its span in the original text."""

    kind: str
    start: int
    end: int


Check = Callable[[re.Match[str], str], bool]


def _mixed(token: str) -> bool:
    """Has letters and digits, or upper and lower case: a generated token, not a word."""
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    return (has_digit and has_alpha) or (has_upper and has_lower)


def _always(m: re.Match[str], text: str) -> bool:
    return True


def _mixed_match(m: re.Match[str], text: str) -> bool:
    return _mixed(m.group(m.lastindex or 0))


# ---------------------------------------------------------------------------------------------
# token formats written by us (what detect-secrets lacks or matches too narrowly)

TOKEN_RULES: tuple[tuple[str, re.Pattern[str], Check], ...] = (
    (
        "private key block",
        re.compile(r"-----BEGIN[ _-](?:[A-Z0-9]+[ _-])*PRIVATE[ _-]KEY(?:[ _-]BLOCK)?-----"),
        _always,
    ),
    ("PuTTY private key", re.compile(r"PuTTY-User-Key-File-\d+\s*:"), _always),
    (
        "AWS access key id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}(?![a-z0-9])"
        ),
        _always,
    ),
    (
        "GitHub token",
        re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        _always,
    ),
    (
        "GitLab token",
        re.compile(_B + r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,}"),
        _always,
    ),
    ("Anthropic API key", re.compile(_B + r"sk-ant-[A-Za-z0-9_-]{20,}"), _always),
    (
        "OpenAI-style API key",
        re.compile(_B + r"sk-(?:proj-|svcacct-|admin-|live-|test-)?([A-Za-z0-9_-]{20,})"),
        _mixed_match,
    ),
    ("Slack token", re.compile(_B + r"xox[abposre]-[A-Za-z0-9-]{10,}"), _always),
    (
        "Slack webhook URL",
        re.compile(r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]+/[A-Za-z0-9_/]+"),
        _always,
    ),
    ("Google API key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}"), _always),
    ("Stripe key", re.compile(_B + r"(?:sk|rk|whsec)_(?:(?:live|test)_)?([0-9A-Za-z]{16,})"), _mixed_match),
    (
        "JSON Web Token",
        re.compile(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        _always,
    ),
    ("HuggingFace token", re.compile(_B + r"(?:hf_|api_org_)([A-Za-z0-9]{30,})" + _E), _mixed_match),
    ("DigitalOcean token", re.compile(_B + r"do[opr]_v1_[a-f0-9]{64}" + _E), _always),
    ("npm token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), _always),
    (
        "npm token",
        re.compile(r"//[^\s/]{1,100}(?:/[^\s/]{0,100}){0,5}/:_authToken=\s*[A-Za-z0-9_-]{8,}"),
        _always,
    ),
    ("PyPI token", re.compile(_B + r"pypi-AgE[A-Za-z0-9_-]{50,}"), _always),
    ("SendGrid API key", re.compile(_B + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), _always),
    ("Twilio key", re.compile(_B + r"(?:SK|AC)[0-9a-fA-F]{32}" + _E), _always),
    (
        "Azure storage key",
        re.compile(r"(?i)(?:AccountKey|SharedAccessKey|AccessKey)\s*=\s*[A-Za-z0-9+/]{30,}={0,2}"),
        _always,
    ),
    ("Square token", re.compile(_B + r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,}"), _always),
    ("Telegram bot token", re.compile(_B + r"\d{8,10}:AA[0-9A-Za-z_-]{33}" + _E), _always),
    ("bearer token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)"), _mixed_match),
)

# detect-secrets plugins used, with the kind a refusal names. The other plugins are left out:
# high-entropy strings and keyword (prose and hashes), IBM/SoftLayer/Cloudant (keyword-driven,
# same weakness), Artifactory (matches all-caps words such as AP + 9 letters), public IPs (not
# secrets), basic auth (ours, url_credential_findings, also reads %-encoded passwords and lets
# the placeholders of documentation through: postgres://user:password@localhost), npm (its
# pattern //.+/:_authToken takes quadratic time on a long line; ours is bounded).
LIBRARY_PLUGINS: tuple[tuple[str, str], ...] = (
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
# The plugins look at each run of non-space characters 20 to 300 long: a shorter one holds no
# token any of them matches (the shortest, a Twilio SID or Mailchimp key, is 34), so a text
# without one does not even import the library; a longer one is left to our own patterns, since
# some plugin patterns (OpenAI's sk-[...]*[...]{20}T3BlbkFJ, JWT's) take quadratic time on a long
# run ("sk-" 20,000 times: a minute).
LIBRARY_MIN_WORD, LIBRARY_MAX_WORD = 20, 300
_LONG_WORD = re.compile(r"(?<!\S)\S{" + str(LIBRARY_MIN_WORD) + "," + str(LIBRARY_MAX_WORD) + r"}+(?!\S)")


@functools.cache
def _library() -> tuple[tuple[str, Any], ...]:
    """The detect-secrets plugins (imported on first use). Only their patterns and their own
    post-filters (analyze_string) run; their verify(), which would call the provider, never does."""
    import importlib

    plugins = []
    for module, name in LIBRARY_PLUGINS:
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        plugins.append((str(cls.secret_type), cls()))
    return tuple(plugins)


def library_findings(text: str) -> Iterator[Finding]:
    words = list(_LONG_WORD.finditer(text))
    if not words:
        return
    for kind, plugin in _library():
        for word in words:
            for pattern in plugin.denylist:
                for m in pattern.finditer(word.group(0)):
                    if any(True for _ in plugin.analyze_string(m.group(0))):
                        yield Finding(
                            f"{kind} (detect-secrets)", word.start() + m.start(), word.start() + m.end()
                        )


# ---------------------------------------------------------------------------------------------
# secrets told in words

_CODE_WORD = r"(?:door|alarm|gate|safe|lock|garage|entry|keypad|locker)[ -]code"
_PW_WORD = (
    r"(?:pass(?:word|phrase|wd|code)|pass[ -](?:word|phrase|code)|pwd|pin(?:[ -]?(?:code|number))?|"
    + _CODE_WORD
    + ")"
)
_PIN = re.compile(r"(?i)^(?:pin|" + _CODE_WORD + ")")  # their value is digits
# values that are no secret: words a sentence goes on with, placeholders, a removed value
_NOT_A_VALUE = frozenset(
    """a an the my your our his her their its this that it is was be been being in on at of for to from
    by with and or not no none null nil n/a na empty blank unknown unset required optional needed missing
    same different wrong right correct incorrect strong weak long short new old change changed reset removed
    redacted hidden secret private stored saved kept set protected manager managers vault field box
    prompt policy policies rules rule hint hints length see ask check use using also still here there
    below above same again too very really just only now then when where which who what how why
    something anything nothing everything somewhere expired invalid valid ok okay fine sent shared""".split()
)
# a value between a matching pair of quotes (not `code`: guides quote options so); a pair that does
# not match ('my wifi password" removes one memory's text') is prose
_QUOTED = r"(?:\"([^\"\n]{3,80})\"|'([^'\n]{3,80})'|“([^”\n]{3,80})”|‘([^’\n]{3,80})’)"
_VALUE = r"([^\s,;]{3,80})"


def _plain_value(raw: str) -> str:
    return raw.rstrip(".,;:!?)]}").strip("\"'“”‘’`")


def _placeholder(value: str) -> bool:
    v = value.lower()
    if not v or v in _NOT_A_VALUE:
        return True
    if v[0] in "([{<$%" or (len(set(v)) == 1):
        return True  # (removed), [redacted], <your password>, ${PASS}, %s, ******, xxxx
    return v in {"password", "passphrase", "pass", "passwd", "pwd", "pin", "changeme?", "xxx", "tbd"}


def _strong(value: str) -> bool:
    """A value said after "is" that reads as a password, not a word: it has a digit, a symbol or
    a capital inside it."""
    if len(value) < 4:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value[:-1])
    inner_capital = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return has_digit or has_symbol or inner_capital


def _pw_value_ok(keyword: str, value: str, *, assigned: bool) -> bool:
    value = _plain_value(value)
    if _placeholder(value):
        return False
    if _PIN.match(keyword.strip()):
        return bool(re.fullmatch(r"[#*]?\d{4,8}[#*]?", value))
    if assigned:
        return len(value) >= 4
    return _strong(value)


_PW_ASSIGNED = re.compile(r"(?i)\b(" + _PW_WORD + r")\b[\"']?\s*(?::|=|:=|=>|->)\s*" + _VALUE)
_PW_IS = re.compile(
    r"(?i)\b(" + _PW_WORD + r")\b(?:\s+(?:for|to|of|on)\s+[^\n.,;:]{1,40}?)?"
    r"\s+(?:is|was|is now|is still|will be|remains|became|reads|=)\s+(?:now\s+|still\s+)?" + _VALUE
)
_PW_QUOTED = re.compile(r"(?i)\b(" + _PW_WORD + r")\b[^\n\"'“‘`(),.;]{0,40}?" + _QUOTED)
_PW_SET = re.compile(r"(?i)\b(" + _PW_WORD + r")\s+(?:to|as)\s+" + _VALUE)
_PW_BARE = re.compile(r"(?i)\b(pin(?:[ -]?(?:code|number))?|passcode)\s+#?(\d{4,8})\b")


def password_findings(text: str) -> Iterator[Finding]:
    for m in _PW_ASSIGNED.finditer(text):
        if _pw_value_ok(m.group(1), m.group(2), assigned=True):
            yield Finding("password or PIN with its value", m.start(), m.end())
    for pattern in (_PW_IS, _PW_SET):
        for m in pattern.finditer(text):
            if _pw_value_ok(m.group(1), m.group(2), assigned=False):
                yield Finding("password or PIN with its value", m.start(), m.end())
    for m in _PW_QUOTED.finditer(text):
        quoted = next(g for g in m.groups()[1:] if g is not None)
        if not _placeholder(_plain_value(quoted)) and _pw_value_ok(m.group(1), quoted, assigned=True):
            yield Finding("password or PIN with its value", m.start(), m.end())
    for m in _PW_BARE.finditer(text):
        yield Finding("password or PIN with its value", m.start(), m.end())


_URL_CREDS = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://([^\s/:@]{1,64}):([^\s/@]{1,128})@[^\s/@]+")


def url_credential_findings(text: str) -> Iterator[Finding]:
    for m in _URL_CREDS.finditer(text):
        if not _placeholder(_plain_value(m.group(2))):
            yield Finding("credentials in a URL", m.start(), m.end())


# api_key = ..., "client secret is ...", "my private key: ..."
_CRED_WORD = (
    r"(?:api[_ -]?key|api[_ -]?secret|app[_ -]?secret|secret[_ -]?(?:access[_ -]?)?key|client[_ -]?secret"
    r"|(?:access|auth|refresh|bearer|api|session)[_ -]?token|private[_ -]?key|signing[_ -]?key|secret|token)"
)
_CRED = re.compile(
    r"(?i)\b" + _CRED_WORD + r"\b[\"']?\s*(?::|=|:=|=>|\bis\b|\bwas\b)\s*[\"']?([A-Za-z0-9_\-+/=.~]{16,})"
)


def credential_findings(text: str) -> Iterator[Finding]:
    for m in _CRED.finditer(text):
        value = m.group(1)
        if _mixed(value):
            yield Finding("credential assignment (key, token or secret with its value)", m.start(), m.end())


_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = re.compile(r"(?i)aws|secret")


def aws_secret_findings(text: str) -> Iterator[Finding]:
    for m in _AWS_SECRET.finditer(text):
        value = m.group(1)
        if not (_mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)):
            continue  # a git commit id or a hex hash is lowercase
        if _AWS_CONTEXT.search(text[max(0, m.start() - 80) : m.start()]):
            yield Finding("AWS secret access key", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# cards

_CARD = re.compile(r"(?<![\d.,/-])(\d{4}(?:[ -]?\d{2,6}){2,4}|\d{13,19})(?![\d/]|[.,-]\d)")
_CVV = re.compile(
    r"(?i)\b(?:cvv2?|cvc2?|csc|cvn|card security code|security code)\b\s*(?:is|:|=|#|-)?\s*\d{3,4}\b"
)


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_issuer(digits: str) -> bool:
    """Starts as a payment card number does: Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37,
    Discover 6011/64/65, JCB 35, Diners 30/36/38, UnionPay 62, Maestro 50/56-69. Not 978/979
    (an ISBN-13), not 1 (order numbers, timestamps)."""
    if digits[:3] in ("978", "979"):
        return False
    return digits[0] in "23456"


# A UUID (aimos's ids, and many others') holds digit runs that can pass for a card number: about one
# random UUID in 800 did ("53033190-7660-45b1-..."), so a memory id in a message was withheld as a
# secret. No card number is written in a UUID's shape.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def card_findings(text: str) -> Iterator[Finding]:
    uuids = [m.span() for m in _UUID.finditer(text)]
    for m in _CARD.finditer(text):
        if any(start <= m.start() < end for start, end in uuids):
            continue
        digits = re.sub(r"[ -]", "", m.group(1))
        if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
            continue
        if _card_issuer(digits) and luhn(digits):
            yield Finding("payment card number", m.start(), m.end())
    for m in _CVV.finditer(text):
        yield Finding("card security code (CVV)", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# key material without its label

_HEX_KEY = re.compile(r"(?<![0-9A-Za-z])((?:0x)?(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{128}))(?![0-9A-Za-z])")
# words before a hex string that say it is no secret: aimos prints hashes, ids and public keys
_HASH_WORDS = re.compile(
    r"(?i)(?:sha|hash|digest|checksum|\bsum\b|commit|merkle|root|receipt|fingerprint|public|pubkey|"
    r"(?<![a-z])ids?(?![a-z])|event|request|txid|transaction|block|etag|integrity|blake|md5)"
)
_SECRET_WORDS = re.compile(r"(?i)(?:private|secret|seed|priv\b|signing|wallet|mnemonic|password|passphrase)")


def _window(text: str, at: int, width: int = 60) -> str:
    start = max(0, at - width)
    line_start = text.rfind("\n", 0, at) + 1
    return text[max(start, line_start) : at]


def _hex_secret_context(text: str, at: int) -> bool:
    return bool(_SECRET_WORDS.search(_window(text, at)))


def _is_hash_context(text: str, at: int) -> bool:
    return bool(_HASH_WORDS.search(_window(text, at)))


def hex_key_findings(text: str) -> Iterator[Finding]:
    """32 or 64 bytes in hex are a private key unless the words before it say it is a hash, an id
    or a public key (and do not say private, secret or seed)."""
    for m in _HEX_KEY.finditer(text):
        if len(set(m.group(1).lower())) < 3:
            continue  # "0" * 64: a placeholder
        if _hex_secret_context(text, m.start()) or not _is_hash_context(text, m.start()):
            yield Finding("raw private key (32 or 64 bytes in hex)", m.start(), m.end())


_PEM_LINES = re.compile(
    r"(?m)(?:^[ \t]*[A-Za-z0-9+/]{60,76}[ \t]*\r?\n){3,}(?:[ \t]*[A-Za-z0-9+/]{0,76}={0,2}\s*$)?"
)


def der_private_key(data: bytes) -> bool:
    """DER of a private key: a SEQUENCE whose first element is the version INTEGER 0 or 1
    (PKCS#1, PKCS#8, SEC1). Certificates and public keys start otherwise. Or OpenSSH's format."""
    if data.startswith(b"openssh-key-v1\x00"):
        return True
    if len(data) < 8 or data[0] != 0x30:
        return False
    length = data[1]
    offset = 2 if length < 0x80 else 2 + (length & 0x7F)
    return data[offset : offset + 3] in (b"\x02\x01\x00", b"\x02\x01\x01")


def key_body_findings(text: str) -> Iterator[Finding]:
    for m in _PEM_LINES.finditer(text):
        body = re.sub(r"\s", "", m.group(0))
        data = b64_bytes(body)
        public = data is not None and data[:1] == b"\x30" and not der_private_key(data)
        if not public:
            yield Finding("private key body (PEM without its header)", m.start(), m.end())
    for m in B64_RUN.finditer(text):
        data = b64_bytes(m.group(0))
        if data is not None and len(data) >= 32 and der_private_key(data):
            yield Finding("private key (base64 DER)", m.start(), m.end())


WORD_RULES: tuple[Callable[[str], Iterator[Finding]], ...] = (
    password_findings,
    url_credential_findings,
    credential_findings,
    aws_secret_findings,
    card_findings,
    hex_key_findings,
    key_body_findings,
)


def token_findings(text: str) -> Iterator[Finding]:
    for kind, pattern, check in TOKEN_RULES:
        for m in pattern.finditer(text):
            if check(m, text):
                yield Finding(kind, m.start(), m.end())


def findings_in(text: str, *, library: bool = True) -> Iterator[Finding]:
    """Every shape in ``text`` itself (no normalising, no decoding)."""
    yield from token_findings(text)
    for rule in WORD_RULES:
        yield from rule(text)
    if library:
        yield from library_findings(text)
