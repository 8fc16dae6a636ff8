"""Where aimos keeps its files: AIMOS_HOME or the platformdirs user dirs; nothing else decides.

With AIMOS_HOME set, every file aimos touches (brain, config, anchors, logs, state, file
keystore) lives under it, so one variable isolates a brain completely (tests rely on this).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

APP = "aimos"
BRAIN_FILENAME = "brain.sqlite3"


def _home() -> Path | None:
    value = os.environ.get("AIMOS_HOME")
    return Path(value).expanduser().absolute() if value else None


@contextmanager
def using_home(home: Path) -> Iterator[Path]:
    """Point AIMOS_HOME at ``home`` for the block (scratch brains, purge batches), then restore it."""
    old = os.environ.get("AIMOS_HOME")
    os.environ["AIMOS_HOME"] = str(home)
    try:
        yield home
    finally:
        if old is None:
            os.environ.pop("AIMOS_HOME", None)
        else:
            os.environ["AIMOS_HOME"] = old


def _user_dir(kind: str) -> Path:
    """The platformdirs user folder of that kind (data, config, log, state, cache) for aimos:
    platformdirs is imported only when a folder is asked for outside AIMOS_HOME."""
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP))


def data_dir() -> Path:
    home = _home()
    return home if home else _user_dir("data")


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else _user_dir("config")


def log_dir() -> Path:
    home = _home()
    return home / "logs" if home else _user_dir("log")


def state_dir() -> Path:
    home = _home()
    return home / "state" if home else _user_dir("state")


def cache_dir() -> Path:
    """The user's cache folder for aimos: files it can make again (the embedding model files found
    to be the pinned ones, the evaluations' embeddings), never a brain's data. Per user, not per
    brain: AIMOS_HOME does not move it."""
    return _user_dir("cache")


def brain_path() -> Path:
    return data_dir() / BRAIN_FILENAME


def anchors_path() -> Path:
    return config_dir() / "anchors.json"


def redactions_path(brain_id: str) -> Path:
    """The master's redaction records of a brain, kept beside anchors.json (record and signature,
    with the reason the master gave; no memory text)."""
    return anchors_path().with_name(f"redactions-{brain_id}.json")


def hub_state_path(brain_id: str) -> Path:
    """What this device sent to its sync hub and when it last synced (aimos/hub/device.py): no
    secret, no memory text (the URL and the content key are in the keystore)."""
    return state_dir() / "hub" / f"{brain_id}.json"


def hub_pushed_path(brain_id: str) -> Path:
    """The log of what this device pushed to its hub, record by record (aimos/hub/pushed.py): no
    secret, no memory text."""
    return hub_state_path(brain_id).with_suffix(".pushed")


def embedding_socket_path() -> Path:
    """The socket of this home's housekeeper (meaning/serve.py): in the user's runtime folder
    (XDG_RUNTIME_DIR, else the temporary folder), in a 0700 folder of this user named by a hash of
    the home. Not in the home: a home is copied, listed and compared by backups, uninstall and
    restore, and a Unix socket's path must stay short."""
    import hashlib
    import tempfile

    runtime = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    home = hashlib.sha256(str(data_dir().absolute()).encode("utf-8")).hexdigest()[:16]
    geteuid = getattr(os, "geteuid", None)
    uid = int(geteuid()) if geteuid is not None else -1  # -1: no socket is trusted there
    return Path(runtime) / f"aimos-embed-{uid}-{home}" / "embed.sock"


def nli_setting_path() -> Path:
    """The NLI judge a person enabled (epistemic/nli.py): its folder and pinned digests; absent, off."""
    return config_dir() / "nli.json"


def view_setting_path() -> Path:
    """How a person likes aimos's lists shown (actions/guides.py: aimos's guides hidden or shown):
    a view preference of this home, not brain data."""
    return config_dir() / "view.json"


def purge_receipts_dir() -> Path:
    """Where the purge ceremony writes its signed intents and receipts (outside the brain)."""
    return data_dir() / "purge-receipts"


def keystore_dir(brain_id: str) -> Path:
    return state_dir() / "keys" / brain_id


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) as 0700 directories; tighten an existing one."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


DOCUMENT_BYTES = 64 << 20  # a receipt or record a person hands to a verifier (they are KiB)


REPLACED_INFIX = ".replaced-"  # `aimos restore` keeps the brain it replaced as brain.sqlite3.replaced-<time>


def replaced_brains() -> list[Path]:
    """The brains `aimos restore` replaced and kept beside the brain (not their -wal/-shm files):
    copies of it that hold what it held, which a redaction must reach as it reaches backups."""
    brain = brain_path()
    return sorted(
        p
        for p in brain.parent.glob(f"{brain.name}{REPLACED_INFIX}*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm", "-journal"))
    )


def read_at_most(path: Path, limit: int = DOCUMENT_BYTES) -> bytes:
    """A file's bytes, read only up to ``limit``: a larger one (or a pipe or device that never
    ends: /dev/zero) raises ValueError at once instead of filling memory."""
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is over {limit >> 20} MiB: not a document aimos wrote")
    return data


def write_private_file(path: Path, data: bytes, *, own_folder: bool = True) -> None:
    """Write ``data`` atomically to ``path`` with mode 0600 (temp file, fsync, rename, dir fsync).
    ``own_folder``: the folder is aimos's, made or tightened to 0700; otherwise (a file the person
    names, an export) only missing folders are made, 0700, and an existing one is left as it is."""
    if own_folder:
        ensure_private_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = write_temp_file(path, data, ".tmp")
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_temp_file(path: Path, data: bytes, suffix: str) -> Path:
    """``data`` in a new 0600 file beside ``path`` (``.NAME.PID<suffix>``), fsynced: what an atomic
    write renames or links into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}{suffix}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def fsync_dir(folder: Path) -> None:
    """Make a rename or link in ``folder`` durable."""
    dfd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
