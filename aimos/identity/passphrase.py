"""The master passphrase: where it is read from (never argv) and how it seals the master key."""

from __future__ import annotations

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

MIN_LENGTH = 8
ENV_FILE = "AIMOS_PASSPHRASE_FILE"
_OPS = nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE
_MEM = nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE


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


def read_passphrase(*, fd: int | None = None, confirm: bool = False, purpose: str = "unlock") -> str:
    """Read the passphrase from --passphrase-fd, AIMOS_PASSPHRASE_FILE or a TTY prompt."""
    if fd is not None:
        value = _from_fd(fd)
    elif os.environ.get(ENV_FILE):
        value = _from_file(Path(os.environ[ENV_FILE]).expanduser())
    elif sys.stdin.isatty():
        value = getpass.getpass(f"Master passphrase ({purpose}): ")
        if confirm and getpass.getpass("Repeat the master passphrase: ") != value:
            raise PassphraseError("the two passphrases differ", "Type the same passphrase twice.")
    else:
        raise PassphraseSourceError("the master passphrase is needed and no terminal is attached")
    if confirm and len(value) < MIN_LENGTH:
        raise PassphraseError(
            f"the passphrase is shorter than {MIN_LENGTH} characters",
            f"Choose a passphrase of at least {MIN_LENGTH} characters.",
        )
    if not value:
        raise PassphraseError("the passphrase is empty")
    return value


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
    except (ValueError, KeyError, TypeError, EncodingError):
        raise PassphraseError(
            "the sealed master key in the keystore is damaged",
            "Restore the keystore from a backup; without it the master cannot sign.",
        ) from None
    key = nacl.pwhash.argon2id.kdf(
        nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"), salt, opslimit=ops, memlimit=mem
    )
    try:
        return bytes(nacl.secret.SecretBox(key).decrypt(box))
    except nacl.exceptions.CryptoError:
        raise PassphraseError("wrong master passphrase") from None
