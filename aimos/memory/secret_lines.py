"""Secrets in lines of configuration and commands (pure, no I/O): a setting whose name says it
holds a secret, with its value (a .env line, a config file, code: DB_PASSWORD=..., SECRET_KEY =
'...', "clientSecret": "..."), a password in a command line (curl -u user:pass, mysql -pSECRET,
sshpass -p, --password=...), and HTTP Basic credentials (an Authorization: Basic header).

A setting without a value, or with a reference in its place (${DB_PASSWORD}, os.environ[...],
<your key>), is no secret.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from aimos.memory.secret_forms import Finding, Lazy, lazy
from aimos.memory.secret_words import finditer_near, mentions, mixed, near, placeholder, plain_value, strong

# ---------------------------------------------------------------------------------------------
# a setting named for a secret, with its value

SETTING = "secret setting with its value (.env, config or code)"
# where a setting's name ends (upper case, words joined by _): the secret words; a name that goes on
# past them (PASSWORD_MIN_LENGTH, TOKEN_URL, SECRET_NAME) names something else
_SECRET_ENDS = lazy(
    r"(?:^|_)(?:SECRETS?|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PASSCODE|CREDENTIALS?|API_?KEY|ACCESS_KEY|"
    r"SECRET_(?:ACCESS_)?KEY|PRIVATE_KEY|SIGNING_KEY|ENCRYPTION_KEY|MASTER_KEY|AUTH_KEY|APP_KEY|"
    r"CLIENT_KEY|LICENSE_KEY|SESSION_KEY|HMAC_KEY|JWT_KEY|SECRET_KEY_BASE)$"
    r"|_(?:PWD|PASS|AUTH)$|(?:PASSWORD|PASSWD|SECRET|TOKEN|PASSPHRASE)$|^SSHPASS$"
)
_ANY_KEY = lazy(r"(?:^|_)KEY$")  # STRIPE_KEY, OPENAI_KEY: a key when its value is one
# the end of a name, then what assigns it: the name is read backwards from there
_SETTING_END = lazy(
    r"(?i)(secrets?|token|passw(?:or)?d|passphrase|passcode|pwd|pass|credentials?|key|key_base|auth)"
    r"[\"']?\]?[ \t]*(:=|=>|=|:)(?!//)[ \t]*"
)
_SETTING_HINTS = ("secret", "token", "pass", "pwd", "credential", "key", "auth")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_QUOTED_VALUE = lazy(r"([\"'`])([^\"'`\n]{1,200})\1")
# a value up to a space, a quote, ";" or ","; "#" starts a comment only where a value would start
_BARE_VALUE = lazy(r"[^\s\"'`#;,][^\s\"'`;,]{0,199}")
# a reference in place of a value: a variable, a call, an attribute, a template
_REFERENCE = lazy(r"(?i)^(?:[$%<{\[(]|os\.|process\.env|env[(\[.]|getenv|ENV\[|settings\.|config\.)")
_CODE_REF = lazy(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*)?$|.*[()\[\]{}]")
_NOT_VALUES = frozenset(
    """true false none null nil undefined yes no on off changeme change_me changeit example sample
    dummy test testing todo tbd fixme redacted placeholder secret password token xxx env required
    optional string str bytes int bool value""".split()
)


def _setting_name(text: str, end: int) -> tuple[int, str]:
    start = end
    while start > 0 and text[start - 1] in _NAME_CHARS:
        start -= 1
    while start < end and text[start] in "-.":
        start += 1
    return start, text[start:end]


def _upper_name(name: str) -> str:
    """DB_PASSWORD, db.password, clientSecret, client-secret: CLIENT_SECRET (its last part)."""
    last = re.split(r"[.]", name)[-1]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", last).replace("-", "_").upper()


def _looks_like_identifier(name: str) -> bool:
    """A setting's name, not a word of prose: joined words (_ . - or camelCase) or all capitals."""
    return any(c in name for c in "_.-") or name.isupper() or bool(re.search(r"[a-z][A-Z]", name))


def _value_ok(value: str, *, quoted: bool, env_style: bool, any_key: bool) -> bool:
    value = plain_value(value) if not quoted else value.strip()
    if len(value) < 4 or placeholder(value) or _REFERENCE().match(value):
        return False
    if "://" in value and not quoted:
        return False  # a web address (one with a password in it is the URL rule's)
    low = value.lower()
    if low in _NOT_VALUES or low.startswith(("your", "my_", "my-", "insert", "enter", "put_", "replace")):
        return False
    if not quoted and _CODE_REF().match(value):
        return False
    if any_key:
        return len(value) >= 20 and mixed(value) and " " not in value and any(c.isdigit() for c in value)
    return quoted or env_style or strong(value)


_XML_SETTING = lazy(
    r"(?i)<([\w.:-]{0,40}(?:password|passwd|secret|token|api[_-]?key|apikey|passphrase|credentials?))>"
    r"([^<\n]{4,200})</\1>"
)


def setting_findings(text: str) -> Iterator[Finding]:
    for m in finditer_near(_XML_SETTING, text, near(text, ("</",), 260, 60)):
        if _value_ok(m.group(2), quoted=True, env_style=False, any_key=False):
            yield Finding(SETTING, m.start(), m.end())
    if "=" not in text and ":" not in text:
        return
    for m in finditer_near(_SETTING_END, text, near(text, _SETTING_HINTS, 0, 24)):
        name_end = m.end(1)
        start, name = _setting_name(text, name_end)
        if not name or not _looks_like_identifier(name) or name[0].isdigit():
            continue
        upper = _upper_name(name)
        secret_named, any_key = bool(_SECRET_ENDS().search(upper)), bool(_ANY_KEY().search(upper))
        if not (secret_named or any_key):
            continue
        quoted = _QUOTED_VALUE().match(text, m.end())
        value_m = quoted or _BARE_VALUE().match(text, m.end())
        if value_m is None:
            continue
        value = quoted.group(2) if quoted else value_m.group(0)
        # NAME=value with nothing between: a .env or shell line, where a plain word is a value
        env_style = m.group(2) == "=" and m.start(2) == name_end and m.end(2) == m.end()
        if _value_ok(value, quoted=bool(quoted), env_style=env_style, any_key=any_key and not secret_named):
            if start > 0 and text[start - 1] in "\"'":
                start -= 1
            yield Finding(SETTING, start, value_m.end())


# ---------------------------------------------------------------------------------------------
# a password in a command line

COMMAND = "password in a command line"
_ARG = r"""(?:"([^"\n]{1,128})"|'([^'\n]{1,128})'|([^\s"'|;&]{1,128}))"""
_LINE = r"[^\n|;&]{0,200}?"
# Each pattern starts with the command's name or the option (literal first: the cheap way for a
# pattern to skip through prose); that it starts a word is checked after.
_COMMAND_RULES: tuple[Lazy, ...] = (
    # curl -u user:pass, wget --user, httpie -a, smbclient -U user%pass
    lazy(
        r"(?:curl|wget|http|https|xh|lftp|aria2c)\b" + _LINE + r"\s(?:-u|--user|--proxy-user|-a|--auth|-U)"
        r"(?:\s+|=)?[\"']?[^\s\"':%@-][^\s\"':%@]{0,63}:" + _ARG
    ),
    lazy(r"(?:smbclient|rpcclient|smbmap)\b" + _LINE + r"\s-U\s+[\"']?[^\s\"'%]{1,64}%" + _ARG),
    # mysql -pSECRET / -p'SECRET' (the value joined to -p; "-p" alone asks for it), 7z -pSECRET
    lazy(
        r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mysqlpump|mariadb|mariadb-dump|"
        r"mariadb-admin)\b" + _LINE + r"\s-p" + _ARG
    ),
    lazy(r"(?:7z|7za|7zz|rar|unrar)\b" + _LINE + r"\s-p" + _ARG),
    # sshpass -p SECRET, redis-cli -a, sqlcmd -P, ldapsearch -w, zip -P, docker login -p, mongosh -p
    lazy(r"sshpass\b" + _LINE + r"\s-p\s*" + _ARG),
    lazy(r"redis-cli\b" + _LINE + r"\s-a\s+" + _ARG),
    lazy(r"(?:sqlcmd|bcp|osql|isql)\b" + _LINE + r"\s-P\s*" + _ARG),
    lazy(r"ldap\w*\b" + _LINE + r"\s-w\s+" + _ARG),
    lazy(r"(?:zip|unzip|zipcloak)\b" + _LINE + r"\s-P\s*" + _ARG),
    # psexec -p, rdesktop -p, xfreerdp /p:, net use ... /user:NAME SECRET, htpasswd -b FILE USER SECRET
    lazy(r"(?:psexec|paexec|rdesktop)\b" + _LINE + r"\s-p\s+" + _ARG),
    lazy(r"(?:xfreerdp|wlfreerdp|sdl-freerdp)\b" + _LINE + r"\s/p:" + _ARG),
    lazy(r"net\s+use\b" + _LINE + r"\s/user:\S+\s+" + _ARG),
    lazy(r"htpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+" + _ARG),
    lazy(r"sudo\s+-S\b" + _LINE + r"<<<\s*" + _ARG),
    lazy(
        r"(?:docker|podman|buildah|skopeo|helm|oras|nerdctl|az|oc|cf|argocd)\b"
        + _LINE
        + r"\blogin\b"
        + _LINE
        + r"\s-p\s+"
        + _ARG
    ),
    lazy(r"(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b" + _LINE + r"\s-p\s+" + _ARG),
    # openssl -passin pass:SECRET, keytool -storepass SECRET
    lazy(r"-pass(?:in|out)?\s+[\"']?pass:" + _ARG),
    lazy(r"-(?:src|dest)?(?:store|key)pass\s+" + _ARG),
    # --password=SECRET, --db-password SECRET, --api-key=..., --token ...
    lazy(
        r"--(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|secret|token|api-?key|apikey|"
        r"access-key|secret-key|auth-token)(=|\s+)" + _ARG
    ),
    # echo SECRET | sudo -S, | docker login --password-stdin, | chpasswd
    lazy(
        r"echo\s+(?:-n\s+)?" + _ARG + r"\s*\|\s*[^\n]{0,80}?(?:sudo\s+-S|--password-stdin|--stdin|chpasswd)"
    ),
)
_COMMAND_HINTS = (
    "curl", "wget", "http", "xh ", "lftp", "aria2c", "smb", "rpcclient", "mysql", "mariadb", "7z", "rar",
    "sshpass", "redis-cli", "sqlcmd", "bcp", "osql", "isql", "ldap", "zip", "login", "mongo", "-pass",
    "pass", "secret", "token", "key", "echo", "psexec", "rdesktop", "freerdp", "net use", "sudo",
)  # fmt: skip


def _starts_word(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_-")


def command_findings(text: str) -> Iterator[Finding]:
    if not mentions(text, _COMMAND_HINTS):
        return
    for pattern in _COMMAND_RULES:
        for m in pattern().finditer(text):
            if not _starts_word(text, m.start()):
                continue
            groups = m.groups()
            # "--token instead of": a bare word after a spaced option is a value if it reads as one
            spaced = len(groups) == 4 and groups[0] != "=" and not (groups[1] or groups[2])
            value = next((g for g in groups[-3:] if g), "")
            if not value or value[0] == "-" or placeholder(plain_value(value)) or _REFERENCE().match(value):
                continue
            if value.lower() in _NOT_VALUES:
                continue
            if spaced and not strong(value):
                continue  # "--token instead of ...": a word, not a value
            yield Finding(COMMAND, m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# HTTP Basic credentials

_AUTH_HEADER = lazy(
    r"(?i)\bauthorization\s*:\s*(?:token|apikey|api-key|key|sso-key|digest|ssws|splunk)\s+"
    r"([A-Za-z0-9._~+/=:-]{16,})"
)
_BASIC = lazy(r"(?i)\bbasic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
_BASIC_CODE = lazy(
    r"(?:HTTPBasicAuth|BasicAuth|auth)\s*(?:=\s*)?\(\s*[\"'][^\"'\n]{1,64}[\"']\s*,\s*[\"']([^\"'\n]{4,128})[\"']\s*\)"
)


def basic_credentials(token: str) -> bool:
    """The base64 of user:password, the password not empty."""
    raw = token + "=" * (-len(token) % 4)
    try:
        decoded = base64.b64decode(raw, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    _, colon, password = decoded.partition(":")
    return bool(colon) and bool(password) and decoded.isprintable() and not placeholder(password)


def basic_auth_findings(text: str) -> Iterator[Finding]:
    for m in finditer_near(_AUTH_HEADER, text, near(text, ("authorization",), 0, 40)):
        if mixed(m.group(1)):
            yield Finding("credentials in an Authorization header", m.start(), m.end())
    for m in finditer_near(_BASIC, text, near(text, ("basic",), 0, 20)):
        if basic_credentials(m.group(1)):
            yield Finding("HTTP Basic credentials", m.start(), m.end())
    for m in finditer_near(_BASIC_CODE, text, near(text, ("auth",), 10, 300)):
        if not placeholder(m.group(1)) and m.group(1).lower() not in _NOT_VALUES:
            yield Finding("HTTP Basic credentials", m.start(), m.end())
