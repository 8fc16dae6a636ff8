"""What a command (CLI or TUI) needs from the brain: its connection, metadata, keystore, signers,
the clock."""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import (
    AimosError,
    ExpiryWarning,
    IdentityError,
    IntegrityError,
    KeychainError,
    NotInstalledError,
)
from aimos.identity.agents import DueEpoch, due_for_rotation
from aimos.identity.epochs import load_signer, revocation_at
from aimos.identity.keystore import Keystore, KeystoreCache, open_keystore
from aimos.identity.signer import Signer
from aimos.identity.trusted import IDENTITY_TABLES
from aimos.identity.validators import check_agent_id
from aimos.store import freshness
from aimos.store.connection import (
    Connection,
    EngineError,
    damaged_text_error,
    open_reader,
    open_writer,
    seal_with,
    unreadable_text,
)
from aimos.store.engine import skip_checkpoint_on_close, transaction_open
from aimos.store.meta import brain_meta
from aimos.store.seals import quiet_since_checked, recheck_anchors
from aimos.vocabulary import HOUSEKEEPER


def now() -> int:
    return int(time.time())


@dataclass
class Brain:
    conn: Connection
    meta: dict[str, str]
    keystore: Keystore
    _housekeeper: Signer | None = field(default=None, repr=False)
    # how a keystore is opened: open_keystore, or a KeystoreCache's open (an MCP server's)
    _open_keystore: Callable[[str, str], Keystore] = field(default=open_keystore, repr=False)

    @property
    def company_id(self) -> str:
        return self.meta["company_id"]

    def signer(self, agent_id: str) -> Signer:
        """The agent's current epoch with its key; one that ends soon warns (ExpiryWarning)."""
        check_agent_id(agent_id)  # refuses reserved ids (housekeeper) with a usage error
        signer = self._load(agent_id)
        at = now()
        if due_for_rotation(signer.valid_until, at):
            warnings.warn(DueEpoch(agent_id, signer.valid_until).warning(at), ExpiryWarning, stacklevel=2)
        return signer

    def housekeeper(self) -> Signer:
        """The housekeeper's epoch with its key, loaded once per session (it also seals writes),
        and again when its key was rotated since (`aimos housekeeper rotate-key` in another
        process while a TUI or an MCP server kept this session open)."""
        loaded = self._housekeeper
        if loaded is None or revocation_at(self.conn, HOUSEKEEPER, loaded.valid_from) is not None:
            self._housekeeper = loaded = self._load(HOUSEKEEPER)
        return loaded

    def _load(self, agent_id: str) -> Signer:
        """An epoch's key; when the keystore has none for the brain's newest epoch, first ask
        whether that epoch row is the brain's own (one copied in from another brain is an edit
        outside aimos: exit 5, not a keychain problem)."""
        try:
            return load_signer(self.conn, self.keystore, agent_id, now())
        except KeychainError:
            if self._follow_keystore_move():
                return load_signer(self.conn, self.keystore, agent_id, now())
            from aimos.identity.trusted import check_identities

            check_identities(self.conn)
            raise

    def _follow_keystore_move(self) -> bool:
        """True when the brain moved to another keystore since this session opened (`aimos keystore
        move` in another process while a TUI or an MCP server kept it open): it now uses that one."""
        meta = brain_meta(self.conn)
        if meta.get("keystore") in (None, self.keystore.kind):
            return False
        self.meta = meta
        self.keystore = self._open_keystore(meta["keystore"], meta["brain_id"])
        return True

    def master(self, passphrase_fd: int | None, purpose: str) -> KeyPair:
        """The master key, with the passphrase from the fd, AIMOS_PASSPHRASE_FILE or a TTY prompt."""
        from aimos.identity.passphrase import read_passphrase  # (only the master's acts load it)

        return self.master_with(read_passphrase(fd=passphrase_fd, purpose=purpose))

    def master_with(self, passphrase: str) -> KeyPair:
        """The master key, with a passphrase the caller already has (the TUI's password box)."""
        from aimos.identity.master import unlock_master

        try:
            return unlock_master(self.conn, self.keystore, passphrase)
        except KeychainError:
            if self._follow_keystore_move():
                return unlock_master(self.conn, self.keystore, passphrase)
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, kind: Any, exc: Any, traceback: Any) -> None:
        try:
            if unreadable_text(exc):
                # text that is not valid UTF-8 met by any read of the command: name the damaged
                # cells (the connection is still open here), whichever read met it; an error
                # that did not come from the brain (nothing damaged in it) stays what it was
                located = damaged_text_error(self.conn)
                if located.where:
                    raise located from exc
        finally:
            self.close()


def _not_installed() -> NotInstalledError:
    return NotInstalledError(f"no aimos brain at {paths.brain_path()}")


def require_brain() -> None:
    """Refuse (exit 3, with how to install) when there is no brain to work on."""
    if not paths.brain_path().exists():
        raise _not_installed()


def _check_anchored(conn: Connection, brain_id: str) -> None:
    """The anchors check before any command acts on the brain; a master row too damaged to read is
    left to the checks that name it (the identity check of every request, `aimos verify`)."""
    from aimos.identity.trusted import check_anchored

    try:
        check_anchored(conn, brain_id)
    except IdentityError:  # no master row at all: not the master anchors.json names
        conn.close()
        raise IntegrityError(
            "this brain holds no master identity, so it is not the brain anchors.json names",
            "Put your own brain file back (aimos restore BACKUP).",
            reason="master_not_anchored",
        ) from None
    except AimosError as exc:
        if getattr(exc, "reason", None) in ("brain_unanchored", "master_not_anchored"):
            conn.close()
            raise
    except (EngineError, KeyError, TypeError):
        pass


def _kept_anchor(conn: Connection) -> dict[str, Any] | None:
    """The brain's kept anchor from its keystore (None when the keystore cannot be opened: the
    freshness file beside anchors.json still stands)."""
    from aimos.identity.anchors import read_kept_anchor

    try:
        meta = brain_meta(conn)
    except (AimosError, EngineError):
        return None
    if "brain_id" not in meta:
        return None
    # the keystore the brain names, and the file keystore too (no prompt, no cost): the newest copy
    # found counts. The OS keychain is asked only for a brain that names it (asking it for a
    # file-keystore brain could pop an unlock prompt at `aimos status`)
    found = []
    for kind in dict.fromkeys((meta.get("keystore"), "file")):
        try:
            kept = read_kept_anchor(open_keystore(str(kind), meta["brain_id"]))
        except (AimosError, KeyError, ValueError):
            continue
        if kept is not None:
            found.append(kept)
    return max(found, key=lambda k: k["seq"], default=None)


freshness.read_kept_with(_kept_anchor)


def _keeper(brain: Brain) -> Callable[[int, bytes], None]:
    """Moves the kept anchor after a commit that changed the identity rows, unless the brain does
    not descend from it (it was rolled back or replaced): then the kept anchor stays as the
    evidence `verify`, `status` and `doctor` name, until the person confirms with `aimos anchor`."""
    from aimos.identity.anchors import keep_anchor, read_kept_anchor, revocations_held

    def keep(seq: int, link: bytes) -> None:
        kept = read_kept_anchor(brain.keystore)
        if kept is not None and freshness.behind_kept(brain.conn, kept):
            return
        held = revocations_held(brain.conn)
        known = {(a, v) for a, v in held}
        held += [r for r in (kept["revoked"] if kept else []) if (r[0], r[1]) not in known]
        keep_anchor(brain.keystore, seq, link.hex(), sorted(held))

    return keep


def open_brain(*, write: bool, keystores: KeystoreCache | None = None, anchored: bool = True) -> Brain:
    """The brain, its metadata and keystore; ``keystores``: a cache whose key reads last beyond
    this session (an MCP server's, for the life of its process). A brain anchors.json names no
    master for, or another master than its own, is refused (exit 5) unless ``anchored`` is off
    (`aimos anchor`, `aimos status`: they look at such a brain, they do not act on it)."""
    path = paths.brain_path()
    if not path.exists():
        raise _not_installed()
    conn = open_writer(path) if write else open_reader(path)
    meta = brain_meta(conn)
    if "brain_id" not in meta:
        conn.close()
        raise _not_installed()
    if anchored:
        _check_anchored(conn, meta["brain_id"])
    opener = keystores.open if keystores is not None else open_keystore
    brain = Brain(conn, meta, opener(meta["keystore"], meta["brain_id"]), _open_keystore=opener)
    if write:
        seal_with(conn, brain.housekeeper)  # writes are sealed by the housekeeper, loaded when needed
        freshness.keep_anchor_with(conn, _keeper(brain), IDENTITY_TABLES)
    return brain


# what stat says of a file: device, inode, size, mtime and ctime (ns); None when it is not there
FileMark = tuple[int, int, int, int, int]


def file_mark(path: Path) -> FileMark | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def brain_marks(path: Path) -> tuple[FileMark | None, FileMark | None]:
    """The brain file's mark and its WAL's: every write to either (through SQLite or not), a
    file put in its place or removed changes them (Linux stamps a file changed after a stat with
    a finer time than the last one)."""
    return file_mark(path), file_mark(path.with_name(path.name + "-wal"))


class KeptBrain:
    """One writing Brain session kept open across calls (an MCP server's, which makes one call at
    a time), so a call does not open the brain, load its keys and re-check a brain it already
    checked. The kept session is used again only when it is proven unchanged since its last call
    ended: the same brain path, the brain file and its WAL as that call left them (brain_marks:
    not replaced, removed or written by anyone else), and no other connection has committed since
    this one last checked the seals (PRAGMA data_version: seals.quiet_since_checked; a revocation,
    a rotation, a restore or an edit with the sqlite3 shell all commit). Then the checks of
    whatever lives outside the brain run as an opening does: anchors.json names its master, and
    the call's first write checks the freshness anchors (seals.recheck_anchors). Anything else, a
    call that failed included, closes the session and opens the brain anew (open_brain, every
    check). ``keep`` off: a new session for every call (the benchmarks' baseline)."""

    def __init__(self, keystores: KeystoreCache | None = None, *, keep: bool = True) -> None:
        self._keystores = keystores
        self._keep_open = keep
        self._brain: Brain | None = None
        self._path: Path | None = None
        self._opened: tuple[int, int] | None = None  # the device and inode the session opened
        self._marks: tuple[FileMark | None, FileMark | None] = (None, None)

    @contextlib.contextmanager
    def session(self) -> Iterator[Brain]:
        """The brain for one call: the kept session when it is still valid, else a new one; kept
        again when the call ends well, closed when it fails (as open_brain's Brain is)."""
        brain = self._take()
        try:
            yield brain
        except BaseException as exc:
            self._brain = None
            brain.__exit__(type(exc), exc, exc.__traceback__)  # names damaged text, closes
            raise
        self._keep(brain)

    def close(self) -> None:
        """Close the kept session (a server leaving); it checkpoints as any last connection
        closing does only when it is still valid."""
        brain, self._brain = self._brain, None
        if brain is not None:
            self._let_go(brain, checkpoint=self._valid(brain))

    def _valid(self, brain: Brain) -> bool:
        path = paths.brain_path()
        return path == self._path and brain_marks(path) == self._marks and quiet_since_checked(brain.conn)

    def _take(self) -> Brain:
        brain, self._brain = self._brain, None
        if brain is not None:
            if self._valid(brain):
                try:
                    _check_anchored(brain.conn, brain.meta["brain_id"])
                except BaseException:
                    brain.close()
                    raise
                recheck_anchors(brain.conn)
                return brain
            self._let_go(brain)
        path = paths.brain_path()
        brain = open_brain(write=True, keystores=self._keystores)
        opened = file_mark(path)
        self._path, self._opened = path, opened[:2] if opened else None
        return brain

    def _keep(self, brain: Brain) -> None:
        assert self._path is not None
        self._marks = brain_marks(self._path)
        mark = self._marks[0]
        if mark is None or mark[:2] != self._opened:
            self._let_go(brain)  # the file was replaced or removed during the call
        elif not self._keep_open or transaction_open(brain.conn):
            # (a statement left unfinished would hold its snapshot of the brain until the next call)
            self._let_go(brain, checkpoint=True)
        else:
            self._brain = brain

    @staticmethod
    def _let_go(brain: Brain, *, checkpoint: bool = False) -> None:
        """Close a session. One no longer valid closes without the checkpoint a last connection
        makes: the file it opened may have been replaced, removed or rewritten in place (a copy
        put back), and copying its WAL into that file, or removing the WAL beside the path, would
        mix another brain's pages into it or take its WAL away."""
        if not checkpoint:
            skip_checkpoint_on_close(brain.conn)
        brain.close()


def open_for_verification() -> Connection:
    """The writer's connection for `aimos verify` (migrated, with the registered functions), with no
    need of brain_meta or the keystore: a damaged brain_meta is a finding, not a reason not to look."""
    path = paths.brain_path()
    if not path.exists():
        raise _not_installed()
    return open_writer(path, verifying=True)


def expected_master_fingerprint(option: str | None, *, announce: bool = True) -> str:
    """The trust anchor for a verifier: the fingerprint the user gave, else the one `aimos install`
    wrote to anchors.json (outside the brain); never one taken from the data being verified."""
    import sys

    from aimos.crypto.encoding import is_hex64
    from aimos.errors import UsageError
    from aimos.identity.anchors import anchored_fingerprints

    if option is not None:
        if not is_hex64(option):
            raise UsageError("the master fingerprint must be 64 lowercase hex characters")
        return option
    fingerprints = anchored_fingerprints()
    if len(fingerprints) != 1:
        raise UsageError(
            "no single master fingerprint in anchors.json to verify against",
            "Give the expected one with --master-fingerprint HEX (the one `aimos install` printed).",
        )
    if announce:
        sys.stderr.write("verifying against the master fingerprint in anchors.json\n")
    return fingerprints.pop()
