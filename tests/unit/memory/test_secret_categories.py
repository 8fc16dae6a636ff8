"""The shapes people paste that the gate let through (issue 35 item 10): each category caught under
its own kind, the finding's span on the secret, the refusal quoting none of it; the checksums and
format rules that tell them from ordinary text; and sentences that name these things without a
value still pass."""

from __future__ import annotations

import base64
import random
import unicodedata

import pytest

from aimos.errors import SecretDetectedError
from aimos.eval.secret_corpus import _b58check, _iban, _mnemonic
from aimos.memory.gates import find_secret, refuse_secret_fields
from aimos.memory.secret_checksums import bip39_checksum, iban_valid, wordlist

RNG = random.Random(35)
SEED_12 = " ".join(_mnemonic(RNG, 12))
SEED_24 = _mnemonic(RNG, 24)
KEY = bytes(RNG.randrange(1, 256) for _ in range(32))
WIF = _b58check(b"\x80" + KEY + b"\x01")
IBAN_ES = _iban(RNG, "ES")
IBAN_GB = "GB" + _iban(RNG, "GB")[2:]
B32 = base64.b32encode(bytes(RNG.randrange(256) for _ in range(20))).decode()
BASIC = base64.b64encode(b"svc-backup:Winter!2031").decode()
SPANISH_NFKD = " ".join(unicodedata.normalize("NFKD", w) for w in _mnemonic(RNG, 12, "spanish"))
SETUP_KEY = " ".join(B32.lower()[i : i + 4] for i in range(0, 32, 4))

# (text, the secret in it, words of the kind the refusal names): not the corpus's own fakes, so
# the rules are seen to generalise past them
CASES = [
    ("my wallet passphrase is velvet otter quarry lantern", "velvet otter quarry lantern", "password"),
    ("Passphrase: Purple Monkey Dishwasher Lamp", "Purple Monkey Dishwasher Lamp", "password"),
    ("my passphrase is velvet about quarry lantern", "velvet about quarry lantern", "password"),
    ("password Autumn#2029 for the NAS", "Autumn#2029", "password"),
    ("pw: Hunter2!", "Hunter2!", "password"),
    ("the wifi password's Sunshine!1234", "Sunshine!1234", "password"),
    ("la password è Roma!2031", "Roma!2031", "password"),
    ("valkey at rediss://:Zx81kQpl0mm@cache.internal:6380", ":Zx81kQpl0mm@", "credentials in a URL"),
    ("app.config['SECRET_KEY'] = 'flask-dev-key-2031'", "flask-dev-key-2031", "secret setting"),
    ('SECRET_KEY = "k#3!x@q-9zz"', "k#3!x@q-9zz", "secret setting"),
    ("  - POSTGRES_PASSWORD=harbour-light-77", "harbour-light-77", "secret setting"),
    ("spring.datasource.password=Tr4mline", "Tr4mline", "secret setting"),
    ("db:\n  db_password: Sunshine#1234", "Sunshine#1234", "secret setting"),
    ("<apiKey>Q2x9Lk0pZr7Ty1Wm</apiKey>", "Q2x9Lk0pZr7Ty1Wm", "secret setting"),
    ("curl -uadmin:Sunshine!1234 https://jenkins.example.com", "Sunshine!1234", "command line"),
    ("mysql -h db -uroot -p'Qu4rtz!' shop", "Qu4rtz!", "command line"),
    ("sshpass -pOrchid77 ssh ops@bastion", "Orchid77", "command line"),
    ("wget --http-password=Tr0ub4dor https://files.example.com/x", "Tr0ub4dor", "command line"),
    ("xfreerdp /u:admin /p:Rdp!2031 /v:host", "Rdp!2031", "command line"),
    (f"Proxy-Authorization: Basic {BASIC}", BASIC, "HTTP Basic"),
    (f"seed: {SEED_12}", SEED_12, "wallet recovery phrase"),
    ("\n".join(f"{i + 1}. {w}" for i, w in enumerate(SEED_24)), SEED_24[-1], "wallet recovery phrase"),
    (SPANISH_NFKD, SPANISH_NFKD, "recovery phrase"),
    (f"IBAN {IBAN_ES}", IBAN_ES, "IBAN"),
    (" ".join(IBAN_GB[i : i + 4] for i in range(0, 22, 4)), IBAN_GB[:4], "IBAN"),
    ("SS# 219 09 9998", "219 09 9998", "Social Security"),
    ("my social is 078051121", "078051121", "Social Security"),
    (f"otpauth://totp/Bank:ada?secret={B32}&issuer=Bank", B32, "one-time-password"),
    (f"Authy backup key {B32}", B32, "one-time-password"),
    (f"MFA setup key: {SETUP_KEY}", SETUP_KEY, "one-time-password"),
    (f"sweep {WIF} into the new wallet", WIF, "Bitcoin private key"),
    ("mailgun key-" + "3f" * 16, "key-" + "3f" * 16, "Mailgun"),
    ("la contraseña del wifi es Casa#2031", "Casa#2031", "password"),
    ("das WLAN-Passwort lautet Sommer2031", "Sommer2031", "password"),
    ("пароль от почты: Zvezda77", "Zvezda77", "password"),
    ("支付密码123456", "123456", "password"),
    ("비밀번호: Hangang2031", "Hangang2031", "password"),
    ("הסיסמה היא Shalom2031!", "Shalom2031!", "password"),
]


def fragments(secret: str) -> set[str]:
    """Pieces of the secret a refusal must not hold: each word of it 5 or more long that is not
    a plain word, and each run of 3 of its words."""
    words = secret.split()
    found = {w for w in words if len(w) >= 5 and not w.isalpha()}
    found |= {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}
    return found


@pytest.mark.parametrize(("text", "secret", "kind"), CASES, ids=[c[2] + " " + c[0][:24] for c in CASES])
def test_each_category_is_refused_by_its_kind_at_its_place(text: str, secret: str, kind: str) -> None:
    found = find_secret(text)
    assert found is not None, text
    assert kind in found.kind, found
    assert secret in text[found.start : found.end], (found, text[found.start : found.end])
    with pytest.raises(SecretDetectedError) as err:
        refuse_secret_fields({"value": text})
    message = f"{err.value.message} {err.value.hint}"
    assert kind in message and err.value.reason == "secret_detected"
    assert not [piece for piece in fragments(secret) if piece in message], message


NEAR_MISSES = [
    "my passphrase is in the vault",
    "the passphrase file is readable by other users",
    "my passphrase is stored in the drawer upstairs now",
    "the passphrase - it is long",
    "my passphrase is four random words",
    "password-protected zip file",
    "I changed my password 3 times this week",
    "redis://:password@localhost:6379 is the example",
    "SECRET_KEY = os.getenv('SECRET_KEY')",
    "DB_PASSWORD=<set me>",
    "PASSWORD_MIN_LENGTH=12 and TOKEN_URL=https://auth.example.com/token",
    "the <password></password> element is empty",
    "curl --user-agent 'Mozilla/5.0' https://example.com",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "mysql -u root -p",
    "--token instead of --password",
    "basic authentication is weak",
    "Authorization: Basic dXNlcg==",  # "user": no colon, no password
    "cli: crypto, store, identity, ledger, memory, recall, learning, verify, actions, housekeeper, eval, tui",
    "you have that thing you can use when you need help to find what they want",
    "the SSN has nine digits",
    "SSN 000-12-3456, 666-12-3456, 912-12-3456, 123-00-4567 and 123-45-0000 are never issued",
    "call 123-45-6789",  # the format without its name
    "enable 2FA with an authenticator app",
    B32,  # a base32 run with no word of two-factor sign-in near it
    "otpauth://totp/Bank:ada?issuer=Bank",
    "[node-core-utils-credentials]: https://github.com/nodejs/node-core-utils#setting-up-credentials",
    "crypto: pass empty passphrases to OpenSSL properly (Tobias Nießen)",
    "the password's in the vault",
    "the password is case sensitive remember that",
    "my password is hard to remember but easy to type",
    "API_KEY=abc # a comment",
    "mot de passe oublié",
    "mi contraseña es segura",
    "我忘记密码了",
    "şifremi unuttum",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_words_of_these_shapes_without_a_value_pass(text: str) -> None:
    assert find_secret(text) is None, find_secret(text)


def test_iban_needs_its_checksum_and_its_country_length() -> None:
    assert iban_valid(IBAN_ES) and find_secret(f"IBAN {IBAN_ES}") is not None
    wrong_digit = IBAN_ES[:-1] + str((int(IBAN_ES[-1]) + 1) % 10)
    assert not iban_valid(wrong_digit) and find_secret(f"IBAN {wrong_digit}") is None
    assert not iban_valid(IBAN_ES + "0") and not iban_valid("XX" + IBAN_ES[2:])


def test_wif_needs_its_checksum_unless_it_is_told_as_a_key() -> None:
    broken = WIF[:-1] + ("2" if WIF[-1] != "2" else "3")
    assert find_secret(broken) is None
    found = find_secret(f"import {broken} into the wallet")
    assert found is not None and "Bitcoin private key" in found.kind


def test_bip39_checksum_and_the_rules_for_a_run_of_list_words() -> None:
    english = {w: i for i, w in enumerate(wordlist("english"))}
    assert bip39_checksum([english["abandon"]] * 11 + [english["about"]])
    assert not bip39_checksum([english["abandon"]] * 12)
    assert bip39_checksum([english[w] for w in SEED_24])
    # twelve words of the list, the checksum failing and one word twice: not a phrase by itself...
    repeated = " ".join(["abandon"] * 12)
    assert find_secret(repeated) is None
    # ...but a phrase when it is told as one, and eleven words are too few
    assert find_secret(f"my seed phrase: {repeated}") is not None
    assert find_secret(" ".join(SEED_12.split()[:11])) is None


def test_a_seed_phrase_in_another_language_passes_its_checksum() -> None:
    for language in ("french", "italian", "czech", "japanese", "korean", "chinese_simplified"):
        words = [unicodedata.normalize("NFC", w) for w in _mnemonic(RNG, 12, language)]
        found = find_secret(("\u3000" if language == "japanese" else " ").join(words))
        assert found is not None and "recovery phrase" in found.kind, language


def test_an_id_is_not_an_iban_but_the_same_groups_alone_are() -> None:
    """A UUID's last groups can pass as a dashed IBAN (these two were found among 20,000 random
    ids): inside an id they are not refused, anywhere else they are."""
    for memory_id in ("0584ec67-9bd5-4912-be39-95bce90314c5", "221ab7cb-f811-49b4-be27-72a017976e4e"):
        tail = memory_id[19:]
        assert iban_valid(tail.replace("-", "").upper())
        assert find_secret(memory_id) is None
        assert find_secret(f"supersedes {memory_id}, see {memory_id}") is None
        # in capitals the groups read as an IBAN is written: found (aimos writes ids in lower case)
        assert find_secret(f"see {memory_id.upper()}") is not None
        assert find_secret(f"my account is {tail}") is not None
        assert find_secret(f"pay {tail.upper()} today") is not None
        assert find_secret(f"pay {tail.upper()}today") is None  # the length ends inside a word
    assert find_secret(f"IBAN {IBAN_ES} and id 0584ec67-9bd5-4912-be39-95bce90314c5") is not None
    # an IBAN dressed in a UUID's groups is written in capitals, as IBANs are: still found
    assert find_secret("id 0f1e2d3c-4b5a-4c7d-BE68-539007547034") is not None


@pytest.mark.parametrize("after", [" today", " please send", ", thanks", ".", " and 42 more", ""])
def test_an_iban_followed_by_words_is_found(after: str) -> None:
    """The IBAN shape takes in up to three more characters or groups after the number: the
    number is still found, written whole or in groups of four, and only the number is named."""
    grouped = " ".join(IBAN_ES[i : i + 4] for i in range(0, len(IBAN_ES), 4))
    for written in (IBAN_ES, grouped):
        text = f"send it to {written}{after}"
        finding = find_secret(text)
        assert finding is not None, text
        assert text[finding.start : finding.end] == written, (text, finding)
