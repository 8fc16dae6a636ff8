"""brain_meta: the brain's own metadata (its id, company, device, keystore kind, ...), key -> value,
append-only (a key is written once; the keystore kind's later values are appended as new keys)."""

from __future__ import annotations

from aimos.store.connection import Connection, one, rows

# brain_meta is append-only: install records the keystore kind under "keystore", and each
# `aimos keystore move` appends "keystore.N" (N = 2, 3, ...): the highest N is the brain's keystore
KEYSTORE_META = "keystore"


def _move_number(key: str) -> int | None:
    prefix, _, number = key.partition(".")
    return int(number) if prefix == KEYSTORE_META and number.isdigit() else None


def brain_meta(conn: Connection) -> dict[str, str]:
    """The brain's metadata; "keystore" is the brain's keystore now (the newest move's, if any)."""
    meta = {r["key"]: r["value"] for r in rows(conn, "SELECT key, value FROM brain_meta")}
    moves = {n: value for key, value in meta.items() if (n := _move_number(key)) is not None}
    if moves:
        meta[KEYSTORE_META] = moves[max(moves)]
    return meta


def meta_value(conn: Connection, key: str) -> str | None:
    """The value brain_meta holds under ``key``; None when it holds none."""
    row = one(conn, "SELECT value FROM brain_meta WHERE key = ?", (key,))
    return None if row is None else str(row["value"])


def record_keystore_kind(conn: Connection, kind: str) -> str:
    """Append the brain's new keystore kind to brain_meta (inside a write transaction, which
    seals it); returns the key it was recorded under."""
    keys = [str(key) for (key,) in conn.execute("SELECT key FROM brain_meta")]
    numbers = [n for key in keys if (n := _move_number(key)) is not None]
    key = f"{KEYSTORE_META}.{max(numbers, default=1) + 1}"
    conn.execute("INSERT INTO brain_meta (key, value) VALUES (?, ?)", (key, kind))
    return key
