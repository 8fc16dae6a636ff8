"""identity.keystore.CachedKeystore / KeystoreCache (an MCP server's keys, read once per process)
over the real file keystore: a read reaches the keystore once, a write or delete through the
cache forgets what it kept, a missing item is not remembered as missing, and nothing it holds
shows in its repr."""

from __future__ import annotations

from pathlib import Path

import pytest

from aimos.errors import KeychainError
from aimos.identity.keystore import CachedKeystore, FileKeystore, KeystoreCache


class Counted(FileKeystore):
    """The file keystore, counting the reads that reach it."""

    reads = 0

    def find(self, name: str) -> str | None:
        Counted.reads += 1
        return super().find(name)


def test_a_key_is_read_once_and_a_write_or_delete_forgets_it(tmp_path: Path) -> None:
    inner = Counted("brain-1", tmp_path / "keys")
    inner.put("agent-reader-1", "seed-one")
    cached = CachedKeystore(inner)
    Counted.reads = 0
    assert [cached.get("agent-reader-1") for _ in range(5)] == ["seed-one"] * 5
    assert Counted.reads == 1
    cached.replace("agent-reader-1", "seed-two")  # through the cache: forgotten, read again
    assert cached.get("agent-reader-1") == "seed-two" and Counted.reads == 2
    assert cached.delete("agent-reader-1") is True
    with pytest.raises(KeychainError):
        cached.get("agent-reader-1")
    assert cached.find("agent-reader-1") is None  # a missing item is asked for again
    inner.put("agent-reader-1", "seed-three")
    assert cached.find("agent-reader-1") == "seed-three"
    assert "seed" not in repr(cached) and cached.kind == "file"


def test_one_cached_keystore_per_kind_and_brain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMOS_HOME", str(tmp_path))
    cache = KeystoreCache()
    a = cache.open("file", "brain-1")
    assert cache.open("file", "brain-1") is a
    assert cache.open("file", "brain-2") is not a
    assert isinstance(a, CachedKeystore) and "kept for this process" in a.describe()
