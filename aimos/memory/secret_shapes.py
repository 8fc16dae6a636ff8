"""The secret shapes the write gate looks for (pure, no I/O; the forms of a text it looks at are
in secret_forms), and findings_in, the one door to all of them.

A finding carries the kind of secret and its span in the text as given, never the matched text.
The families of shapes:

- well-known token formats, from detect-secrets' regex plugins (imported lazily, and only for a
  text holding a word long enough to be a token: the library costs ~0.2 s to import) and our own
  patterns for the formats it lacks or matches too narrowly (Anthropic, HuggingFace,
  DigitalOcean, npm without an .npmrc, GitLab, Stripe test keys, Azure keys of any length, ...);
- secrets told in words (secret_words): a password, passphrase or PIN with its value in English
  and other languages, credentials in a URL, an AWS secret access key near "aws" or "secret", a US
  Social Security number near its name, a one-time-password seed;
- secrets in lines of configuration and commands (secret_lines): a setting named for a secret with
  its value (.env, config, code), a password in a command line, HTTP Basic credentials;
- shapes with a checksum (secret_checksums): an IBAN, a Bitcoin private key (WIF, xprv), a wallet
  recovery phrase (BIP-39); here, a card number that passes the Luhn check, and its CVV;
- key material without its label: a PEM body without its header, a PuTTY key, base64 DER of a
  private key, and 32 or 64 bytes in hex (unless the text says it is a hash, an id or a public key).

detect-secrets' high-entropy and keyword plugins are not used: they flag ordinary prose and
hashes (aimos prints many) and have no notion of a value in a sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from aimos.memory.secret_checksums import iban_findings, seed_phrase_findings, wallet_key_findings
from aimos.memory.secret_forms import B64_RUN, Finding, Lazy, b64_bytes, lazy
from aimos.memory.secret_lines import basic_auth_findings, command_findings, setting_findings
from aimos.memory.secret_words import (
    aws_secret_findings,
    credential_findings,
    foreign_password_findings,
    mixed,
    otp_findings,
    passphrase_findings,
    password_findings,
    ssn_findings,
    url_credential_findings,
    window,
)

__all__ = ["Finding", "card_findings", "findings_in", "luhn"]

_B = r"(?<![A-Za-z0-9])"  # not inside a longer token (an underscore before still counts)
_E = r"(?![A-Za-z0-9])"

Check = Callable[[re.Match[str], str], bool]


def _always(m: re.Match[str], text: str) -> bool:
    return True


def _mixed_match(m: re.Match[str], text: str) -> bool:
    return mixed(m.group(m.lastindex or 0))


# ---------------------------------------------------------------------------------------------
# token formats written by us (what detect-secrets lacks or matches too narrowly)

_BECH32 = "[qpzry9x8gf2tvdw0s3jn54khce6mua7l]"
# tokens whose prefix names the service: Shopify, Atlassian, Linear, Doppler, Postman, Databricks,
# Grafana, New Relic, Vault, Pulumi, Sentry, Figma, Notion, Replicate, Groq, Perplexity, xAI,
# Tailscale, Supabase, Mapbox, Alibaba, Tencent, Netlify, Docker, Bitbucket, PlanetScale, Buildkite,
# Fly.io, Heroku, Clojars
_PREFIXED_TOKENS = (
    r"(?:shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|ATATT3[A-Za-z0-9_=-]{50,}|lin_api_[A-Za-z0-9]{40}"
    r"|dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9._-]{40,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}"
    r"|dapi[a-f0-9]{32}(?:-\d)?|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"
    r"|NRAK-[A-Z0-9]{27}|hv[sbr]\.[A-Za-z0-9_-]{24,}|pul-[a-f0-9]{40}|sntry[su]_[A-Za-z0-9+/=_-]{40,}"
    r"|figd_[A-Za-z0-9_-]{40,}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}|r8_[A-Za-z0-9]{37}"
    r"|gsk_[A-Za-z0-9]{52}|pplx-[A-Za-z0-9]{48}|xai-[A-Za-z0-9]{80}"
    r"|tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}|sbp_[a-f0-9]{40}"
    r"|sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}|LTAI[A-Za-z0-9]{16,20}|AKID[A-Za-z0-9]{32}"
    r"|nfp_[A-Za-z0-9]{36}|dckr_pat_[A-Za-z0-9_-]{27,}|ATBB[A-Za-z0-9_=.-]{32,}"
    r"|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}|bkua_[a-f0-9]{40}|fo1_[A-Za-z0-9_-]{43}"
    r"|HRKU-[A-Za-z0-9_-]{40,}|CLOJARS_[a-z0-9]{60})"
)

# the formats that may hold a space or a line break: looked for in the whole text
SPACED_TOKEN_RULES: tuple[tuple[str, Lazy, Check], ...] = (
    (
        "private key block",
        lazy(r"-----BEGIN[ _-](?:[A-Z0-9]+[ _-])*PRIVATE[ _-]KEY(?:[ _-]BLOCK)?-----"),
        _always,
    ),
    ("PuTTY private key", lazy(r"PuTTY-User-Key-File-\d+\s*:"), _always),
    (
        "npm token",
        lazy(r"//[^\s/]{1,100}(?:/[^\s/]{0,100}){0,5}/:_authToken=\s*[A-Za-z0-9_-]{8,}"),
        _always,
    ),
    (
        "Azure storage key",
        lazy(r"(?i)(?:AccountKey|SharedAccessKey|AccessKey)\s*=\s*[A-Za-z0-9+/]{30,}={0,2}"),
        _always,
    ),
    ("bearer token", lazy(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)"), _mixed_match),
)
# the formats that are one run of 15 or more characters without a space: looked for in such runs
TOKEN_RULES: tuple[tuple[str, Lazy, Check], ...] = (
    (
        "AWS access key id",
        lazy(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}(?![a-z0-9])"),
        _always,
    ),
    (
        "GitHub token",
        lazy(_B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        _always,
    ),
    (
        "GitLab token",
        lazy(_B + r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,}"),
        _always,
    ),
    ("Anthropic API key", lazy(_B + r"sk-ant-[A-Za-z0-9_-]{20,}"), _always),
    (
        "OpenAI-style API key",
        lazy(_B + r"sk-(?:proj-|svcacct-|admin-|live-|test-)?([A-Za-z0-9_-]{20,})"),
        _mixed_match,
    ),
    ("Slack token", lazy(_B + r"xox[abposre]-[A-Za-z0-9-]{10,}"), _always),
    (
        "Slack webhook URL",
        lazy(r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]+/[A-Za-z0-9_/]+"),
        _always,
    ),
    ("Google API key", lazy(_B + r"AIza[0-9A-Za-z_-]{35}"), _always),
    ("Stripe key", lazy(_B + r"(?:sk|rk|whsec)_(?:(?:live|test)_)?([0-9A-Za-z]{16,})"), _mixed_match),
    (
        "JSON Web Token",
        lazy(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        _always,
    ),
    ("HuggingFace token", lazy(_B + r"(?:hf_|api_org_)([A-Za-z0-9]{30,})" + _E), _mixed_match),
    ("DigitalOcean token", lazy(_B + r"do[opr]_v1_[a-f0-9]{64}" + _E), _always),
    ("npm token", lazy(_B + r"npm_[A-Za-z0-9]{36}" + _E), _always),
    ("PyPI token", lazy(_B + r"pypi-AgE[A-Za-z0-9_-]{50,}"), _always),
    ("SendGrid API key", lazy(_B + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), _always),
    ("Twilio key", lazy(_B + r"(?:SK|AC)[0-9a-fA-F]{32}" + _E), _always),
    ("Square token", lazy(_B + r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,}"), _always),
    ("Telegram bot token", lazy(_B + r"\d{8,10}:AA[0-9A-Za-z_-]{33}" + _E), _always),
    ("Mailgun API key", lazy(_B + r"key-[0-9a-f]{32}" + _E), _always),
    ("Mailgun API key", lazy(_B + r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}" + _E), _always),
    (
        "age secret key",
        lazy(r"(?i)" + _B + r"AGE-(?:SECRET-KEY|PLUGIN-[A-Z0-9]+)-1" + _BECH32 + "{20,}"),
        _always,
    ),
    ("Nostr secret key", lazy(_B + r"nsec1" + _BECH32 + "{58}" + _E), _always),
    ("API token", lazy(_B + _PREFIXED_TOKENS + _E), _always),
    (
        "webhook URL with its token",
        lazy(r"(?i)discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_-]{60,}"),
        _always,
    ),
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
_LONG_WORD = lazy(r"(?<!\S)\S{" + str(LIBRARY_MIN_WORD) + "," + str(LIBRARY_MAX_WORD) + r"}+(?!\S)")
# A piece every match of the plugins' patterns holds, for each pattern: the AWS key prefixes and
# "aws" (any case); "AccountKey="; a Discord token's middle part between its dots; the GitHub and
# GitLab prefixes; a JWT's "eyJ"; a Mailchimp key's "-us" and digit; the OpenAI marker; a PEM
# header's "BEGIN" and PuTTY's; "pypi-"; "SG."; Slack's "xox?-" and its webhook host (any case);
# "sq0csp-"; Stripe's live prefixes; a Telegram bot id and its colon; a Twilio SID or key. A word
# holding none of them cannot be a library finding: it is not looked at, and a text with no word
# holding one does not import the library (~0.15 s). tests/unit/memory/test_library_gate.py
# checks every pattern of every plugin against it.
_LIBRARY_MAY_MATCH = lazy(
    r"A3T|ABIA|ACCA|AKIA|ASIA|(?i:aws)|AccountKey=|\.[\w-]{6}\.|gh[pousr]_|gl[a-z]{2,5}-|GR1348941"
    r"|eyJ|-us[0-9]|T3BlbkFJ|BEGIN|PuTTY-User-Key-File-2|pypi-|SG\.|(?i:xox[abposr]-|hooks\.slack\.com)"
    r"|sq0csp-|[rs]k_live_|\d{8}:|AC[a-z0-9]{32}|SK[a-z0-9]{32}"
)


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
    words = [w for w in _LONG_WORD().finditer(text) if _LIBRARY_MAY_MATCH().search(w.group(0))]
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
# cards

_CARD = lazy(r"(?<![\d.,/-])(\d{4}(?:[ -]?\d{2,6}){2,4}|\d{13,19})(?![\d/]|[.,-]\d)")
_CVV = lazy(r"(?i)\b(?:cvv2?|cvc2?|csc|cvn|card security code|security code)\b\s*(?:is|:|=|#|-)?\s*\d{3,4}\b")


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
_UUID = lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def card_findings(text: str) -> Iterator[Finding]:
    uuids = [m.span() for m in _UUID().finditer(text)]
    for m in _CARD().finditer(text):
        if any(start <= m.start() < end for start, end in uuids):
            continue
        digits = re.sub(r"[ -]", "", m.group(1))
        if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
            continue
        if _card_issuer(digits) and luhn(digits):
            yield Finding("payment card number", m.start(), m.end())
    for m in _CVV().finditer(text):
        yield Finding("card security code (CVV)", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# key material without its label

_HEX_KEY = lazy(r"(?<![0-9A-Za-z])((?:0x)?(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{128}))(?![0-9A-Za-z])")
# words before a hex string that say it is no secret: aimos prints hashes, ids and public keys
_HASH_WORDS = lazy(
    r"(?i)(?:sha|hash|digest|checksum|\bsum\b|commit|merkle|root|receipt|fingerprint|public|pubkey|"
    r"(?<![a-z])ids?(?![a-z])|event|request|txid|transaction|block|etag|integrity|blake|md5)"
)
_SECRET_WORDS = lazy(r"(?i)(?:private|secret|seed|priv\b|signing|wallet|mnemonic|password|passphrase)")


def _hex_secret_context(text: str, at: int) -> bool:
    return bool(_SECRET_WORDS().search(window(text, at)))


def _is_hash_context(text: str, at: int) -> bool:
    return bool(_HASH_WORDS().search(window(text, at)))


def hex_key_findings(text: str) -> Iterator[Finding]:
    """32 or 64 bytes in hex are a private key unless the words before it say it is a hash, an id
    or a public key (and do not say private, secret or seed)."""
    for m in _HEX_KEY().finditer(text):
        if len(set(m.group(1).lower())) < 3:
            continue  # "0" * 64: a placeholder
        if _hex_secret_context(text, m.start()) or not _is_hash_context(text, m.start()):
            yield Finding("raw private key (32 or 64 bytes in hex)", m.start(), m.end())


_PEM_LINES = lazy(
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
    for m in _PEM_LINES().finditer(text):
        body = re.sub(r"\s", "", m.group(0))
        data = b64_bytes(body)
        public = data is not None and data[:1] == b"\x30" and not der_private_key(data)
        if not public:
            yield Finding("private key body (PEM without its header)", m.start(), m.end())
    for m in B64_RUN.finditer(text):
        data = b64_bytes(m.group(0))
        if data is not None and len(data) >= 32 and der_private_key(data):
            yield Finding("private key (base64 DER)", m.start(), m.end())


# rules over the words of a text, and (LONG_WORD_RULES) rules whose shape is one run of 15 or more
# characters without a space, looked for only in a text that has one
WORD_RULES: tuple[Callable[[str], Iterator[Finding]], ...] = (
    password_findings,
    passphrase_findings,
    foreign_password_findings,
    url_credential_findings,
    credential_findings,
    setting_findings,
    command_findings,
    basic_auth_findings,
    ssn_findings,
    otp_findings,
    card_findings,
    iban_findings,
    seed_phrase_findings,
)
LONG_WORD_RULES: tuple[Callable[[str], Iterator[Finding]], ...] = (
    aws_secret_findings,
    wallet_key_findings,
    hex_key_findings,
    key_body_findings,
)
_LONG_RUN = lazy(r"\S{15,}")


def token_findings(text: str) -> Iterator[Finding]:
    for kind, pattern, check in SPACED_TOKEN_RULES:
        for m in pattern().finditer(text):
            if check(m, text):
                yield Finding(kind, m.start(), m.end())
    runs = [m.span() for m in _LONG_RUN().finditer(text)]
    for kind, pattern, check in TOKEN_RULES if runs else ():
        for start, end in runs:
            for m in pattern().finditer(text, start, end):
                if check(m, text):
                    yield Finding(kind, m.start(), m.end())


def findings_in(text: str, *, library: bool = True) -> Iterator[Finding]:
    """Every shape in ``text`` itself (no normalising, no decoding)."""
    long_word = _LONG_RUN().search(text) is not None
    yield from token_findings(text)
    for rule in WORD_RULES + LONG_WORD_RULES if long_word else WORD_RULES:
        yield from rule(text)
    if library and long_word:
        yield from library_findings(text)
