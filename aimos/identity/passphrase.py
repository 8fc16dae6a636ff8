"""The master passphrase: where it is read from (never argv) and how it seals the master key."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import sys
from pathlib import Path

import nacl.exceptions
import nacl.pwhash
import nacl.secret
import nacl.utils

from aimos.crypto.canonical import json_loads
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.errors import EncodingError, PassphraseError, PassphraseSourceError
from aimos.terminal import visible

MIN_LENGTH = 8
CHOOSE_TRIES = 3  # tries to type a new passphrase at the terminal
ENV_FILE = "AIMOS_PASSPHRASE_FILE"
_OPS = nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE
_MEM = nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE
# the costs a sealed master may ask for when it is opened: aimos seals with _OPS and _MEM; a
# sealing that asks for more (a hub's owner could store one that asks for gigabytes) is refused
_MAX_OPS = nacl.pwhash.argon2id.OPSLIMIT_MODERATE
_MAX_MEM = nacl.pwhash.argon2id.MEMLIMIT_MODERATE


def _from_fd(fd: int) -> str:
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        raise PassphraseSourceError(f"cannot read the passphrase from file descriptor {fd}") from exc
    return b"".join(chunks).decode("utf-8").rstrip("\r\n")


class Passphrase(str):
    """The master passphrase as it was read, knowing the file it came from (``file``: the path
    AIMOS_PASSPHRASE_FILE names; None for a prompt or a descriptor), so a wrong one names it."""

    file: Path | None = None

    @classmethod
    def read_from(cls, value: str, file: Path | None) -> Passphrase:
        found = cls(value)
        found.file = file
        return found


def _from_file(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        raise PassphraseSourceError(f"{ENV_FILE} names {path}, which cannot be read") from None
    if st.st_mode & 0o077:
        raise PassphraseSourceError(
            f"the passphrase file {path} is readable by other users",
            f"Run `chmod 600 {path}` and try again.",
        )
    return path.read_text("utf-8").rstrip("\r\n")


def _say_source(path: Path) -> None:
    """The one line that says the passphrase came from a file (its path, never its content), on
    stderr after whatever the command already wrote to stdout."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    sys.stderr.write(visible(f"master passphrase read from {path} ({ENV_FILE})") + "\n")
    sys.stderr.flush()


def read_passphrase(*, fd: int | None = None, confirm: bool = False, purpose: str = "unlock") -> Passphrase:
    """Read the passphrase from --passphrase-fd, AIMOS_PASSPHRASE_FILE or a TTY prompt: the one
    place every command takes the master passphrase, so each says the same of where it came from
    (a file is named on stderr, once: a command reads the passphrase once)."""
    file = None
    if fd is not None:
        value = _from_fd(fd)
    elif os.environ.get(ENV_FILE):
        file = Path(os.environ[ENV_FILE]).expanduser()
        value = _from_file(file)
        _say_source(file)
    elif sys.stdin.isatty() and confirm:
        value = choose_on_terminal(f"Master passphrase ({purpose}): ", "Repeat the master passphrase: ")
    elif sys.stdin.isatty():
        value = getpass.getpass(f"Master passphrase ({purpose}): ")
    else:
        raise PassphraseSourceError("the master passphrase is needed and no terminal is attached")
    if confirm:
        check_new_passphrase(value)
    if not value:
        raise PassphraseError("the passphrase is empty")
    return Passphrase.read_from(value, file)


def wrong_passphrase(passphrase: str) -> PassphraseError:
    """The refusal of a passphrase that does not open the master; one read from a file names the
    file (after `aimos passphrase change` it still holds the old one)."""
    file = getattr(passphrase, "file", None)
    if file is None:
        return PassphraseError("wrong master passphrase")
    return PassphraseError(
        f"wrong master passphrase: the one in {file} ({ENV_FILE}) does not open the master "
        "(was it changed with `aimos passphrase change`?)",
        f"Put the current passphrase in {file}, or unset {ENV_FILE} to be asked for it.",
    )


def check_new_passphrase(value: str) -> str:
    """A passphrase to seal the master with: at least MIN_LENGTH characters."""
    if len(value) < MIN_LENGTH:
        raise PassphraseError(
            f"the passphrase is shorter than {MIN_LENGTH} characters",
            f"Choose a passphrase of at least {MIN_LENGTH} characters.",
        )
    return value


def choose_on_terminal(first: str, repeat: str) -> str:
    """A new passphrase typed at the terminal, asked again in place: one too short is said right
    after it is typed and asked again; two that differ ask for both again. After CHOOSE_TRIES
    tries, a PassphraseError naming the last slip (the caller has changed nothing yet)."""
    problem = ""
    for tries_left in range(CHOOSE_TRIES - 1, -1, -1):
        value = getpass.getpass(first)
        try:
            check_new_passphrase(value)
        except PassphraseError as exc:
            problem = f"{exc.message}. {exc.hint}"
        else:
            if getpass.getpass(repeat) == value:
                return value
            problem = "the two passphrases differ. Type the same passphrase twice."
        if tries_left:
            left = f"{tries_left} {'try' if tries_left == 1 else 'tries'} left"
            sys.stderr.write(f"  {problem[0].upper()}{problem[1:]} ({left})\n")
            sys.stderr.flush()
    raise PassphraseError(
        f"no passphrase was chosen in {CHOOSE_TRIES} tries (the last: {problem.partition('.')[0]})",
        f"Nothing was changed. Run the command again and type a passphrase of at least {MIN_LENGTH} "
        "characters, the same twice.",
    )


def read_old_and_new_from_fd(fd: int) -> tuple[str, str]:
    """`aimos passphrase change --passphrase-fd N --new-passphrase-fd N`: the current passphrase on
    the first line of N, the new one on the second (a final newline is allowed, nothing after)."""
    text = _from_fd(fd)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if len(lines) != 2 or not lines[0] or not lines[1]:
        raise PassphraseSourceError(
            f"file descriptor {fd} must hold two lines: the current passphrase, then the new one",
            "Give both on one descriptor as two lines, or the new one on its own --new-passphrase-fd.",
        )
    return lines[0], check_new_passphrase(lines[1])


def read_new_passphrase(*, fd: int | None = None) -> str:
    """The new master passphrase for `aimos passphrase change`: from --new-passphrase-fd, or typed
    twice at a TTY prompt (AIMOS_PASSPHRASE_FILE holds the current one, never the new)."""
    if fd is not None:
        value = _from_fd(fd)
    elif sys.stdin.isatty():
        return choose_on_terminal("New master passphrase: ", "Repeat the new master passphrase: ")
    else:
        raise PassphraseSourceError(
            "the new master passphrase is needed and no terminal is attached",
            "Give it with --new-passphrase-fd N (or both, as two lines, on --passphrase-fd N "
            "--new-passphrase-fd N); never on the command line.",
        )
    return check_new_passphrase(value)


def seal(secret: bytes, passphrase: str) -> str:
    """Argon2id(passphrase, salt) -> SecretBox(secret), as a JSON string (no plaintext inside)."""
    salt = nacl.utils.random(nacl.pwhash.argon2id.SALTBYTES)
    key = nacl.pwhash.argon2id.kdf(
        nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"), salt, opslimit=_OPS, memlimit=_MEM
    )
    box = nacl.secret.SecretBox(key).encrypt(secret)
    return json.dumps(
        {
            "v": 1,
            "kdf": "argon2id",
            "opslimit": _OPS,
            "memlimit": _MEM,
            "salt": b64u_encode(salt),
            "box": b64u_encode(bytes(box)),
        },
        sort_keys=True,
    )


def unseal(sealed: str, passphrase: str) -> bytes:
    try:
        doc = json_loads(sealed)
        salt = b64u_decode(doc["salt"])
        box = b64u_decode(doc["box"])
        ops, mem = int(doc["opslimit"]), int(doc["memlimit"])
        if not (
            nacl.pwhash.argon2id.OPSLIMIT_MIN <= ops <= _MAX_OPS
            and nacl.pwhash.argon2id.MEMLIMIT_MIN <= mem <= _MAX_MEM
            and len(salt) == nacl.pwhash.argon2id.SALTBYTES
        ):
            raise ValueError("costs out of bounds")
    except (ValueError, KeyError, TypeError, EncodingError):
        raise PassphraseError(
            "the sealed master key in the keystore is damaged",
            "Restore the keystore from a backup; without it the master cannot sign.",
            reason="sealed_master_damaged",
        ) from None
    key = nacl.pwhash.argon2id.kdf(
        nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"), salt, opslimit=ops, memlimit=mem
    )
    try:
        return bytes(nacl.secret.SecretBox(key).decrypt(box))
    except nacl.exceptions.CryptoError:
        raise wrong_passphrase(passphrase) from None
