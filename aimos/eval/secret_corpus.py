"""Realistic secret shapes for `aimos eval secrets` and the tests, built when asked for.

Each shape has the right prefix, length and alphabet of the real thing, and is assembled here from
parts with a seeded random generator: no live-looking credential sits in the repository verbatim,
and every run builds the same fakes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from aimos.memory.secret_checksums import B58, IBAN_LENGTHS, wordlist
from aimos.memory.secret_shapes import luhn

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
        if luhn(body + check):
            return body + check
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
    out += _told_shapes(rng, pick)
    out += _line_shapes(rng, pick)
    out += _checksum_shapes(rng, pick)
    return out


Pick = Callable[[str, int], str]
BASE32 = string.ascii_uppercase + "234567"
_PASSWORDY = ("Sunshine", "Dragon", "Monkey", "Shadow", "Summer", "Tiger", "Falcon", "Coffee")


def _password(rng: random.Random, pick: Pick) -> str:
    """A password as people make them: a capitalised word, a symbol, digits."""
    return rng.choice(_PASSWORDY) + rng.choice("!@#$%&*") + pick(string.digits, 4)


def _told_shapes(rng: random.Random, pick: Pick) -> list[Shape]:
    """Passwords and passphrases told in words (English and other languages), SSNs, OTP seeds."""
    english = wordlist("english")
    words = " ".join(rng.choice(english) for _ in range(4))
    pw = _password(rng, pick)
    ssn = f"{rng.randrange(1, 666):03d}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"
    b32 = base64.b32encode(bytes(rng.randrange(256) for _ in range(20))).decode().rstrip("=")
    out = [
        Shape("passphrase of several words", f"my passphrase is {words}"),
        Shape("passphrase of several words, capitalised", "The master passphrase is " + words.title() + "."),
        Shape("password with no separator", f"password {pw}"),
        Shape("password with no separator, wifi", f"wifi Password {_password(rng, pick)} for the guests"),
        Shape("US SSN (dashes)", f"my SSN is {ssn}"),
        Shape("US SSN (spaces)", f"Social Security number: {ssn.replace('-', ' ')}"),
        Shape("US SSN (no separator)", f"SSN#{ssn.replace('-', '')}"),
        Shape("OTP seed: otpauth URI", f"otpauth://totp/ACME:ada@example.com?secret={b32}&issuer=ACME"),
        Shape("OTP seed: otpauth HOTP URI", f"otpauth://hotp/Bank?secret={b32[:16]}&counter=3"),
        Shape(
            "OTP seed: setup key in groups",
            "2FA setup key: " + " ".join(b32.lower()[i : i + 4] for i in range(0, 32, 4)),
        ),
        Shape("OTP seed: TOTP secret", f"the TOTP secret for the VPN is {b32}"),
        Shape(
            "two-factor backup codes",
            "GitHub recovery codes: " + ", ".join(f"{pick(HEX, 5)}-{pick(HEX, 5)}" for _ in range(4)),
        ),
    ]
    languages = [
        ("French", "mon mot de passe est {}"),
        ("Spanish", "mi contraseña es {}"),
        ("Spanish, colon", "Contraseña: {}"),
        ("Portuguese", "minha senha é {}"),
        ("German", "mein Passwort ist {}"),
        ("German, colon", "Kennwort: {}"),
        ("Dutch", "het wachtwoord is {}"),
        ("Russian", "мой пароль {}"),
        ("Chinese", "我的密码是{}"),
        ("Chinese, colon", "密码：{}"),
        ("Italian", "la password è {}"),
        ("Polish", "moje hasło to {}"),
        ("Swedish", "mitt lösenord är {}"),
        ("Japanese", "パスワードは{}です"),
        ("Korean", "비밀번호는 {} 입니다"),
        ("Turkish", "wifi şifresi: {}"),
        ("Czech", "heslo je {}"),
        ("Greek", "ο κωδικός πρόσβασης είναι {}"),
    ]
    out += [Shape(f"password in {name}", form.format(_password(rng, pick))) for name, form in languages]
    return out


def _line_shapes(rng: random.Random, pick: Pick) -> list[Shape]:
    """Settings (.env, config, code), command lines and HTTP Basic credentials."""
    pw = _password(rng, pick)
    basic = base64.b64encode(f"deploy:{_password(rng, pick)}".encode()).decode()
    settings = {
        "URL credentials with an empty user": f"cache is redis://:{pick(ALNUM, 20)}@redis.internal:6379/0",
        "SECRET_KEY quoted (Django)": f"SECRET_KEY = 'django-insecure-{pick(ALNUM + '#!@%^&*', 40)}'",
        "secret_key quoted (Flask)": f'app.secret_key = "{pick(ALNUM, 12)}"',
        ".env line: password": f"DB_PASSWORD={pw}",
        ".env line: export token": f"export SERVICE_TOKEN={pick(ALNUM, 32)}",
        ".env file": "APP_ENV=production\nDEBUG=false\n"
        f"STRIPE_API_KEY={pick(ALNUM, 28)}\nJWT_SECRET={pick(ALNUM, 24)}",
        "config (YAML)": f"database:\n  user: app\n  db_password: {pw}",
        "config (JSON)": '{"clientId": "web", "clientSecret": "' + pick(ALNUM, 30) + '"}',
        "config (XML)": f"<datasource><user>app</user><password>{pw}</password></datasource>",
        "env before a command": f"PGPASSWORD={pw} psql -h db -U app",
        "HTTP Basic header": f"Authorization: Basic {basic}",
        "HTTP Basic header in curl": f"curl -H 'authorization: basic {basic}' https://api.example.com",
        "HTTP Basic in code": f'requests.get(url, auth=("deploy", "{pw}"))',
        "Authorization: Token header": f"Authorization: Token {pick(HEX, 40)}",
    }
    commands = {
        "curl -u": f"curl -u admin:{pw} https://ci.example.com/api",
        "curl --user quoted": f"curl --user 'ops:{pick(ALNUM, 14)}' https://x.example.com",
        "mysql -p quoted": f"mysql -u root -p'{pw}' shop",
        "mysql -pSECRET": f"mysqldump -h db -u backup -p{pick(ALNUM, 12)} shop > shop.sql",
        "sshpass": f"sshpass -p '{pw}' ssh deploy@10.0.0.5",
        "--password=": f"pg_dump --dbname=shop --password={pick(ALNUM, 14)}",
        "--password value": f"mongodump --username admin --password {pw} --out /b",
        "redis-cli -a": f"redis-cli -h cache -a {pick(ALNUM, 16)} ping",
        "docker login -p": f"docker login -u bot -p {pick(ALNUM, 20)} registry.example.com",
        "openssl pass:": f"openssl pkcs12 -in k.p12 -passin pass:{pw} -nodes",
        "echo | sudo -S": f"echo '{pw}' | sudo -S apt-get update",
        "net use /user:": f"net use \\\\files\\team /user:CORP\\ada {pw}",
    }
    return [Shape(k, t) for k, t in settings.items()] + [
        Shape(f"command line: {k}", t) for k, t in commands.items()
    ]


def _b58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, rest = divmod(number, 58)
        out = B58[rest] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32(hrp: str, data: bytes) -> str:
    """bech32 (BIP-173) of ``data`` under ``hrp``: the 5-bit groups and the 6-character checksum."""
    acc, bits, groups = 0, 0, []
    for byte in data:
        acc, bits = acc << 8 | byte, bits + 8
        while bits >= 5:
            bits -= 5
            groups.append(acc >> bits & 31)
    if bits:
        groups.append(acc << (5 - bits) & 31)
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + groups + [0] * 6
    chk = 1
    for v in values:
        top, chk = chk >> 25, (chk & 0x1FFFFFF) << 5 ^ v
        for i, g in enumerate((0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)):
            chk ^= g if top >> i & 1 else 0
    polymod = chk ^ 1
    checksum = [polymod >> 5 * (5 - i) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[g] for g in groups + checksum)


def _mnemonic(rng: random.Random, count: int, language: str = "english") -> list[str]:
    """A BIP-39 phrase of ``count`` words whose checksum holds."""
    entropy = bytes(rng.randrange(256) for _ in range(count * 4 // 3))
    bits = len(entropy) * 8
    number = int.from_bytes(entropy, "big") << bits // 32 | hashlib.sha256(entropy).digest()[0] >> (
        8 - bits // 32
    )
    words = wordlist(language)
    return [unicodedata.normalize("NFC", words[number >> 11 * (count - 1 - i) & 2047]) for i in range(count)]


def _iban(rng: random.Random, country: str) -> str:
    bban = "".join(rng.choice(string.digits) for _ in range(IBAN_LENGTHS[country] - 4))
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{check:02d}{bban}"


def _checksum_shapes(rng: random.Random, pick: Pick) -> list[Shape]:
    """IBANs, wallet keys and recovery phrases, Mailgun and age keys."""
    de, fr, gb, nl = (_iban(rng, c) for c in ("DE", "FR", "GB", "NL"))
    grouped = " ".join(de[i : i + 4] for i in range(0, len(de), 4))
    key = bytes(rng.randrange(1, 256) for _ in range(32))
    twelve, twenty_four = _mnemonic(rng, 12), _mnemonic(rng, 24)
    xprv = bytes.fromhex("0488ade4") + bytes(9) + bytes(rng.randrange(256) for _ in range(32)) + b"\0" + key
    return [
        Shape("IBAN grouped in fours", f"pay the rent to {grouped}"),
        Shape("IBAN compact", f"IBAN: {fr}"),
        Shape("IBAN in a sentence (GB)", f"my account is {gb}, sort it out"),
        Shape("IBAN lower case", f"iban {nl.lower()}"),
        Shape("IBAN grouped, words after", f"transfer it to {grouped} before friday please"),
        Shape("IBAN compact, a word after", f"{fr} is where the rent goes"),
        Shape("seed phrase: 12 words", " ".join(twelve)),
        Shape("seed phrase: 24 words numbered", " ".join(f"{i + 1}. {w}" for i, w in enumerate(twenty_four))),
        Shape("seed phrase: 18 words, commas", "recovery phrase: " + ", ".join(_mnemonic(rng, 18))),
        Shape("seed phrase: 12 words, lines", "my seed words\n" + "\n".join(_mnemonic(rng, 12))),
        Shape("seed phrase: capitalised", " ".join(w.capitalize() for w in _mnemonic(rng, 15))),
        Shape("seed phrase: Spanish", " ".join(_mnemonic(rng, 12, "spanish"))),
        Shape("seed phrase: French", "phrase de récupération : " + " ".join(_mnemonic(rng, 12, "french"))),
        Shape("seed phrase: Japanese", "\u3000".join(_mnemonic(rng, 12, "japanese"))),
        Shape("Bitcoin private key (WIF, uncompressed)", "wallet key " + _b58check(b"\x80" + key)),
        Shape("Bitcoin private key (WIF, compressed)", _b58check(b"\x80" + key + b"\x01")),
        Shape("Bitcoin private key (WIF, testnet)", "import " + _b58check(b"\xef" + key + b"\x01")),
        Shape("wallet extended private key (xprv)", _b58check(xprv)),
        Shape("age secret key", _bech32("age-secret-key-", key).upper()),
        Shape("Mailgun API key", f"mailgun: key-{pick(HEX, 32)}"),
        Shape("Mailgun API key (new format)", f"MG {pick(HEX, 32)}-{pick(HEX, 8)}-{pick(HEX, 8)}"),
    ]


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
    # words of the shapes above without a value
    "change the wifi password next month",
    "my passphrase is in the vault",
    "the passphrase file is readable by other users",
    "my passphrase is stored in the drawer upstairs now",
    "my passphrase is long and hard to type",
    "the passphrase for the backup is stored in the safe deposit box",
    "my password is written on a sticky note under the keyboard",
    "I changed my password 3 times this week",
    "the IBAN starts with two letters and two check digits",
    "send it to the IBAN on the invoice, not the old one",
    "what is a seed phrase",
    "the seed phrase has 12 or 24 words",
    "write your recovery phrase on paper and keep it somewhere safe",
    "never share your 24-word recovery phrase with anyone, not even support",
    "my SSN is on the card in the drawer",
    "the social security office opens at 9",
    "enable 2FA with an authenticator app",
    "the TOTP code from the authenticator expired",
    "save your backup codes somewhere safe",
    "the otpauth link opened the authenticator",
    "use Basic authentication only over HTTPS",
    "curl -u takes a user and asks for the password",
    "mysql -p prompts for the password",
    "mkdir -p build && cd build",
    "ssh -p 2222 deploy@build.example.com",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "DB_PASSWORD=${DB_PASSWORD}",
    "API_KEY=<your key here>",
    "SECRET_KEY = os.environ['SECRET_KEY']",
    "PASSWORD_MIN_LENGTH=12",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "a WIF key starts with 5, K or L",
    "AGE-SECRET-KEY-1 starts an age identity file",
    "mot de passe oublié",
    "le mot de passe est dans le coffre",
    "¿Olvidaste tu contraseña? Haz clic aquí",
    "mi contraseña es segura",
    "Passwort vergessen? Klicken Sie hier",
    "mein Passwort ist zu kurz",
    "esqueci minha senha",
    "het wachtwoord is te kort",
    "забыли пароль?",
    "我忘记密码了",
    "パスワードを忘れました",
    "비밀번호를 잊어버렸어요",
    "şifremi unuttum",
    "la password deve avere almeno 12 caratteri",
    "hasło musi mieć 8 znaków",
    "lösenordet måste vara minst 12 tecken",
)
