"""Secrets told in words (pure, no I/O): a password, passphrase or PIN with its value (in English
and in other languages), a credential with its value, credentials in a URL, an AWS secret access
key near "aws" or "secret", a US Social Security number near its name, and a one-time-password
seed near words of two-factor sign-in.

Each rule wants the value, not the word: "the password must be long", "my passphrase is in the
vault", "what is a seed phrase", "the SSN has nine digits" name a secret without telling one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aimos.memory.secret_forms import Finding, Lazy, lazy


def mixed(token: str) -> bool:
    """Has letters and digits, or upper and lower case: a generated token, not a word."""
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    return (has_digit and has_alpha) or (has_upper and has_lower)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``words`` (lower case) anywhere: a rule whose patterns need
    one of them looks no further in a text without (a substring test costs far less than a
    case-blind pattern that starts with a word boundary)."""
    low = text.lower()
    return any(w in low for w in words)


_SPACE = lazy(r"\s")


def near(text: str, words: tuple[str, ...], before: int, after: int) -> list[tuple[int, int]]:
    """The stretches of ``text`` from ``before`` characters before each place one of ``words``
    (lower case) is to ``after`` characters after it (and on to the end of the word there),
    merged, in order; none when no word is there. A rule whose patterns start at or near one of
    the words looks in these alone: a long text costs what its mentions of them cost."""
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): look everywhere
        return [(0, len(text))] if any(w in low for w in words) else []
    spans = []
    for word in words:
        at = low.find(word)
        while at >= 0:
            spans.append((max(0, at - before), at + len(word) + after))
            at = low.find(word, at + 1)
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    out = []
    for lo, hi in merged:
        space = _SPACE().search(text, hi) if hi < len(text) else None
        out.append((lo, space.start() if space is not None else len(text)))
    return out


def finditer_near(pattern: Lazy, text: str, spans: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in each of ``spans`` (from near), with their places in ``text``
    (the pattern is not compiled when there are none)."""
    for lo, hi in spans:
        yield from pattern().finditer(text, lo, hi)


def window(text: str, at: int, width: int = 60) -> str:
    """Up to ``width`` characters before ``at`` on its line."""
    start = max(0, at - width)
    line_start = text.rfind("\n", 0, at) + 1
    return text[max(start, line_start) : at]


def around(text: str, start: int, end: int, before: int = 80, after: int = 40) -> str:
    """The words around a span: ``before`` characters before it and ``after`` after it, on its
    line and the line above."""
    line_start = text.rfind("\n", 0, max(0, text.rfind("\n", 0, start))) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    return text[max(line_start, start - before) : start] + " " + text[end : min(line_end, end + after)]


# ---------------------------------------------------------------------------------------------
# a password, passphrase or PIN with its value

PW_RULE = "password or PIN with its value"
_CODE_WORD = r"(?:door|alarm|gate|safe|lock|garage|entry|keypad|locker)[ -]code"
_PW_WORD = (
    r"(?:pass(?:word|phrase|wd|code)|pass[ -](?:word|phrase|code)|pwd|pin(?:[ -]?(?:code|number))?|"
    + _CODE_WORD
    + ")"
)
_PIN = lazy(r"(?i)^(?:pin|" + _CODE_WORD + ")")  # their value is digits
# values that are no secret: words a sentence goes on with, placeholders, a removed value (and
# "forgotten" in the languages of _FOREIGN_WORDS)
_NOT_A_VALUE = frozenset(
    """a an the my your our his her their its this that it is was be been being in on at of for to from
    by with and or not no none null nil n/a na empty blank unknown unset required optional needed missing
    same different wrong right correct incorrect strong weak long short new old change changed reset removed
    redacted hidden secret private stored saved kept set protected manager managers vault field box
    prompt policy policies rules rule hint hints length see ask check use using also still here there
    below above same again too very really just only now then when where which who what how why
    something anything nothing everything somewhere expired invalid valid ok okay fine sent shared
    oublié oublie vergessen olvidada olvidado olvidé esqueci esquecida vergeten dimenticata dimenticato
    zapomniane glömt glemt unuttum забыл забыла забыли vide leer vacío vazio vuoto""".split()
)
# a value between a matching pair of quotes (not `code`: guides quote options so); a pair that does
# not match ('my wifi password" removes one memory's text') is prose
_QUOTED = r"(?:\"([^\"\n]{3,80})\"|'([^'\n]{3,80})'|“([^”\n]{3,80})”|‘([^’\n]{3,80})’)"
_VALUE = r"([^\s,;]{3,80})"


def plain_value(raw: str) -> str:
    return raw.rstrip(".,;:!?)]}").strip("\"'“”‘’`")


def placeholder(value: str) -> bool:
    v = value.lower()
    if not v or v in _NOT_A_VALUE:
        return True
    if v[0] in "([{<$%" or (len(set(v)) == 1):
        return True  # (removed), [redacted], <your password>, ${PASS}, %s, ******, xxxx
    return v in {"password", "passphrase", "pass", "passwd", "pwd", "pin", "changeme?", "xxx", "tbd"}


def strong(value: str) -> bool:
    """A value said after "is" that reads as a password, not a word: it has a digit, a symbol or
    a capital inside it."""
    if len(value) < 4:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value[:-1])
    inner_capital = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return has_digit or has_symbol or inner_capital


def _pw_value_ok(keyword: str, value: str, *, assigned: bool) -> bool:
    value = plain_value(value)
    if placeholder(value):
        return False
    if _PIN().match(keyword.strip()):
        return bool(re.fullmatch(r"[#*]?\d{4,8}[#*]?", value))
    if assigned:
        return len(value) >= 4
    return strong(value)


def _bare_ok(value: str) -> bool:
    """A value right after the word, with nothing between ("password Sunshine!1234"): letters and
    digits, six characters or more, and not a path, an option or a reference."""
    value = plain_value(value)
    if len(value) < 6 or placeholder(value) or value[0] in "/~.-#@" or "://" in value:
        return False
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_PW_ASSIGNED = lazy(r"(?i)\b(" + _PW_WORD + r")\b[\"']?\s*(?::|=|:=|=>|->)\s*" + _VALUE)
_PW_IS = lazy(
    r"(?i)\b(" + _PW_WORD + r")\b(?:\s+(?:for|to|of|on)\s+[^\n.,;:]{1,40}?)?"
    r"(?:\s+(?:is|was|is now|is still|will be|remains|became|reads)\s*:?|\s+(?:=|—|–|-)|['’]s)\s+"
    r"(?:now\s+|still\s+)?" + _VALUE
)
_PW_QUOTED = lazy(r"(?i)\b(" + _PW_WORD + r")\b[^\n\"'“‘`(),.;]{0,40}?" + _QUOTED)
_PW_SET = lazy(r"(?i)\b(" + _PW_WORD + r")\s+(?:to|as)\s+" + _VALUE)
_PW_BARE_PIN = lazy(r"(?i)\b(pin(?:[ -]?(?:code|number))?|passcode)\s+#?(\d{4,8})\b")
_PW_SHORT = lazy(r"(?i)\b(pw|pswd|passw)\b\s*(?::|=)\s*" + _VALUE)  # "pw: Hunter2!"
_PW_BARE = lazy(r"(?i)\b(pass(?:word|phrase|wd|code))[ \t]+" + _VALUE)

# a passphrase of several words: "my passphrase is correct horse battery staple". The words run
# until one a sentence goes on with; four or more of them are the passphrase.
_PHRASE_IS = lazy(
    r"(?i)\b(?:pass[ -]?(?:phrase|word)|passwd)\b(?:\s+(?:for|to|of|on)\s+[^\n.,;:]{1,40}?)?"
    r"\s*(?:\s(?:is|was|is now|will be|reads)\s*:?|=|:|—|–|\s-|['’]s)\s+"
    r"((?:[^\W\d_][\w'’-]*[ \t]+){3,11}[^\W\d_][\w'’-]*)"
)
_PROSE_WORDS = (_NOT_A_VALUE - {"correct", "incorrect", "right", "wrong"}) | frozenset(
    """am are were i me you he she we they him us them these those some any all each every both either
    neither so if as than but because while into onto under over behind inside beside near about
    never always quite pretty soon later today tomorrow yesterday one two three four five six seven
    eight nine ten eleven twelve several many few more most less word words letters characters chars
    digits numbers symbols written wrote down up out off safe safely secure easy hard random simple
    written kept saved stored somewhere paper notebook drawer file keychain app phone computer laptop
    has have had do does did can could will would should must may might not it's i'm that's don't
    isn't case sensitive remember forget know guess""".split()
)


# a first word that says something of the passphrase (readable, stored, missing, quickly) rather
# than being part of it, when prose words follow
_PREDICATE_ENDINGS = ("able", "ible", "ed", "ing", "ly")


def _is_phrase(value: str) -> bool:
    """Four or more words that read as a passphrase, not as the sentence going on: the words up
    to the first one prose is made of are four or more, or the first four hold one such word at
    most, not the first ("velvet about quarry lantern", not "in the vault")."""
    words = value.split()
    prose = [w.lower().strip("'’-") in _PROSE_WORDS for w in words]
    if words[0].lower().endswith(_PREDICATE_ENDINGS) and any(prose[1:]):
        return False  # "is readable by other users", "is stored in a drawer": the sentence goes on
    leading = next((i for i, p in enumerate(prose) if p), len(prose))
    return leading >= 4 or (len(prose) >= 4 and not prose[0] and sum(prose[:4]) <= 1)


def passphrase_findings(text: str) -> Iterator[Finding]:
    for m in finditer_near(_PHRASE_IS, text, near(text, ("pass",), 0, 160)):
        if _is_phrase(m.group(1)):
            yield Finding(PW_RULE, m.start(), m.end())


def password_findings(text: str) -> Iterator[Finding]:
    spans = near(text, ("pass", "pwd", "pin", "code", "pw", "pswd"), 12, 220)
    if not spans:
        return
    for m in finditer_near(_PW_ASSIGNED, text, spans):
        if _pw_value_ok(m.group(1), m.group(2), assigned=True):
            yield Finding(PW_RULE, m.start(), m.end())
    for pattern in (_PW_IS, _PW_SET):
        for m in finditer_near(pattern, text, spans):
            if _pw_value_ok(m.group(1), m.group(2), assigned=False):
                yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_PW_QUOTED, text, spans):
        quoted = next(g for g in m.groups()[1:] if g is not None)
        if not placeholder(plain_value(quoted)) and _pw_value_ok(m.group(1), quoted, assigned=True):
            yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_PW_BARE_PIN, text, spans):
        yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_PW_BARE, text, spans):
        if _bare_ok(m.group(2)):
            yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_PW_SHORT, text, spans):
        if _pw_value_ok(m.group(1), m.group(2), assigned=False):
            yield Finding(PW_RULE, m.start(), m.end())


# "password" in other languages. Words in scripts that put spaces between words take their value
# after a colon, a copula ("est", "ist", "es", "är", "это", ...) or nothing; the others (Chinese,
# Japanese, Korean, Thai) after a particle or a colon, and their value is the ASCII that follows.
_FOREIGN_WORDS = (
    "mdp|mot de passe|mots de passe|contraseña|contrasena|contrasenya|clave de acceso|"
    "senha|palavra-passe|palavra passe|passwort|kennwort|wachtwoord|parola d'ordine|hasło|haslo|"
    "lösenord|losenord|passord|adgangskode|kodeord|salasana|heslo|geslo|jelszó|jelszo|jelszav|parolă|"
    "parola|parole|lozinka|parool|slaptažodis|slaptazodis|şifre|sifre|пароль|пароля|паролем|гасло|"
    "κωδικός πρόσβασης|συνθηματικό|הסיסמה|הסיסמא|סיסמה|סיסמא|كلمة المرور|كلمة السر|رمز عبور|पासवर्ड|"
    "mật khẩu|mat khau|"
    "kata sandi|kata laluan|código pin|code pin|pin-code|pin-kode|pin-код"
)
_COPULA = (
    r"(?:is|est|es|era|é|e|è|ist|lautet|war|är|er|on|to|je|jest|este|és|olur|ir|это|—|–|-|είναι|היא|"
    r"הוא|هي|هو|adalah|ialah|là|ni|fica|será|sera|wäre|zijn|был|была)"
)
_OF_WHAT = (
    r"(?:de|du|des|del|da|do|dos|das|für|vom|von|zu|zum|voor|van|для|от|к|per|di|del|della|dla|för|till|"
    r"til|for|na|za|à|au|al|ao|alla|k)"
)
_FOREIGN_WORD = r"(?i)(?<!\w)(?:" + _FOREIGN_WORDS + r")\w{0,4}"
_FOREIGN = lazy(
    _FOREIGN_WORD + r"(?:\s+" + _OF_WHAT + r"\s+[^\n.,;:]{1,30}?)?"
    r"(?:\s*([:：=])\s*|\s+"
    + _COPULA
    + r"\s+(?:(?:now|maintenant|ahora|agora|jetzt|nu|ora|teraz|сейчас)\s+)?)"
    + _VALUE
)
# the English word in a sentence of another language: "la password è ...", "das Password ist ..."
_ENGLISH_WORD_FOREIGN_COPULA = lazy(
    r"(?i)\b(?:password|passphrase)\b\s+(?:è|é|est|ist|lautet|es|är|je|jest|este|és|là|adalah|είναι)\s+"
    + _VALUE
)
_FOREIGN_BARE = lazy(_FOREIGN_WORD + r"[ \t]+" + _VALUE)
_CJK_WORDS = "密码|密碼|口令|暗码|パスワード|暗証番号|パスコード|비밀번호|비번|암호|รหัสผ่าน|รหัส"
_CJK = lazy(
    r"(?:" + _CJK_WORDS + r")(?:是|为|為|は|が|を|는|은|이|가|คือ|です|、|\s)*?\s*([:：=])?\s*"
    r"([!-~]{3,80})"
)


def foreign_password_findings(text: str) -> Iterator[Finding]:
    spans = near(text, _FOREIGN_HINTS, 4, 180)
    for m in finditer_near(_FOREIGN, text, spans):
        if _pw_value_ok("password", m.group(2), assigned=bool(m.group(1))):
            yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_ENGLISH_WORD_FOREIGN_COPULA, text, spans):
        if _pw_value_ok("password", m.group(1), assigned=False):
            yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_FOREIGN_BARE, text, spans):
        if _bare_ok(m.group(1)):
            yield Finding(PW_RULE, m.start(), m.end())
    for m in finditer_near(_CJK, text, spans):
        value = plain_value(m.group(2))
        if _pw_value_ok("password", value, assigned=bool(m.group(1))):
            yield Finding(PW_RULE, m.start(), m.end())


# the words of _FOREIGN_WORDS and _CJK_WORDS as a text that holds one holds them (stems, and
# without accents for the words people type without them)
_FOREIGN_HINTS = (
    "password", "passphrase", "mdp", "mot de passe", "mots de passe", "contrase", "clave de", "senha",
    "palavra", "passwort", "kennwort", "wachtwoord", "parola", "hasło", "haslo", "lösenord", "losenord",
    "passord", "adgangskode", "kodeord", "salasana", "heslo", "geslo", "jelsz", "parolă", "lozinka",
    "parool", "parole", "slapta", "şifre", "sifre", "парол", "гасло", "κωδικός", "συνθηματικό", "סיסמ",
    "كلمة",
    "رمز", "पासवर्ड", "mật khẩu", "mat khau", "kata sandi", "kata laluan", "código pin", "code pin",
    "pin-co", "pin-kode", "pin-код", "密码", "密碼", "口令", "暗码", "パスワード", "暗証番号",
    "パスコード", "비밀번호", "비번", "암호", "รหัส",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# credentials in a URL, a credential with its value, an AWS secret access key

_URL_CREDS = lazy(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://([^\s/:@]{0,64}):([^\s/@]{1,128})@[^\s/@]+")


def url_credential_findings(text: str) -> Iterator[Finding]:
    """user:password@ in a URL, and :password@ with no user (redis://:secret@host)."""
    if "://" not in text:
        return
    for m in _URL_CREDS().finditer(text):
        if not placeholder(plain_value(m.group(2))):
            yield Finding("credentials in a URL", m.start(), m.end())


# api_key = ..., "client secret is ...", "my private key: ..."
_CRED_WORD = (
    r"(?:api[_ -]?key|api[_ -]?secret|app[_ -]?secret|secret[_ -]?(?:access[_ -]?)?key|client[_ -]?secret"
    r"|(?:access|auth|refresh|bearer|api|session|private)[_ -]?token|private[_ -]?key|signing[_ -]?key"
    r"|secret|token)"
)
_CRED = lazy(
    r"(?i)\b" + _CRED_WORD + r"\b[\"']?\s*(?::|=|:=|=>|\bis\b|\bwas\b)\s*[\"']?([A-Za-z0-9_\-+/=.~]{16,})"
)


def credential_findings(text: str) -> Iterator[Finding]:
    for m in finditer_near(_CRED, text, near(text, ("key", "secret", "token"), 24, 160)):
        value = m.group(1)
        if mixed(value):
            yield Finding("credential assignment (key, token or secret with its value)", m.start(), m.end())


_AWS_SECRET = lazy(r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = lazy(r"(?i)aws|secret")


def aws_secret_findings(text: str) -> Iterator[Finding]:
    if not mentions(text, ("aws", "secret")):
        return
    for m in _AWS_SECRET().finditer(text):
        value = m.group(1)
        if not (mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)):
            continue  # a git commit id or a hex hash is lowercase
        if _AWS_CONTEXT().search(text[max(0, m.start() - 80) : m.start()]):
            yield Finding("AWS secret access key", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# a US Social Security number near its name

_SSN = lazy(r"(?<![\d.-])(\d{3})([-. ]?)(\d{2})\2(\d{4})(?![\d-]|\.\d)")
_SSN_WORDS = lazy(
    r"(?i)(?<![a-z])(?:ssns?(?![a-z])|ss\s?(?:#|no(?![a-z])|num)|social[\s-]+security|soc\.?\s*sec(?![a-z])"
    r"|social\s+(?:no|num|#)|social(?:\s+(?:is|was)\b|\s*[:#=])|seguro\s+social|sécurité\s+sociale)"
)


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """Issued numbers: area not 000, 666 or 9xx; group not 00; serial not 0000."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def ssn_findings(text: str) -> Iterator[Finding]:
    spans = near(text, ("ssn", "ss#", "ss no", "ssno", "ss num", "social", "soc", "sécurité"), 45, 75)
    for m in finditer_near(_SSN, text, spans):
        if ssn_valid(m.group(1), m.group(3), m.group(4)) and _SSN_WORDS().search(
            around(text, m.start(), m.end(), 60, 30)
        ):
            yield Finding("US Social Security number", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# one-time-password seeds: an otpauth URI, a base32 setup key near two-factor words, backup codes

_OTPAUTH = lazy(
    r"(?i)\botpauth://(?:totp|hotp)/[^\s?]{0,200}\?[^\s]{0,300}?\bsecret=([A-Z2-7=%]{8,})"
    r"|\botpauth-migration://[^\s?]{0,40}\?data=[A-Za-z0-9%+/=_-]{8,}"
)
_TWO_FACTOR = lazy(
    r"(?i)\b(?:2fa|mfa|two[- ]?factor|2[- ]?step|two[- ]?step|totp|hotp|otp|one[- ]time|authenticator|"
    r"authy|setup key|set-up key|setup code|manual entry|backup key)\b"
)
_BASE32_KEY = lazy(
    r"(?<![A-Za-z0-9])(?:[A-Z2-7]{4}(?:[ -][A-Z2-7]{4}){3,15}|[a-z2-7]{4}(?:[ -][a-z2-7]{4}){3,15}"
    r"|[A-Z2-7]{16,128}|[a-z2-7]{16,128})(?![A-Za-z0-9])"
)
_BACKUP_CODES = lazy(
    r"(?i)\b(?:backup|recovery|emergency|scratch|2fa|mfa)[ -]codes?\b[^\n\w]{0,20}"
    r"((?:[A-Za-z0-9]{4,6}[ -]?[A-Za-z0-9]{3,6}[\s,;]+){2,}[A-Za-z0-9]{4,6}[ -]?[A-Za-z0-9]{3,6})"
)
OTP_SEED = "one-time-password seed (2FA secret)"
_OTP_HINTS = (
    "otp", "2fa", "mfa", "factor", "step", "one time", "one-time", "authenticator", "authy", "setup",
    "set-up", "manual entry", "backup", "recovery", "emergency", "scratch",
)  # fmt: skip


def _base32_key(run: str) -> bool:
    compact = run.replace(" ", "").replace("-", "")
    if len(compact) < 16:
        return False
    if any(c in "234567" for c in compact):
        return True
    return run == compact and run.isupper() and len(run) >= 24


def otp_findings(text: str) -> Iterator[Finding]:
    for m in finditer_near(_OTPAUTH, text, near(text, ("otpauth",), 0, 600)):
        yield Finding(OTP_SEED, m.start(), m.end())
    for m in finditer_near(_BASE32_KEY, text, near(text, _OTP_HINTS, 200, 160)):
        if _base32_key(m.group(0)) and _TWO_FACTOR().search(around(text, m.start(), m.end())):
            yield Finding(OTP_SEED, m.start(), m.end())
    for m in finditer_near(_BACKUP_CODES, text, near(text, ("code",), 20, 240)):
        codes = re.split(r"[\s,;]+", m.group(1))
        if sum(1 for c in codes if any(ch.isdigit() for ch in c)) >= 3:
            yield Finding("two-factor backup codes", m.start(), m.end())
