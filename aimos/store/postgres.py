"""The hub's engine: a PostgreSQL database the person runs, spoken to here alone (the only psycopg
import, inside a function; `pip install 'aimos[hub]'`), as the brain's SQLite is spoken to by the
rest of the store; the hub's logic (aimos/hub/) calls PostgresHub and holds no SQL. It holds,
per brain, one row of keys (the master's public key, the content key wrapped under the master,
the brain's name sealed under the content key), the master key sealed with the passphrase as a
keystore holds it (one more after each passphrase change a device pushes; a device that joins
opens the newest), each later generation of the content key (one per device revocation:
aimos/hub/generations.py), and the devices' records, each sealed under the content key, with an
order number so a device asks for "everything after N".

What the hub sees: the brain's id, the master's public key, the sealed master keys, how many
records each device pushed, their sizes and times, and each record's keyed name (equal for a
row pushed twice, and nothing else); per content key generation, when it was made, how many
devices it was sealed to, and the keyed names of the devices it leaves out. Never a memory's
text, key, source, a query, a reason or any id inside a row.

Its tables are append-only as the brain's are: triggers refuse UPDATE, DELETE and TRUNCATE. The
owner of the database can drop them; a device finds what was changed anyway, since every record
is sealed and chained to the one before it from the same device (aimos/hub/sync.py).

The rows it hands the hub's logic are its own types (HubRow, KeyRow, BrainKeys), defined here so
the hub imports them from the store and the store imports nothing of the hub.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aimos.errors import BusyError, HubUnreachableError, NotFoundError, OptionalDependencyError, UsageError
from aimos.vocabulary import HUB_SCHEMA_VERSION

CONNECT_TIMEOUT_SECONDS = 5
# the largest record a pull takes: a row holding a whole save (at most memory/save's 1 MiB
# canonical body), escaped and in base64; a hub's larger one is refused unread (aimos/hub/sync.py)
MAX_RECORD_BYTES = 4 * 1_048_576
# the hub's tables, each append-only (its guards made by SCHEMA)
TABLES = ("aimos_hub_meta", "aimos_hub_brains", "aimos_hub_masters", "aimos_hub_records", "aimos_hub_keys")

SCHEMA = """
CREATE TABLE IF NOT EXISTS aimos_hub_meta (
    key    text PRIMARY KEY,
    value  text NOT NULL
);
CREATE TABLE IF NOT EXISTS aimos_hub_brains (
    brain_id            text PRIMARY KEY,
    master_fingerprint  text NOT NULL,
    master_public_key   text NOT NULL,
    wrapped_key         bytea NOT NULL,
    sealed_about        bytea NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS aimos_hub_masters (
    brain_id       text NOT NULL REFERENCES aimos_hub_brains (brain_id),
    seq            bigint NOT NULL CHECK (seq >= 1),
    sealed_master  text NOT NULL,
    pushed_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brain_id, seq)
);
CREATE TABLE IF NOT EXISTS aimos_hub_records (
    brain_id   text NOT NULL REFERENCES aimos_hub_brains (brain_id),
    seq        bigint NOT NULL CHECK (seq >= 1),
    device     text NOT NULL,
    device_n   bigint NOT NULL CHECK (device_n >= 1),
    name       bytea NOT NULL,
    box        bytea NOT NULL,
    pushed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brain_id, seq),
    UNIQUE (brain_id, name),
    UNIQUE (brain_id, device, device_n)
);
CREATE TABLE IF NOT EXISTS aimos_hub_keys (
    brain_id     text NOT NULL REFERENCES aimos_hub_brains (brain_id),
    generation   bigint NOT NULL CHECK (generation >= 2),
    recipient    text NOT NULL,
    wrapped      bytea NOT NULL,
    signed_body  text,
    signature    bytea,
    pushed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brain_id, generation, recipient),
    CHECK ((signed_body IS NULL) = (signature IS NULL))
);
CREATE OR REPLACE FUNCTION aimos_hub_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'aimos: % is append-only', TG_TABLE_NAME;
END $$;
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY[{tables}] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = t || '_append_only') THEN
            EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I'
                           ' FOR EACH ROW EXECUTE FUNCTION aimos_hub_append_only()',
                           t || '_append_only', t);
            EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I'
                           ' FOR EACH STATEMENT EXECUTE FUNCTION aimos_hub_append_only()',
                           t || '_no_truncate', t);
        END IF;
    END LOOP;
END $$;
""".replace("{tables}", ", ".join(f"'{t}'" for t in TABLES))

# the lock a push takes for its brain, so order numbers are given and committed in one order
_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended('aimos-hub:' || %s, 0))"


def masked(url: str) -> str:
    """The URL with any password left out (every message and `hub status` shows this). libpq reads
    the password up to the first `@` or `/`: `?` and `#` are part of it."""
    return re.sub(r"(://[^:/@?#]*):[^@/]*@", r"\1:***@", re.sub(r"(password=)[^&\s]*", r"\1***", url))


def check_url(url: str) -> str:
    if not url.startswith(("postgresql://", "postgres://")):
        raise UsageError(
            f"{masked(url)!r} is not a PostgreSQL URL",
            "Give one like postgresql://user@host/dbname (or postgresql:///dbname?host=/run/postgresql).",
        )
    return url


@dataclass(frozen=True)
class HubRow:
    """A record as the hub holds it: its order number, the device and record number it claims in
    the clear (checked against the sealed record), and the box."""

    seq: int
    device: str
    n: int
    box: bytes  # empty when the hub's box is over MAX_RECORD_BYTES (not read)
    size: int = 0  # the box's size on the hub


@dataclass(frozen=True)
class KeyRow:
    """One row of the hub's aimos_hub_keys: a generation's key wrapped for ``recipient`` (MASTER,
    or box.recipient_name of a housekeeper key: aimos/hub/generations.py); the master's row also
    holds its signed record."""

    generation: int
    recipient: str
    wrapped: bytes
    signed_body: str | None = None
    signature: bytes | None = None


def generation_taken(generation: int) -> BusyError:
    """A new content key generation that is no longer the next one: another device made it."""
    return BusyError(
        f"another device made content key generation {generation} meanwhile",
        "Nothing was revoked: sync (`aimos sync`), then run the command again.",
    )


@dataclass(frozen=True)
class BrainKeys:
    brain_id: str
    master_fingerprint: str
    master_public_key: str
    sealed_master: str
    wrapped_key: bytes
    sealed_about: bytes


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise OptionalDependencyError(
            "syncing through a hub needs psycopg, which is not installed",
            "Install the extra: pip install 'aimos[hub]'.",
        ) from None
    return psycopg


class PostgresHub:
    """One connection to the hub for one brain (a context manager)."""

    def __init__(self, url: str, brain_id: str | None = None) -> None:
        self.url = check_url(url)
        self.brain_id = brain_id
        psycopg = _psycopg()
        try:
            self.conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS, autocommit=False)
        except psycopg.Error as exc:
            raise _unreachable(exc) from None

    def __enter__(self) -> PostgresHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        psycopg = _psycopg()
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                yield cur
        except psycopg.Error as exc:
            raise _unreachable(exc) from None

    # --- set-up ------------------------------------------------------------------------------
    def create_schema(self) -> None:
        with self._tx() as cur:
            cur.execute(SCHEMA)
            cur.execute(
                "INSERT INTO aimos_hub_meta (key, value) VALUES ('schema_version', %s)"
                " ON CONFLICT DO NOTHING",
                (str(HUB_SCHEMA_VERSION),),
            )
        self.check_schema()

    def check_schema(self) -> None:
        with self._tx() as cur:
            cur.execute("SELECT to_regclass('aimos_hub_meta') IS NOT NULL")
            found = cur.fetchone()[0]
            version = None
            if found:
                cur.execute("SELECT value FROM aimos_hub_meta WHERE key = 'schema_version'")
                got = cur.fetchone()
                version = got[0] if got else None
        if version is None:
            raise NotFoundError(
                f"{masked(self.url)} holds no aimos hub",
                "Create it from the first device: `aimos hub init URL`.",
            )
        if version != str(HUB_SCHEMA_VERSION):
            raise UsageError(
                f"the hub's schema is version {version}; this aimos knows version {HUB_SCHEMA_VERSION}",
                "Run the same aimos version on every device.",
            )

    def add_brain(self, keys: BrainKeys) -> None:
        with self._tx() as cur:
            cur.execute("SELECT 1 FROM aimos_hub_brains WHERE brain_id = %s", (keys.brain_id,))
            if cur.fetchone() is not None:
                raise UsageError(
                    f"the hub already holds brain {keys.brain_id}",
                    "Sync with it (`aimos sync`), or join it from a new device (`aimos hub join URL`).",
                )
            cur.execute(
                "INSERT INTO aimos_hub_brains (brain_id, master_fingerprint, master_public_key,"
                " wrapped_key, sealed_about) VALUES (%s, %s, %s, %s, %s)",
                (
                    keys.brain_id,
                    keys.master_fingerprint,
                    keys.master_public_key,
                    keys.wrapped_key,
                    keys.sealed_about,
                ),
            )
            cur.execute(
                "INSERT INTO aimos_hub_masters (brain_id, seq, sealed_master) VALUES (%s, 1, %s)",
                (keys.brain_id, keys.sealed_master),
            )

    def add_sealed_master(self, sealed: str) -> None:
        """The master key sealed with a new passphrase (after `aimos passphrase change` on a
        device): a device that joins from now on opens this one. The copies before it stay: the
        hub's tables are append-only."""
        brain = self._brain()
        with self._tx() as cur:
            cur.execute(_LOCK_SQL, (brain,))
            cur.execute(
                "INSERT INTO aimos_hub_masters (brain_id, seq, sealed_master)"
                " SELECT %s, COALESCE(MAX(seq), 0) + 1, %s FROM aimos_hub_masters WHERE brain_id = %s",
                (brain, sealed, brain),
            )

    def brains(self) -> list[BrainKeys]:
        self.check_schema()
        with self._tx() as cur:
            cur.execute(
                "SELECT b.brain_id, b.master_fingerprint, b.master_public_key,"
                " (SELECT m.sealed_master FROM aimos_hub_masters m WHERE m.brain_id = b.brain_id"
                "  ORDER BY m.seq DESC LIMIT 1),"
                " b.wrapped_key, b.sealed_about FROM aimos_hub_brains b ORDER BY b.created_at, b.brain_id"
            )
            return [BrainKeys(r[0], r[1], r[2], r[3], bytes(r[4]), bytes(r[5])) for r in cur.fetchall()]

    # --- the content key's generations (aimos/hub/generations.KeyHub) -----------------------------------
    def key_rows(self) -> list[KeyRow]:
        """Every row of this brain's later content key generations (none on a hub made before
        there were generations, until a revocation adds the table: create_schema)."""
        with self._tx() as cur:
            cur.execute("SELECT to_regclass('aimos_hub_keys') IS NOT NULL")
            if not cur.fetchone()[0]:
                return []
            cur.execute(
                "SELECT generation, recipient, wrapped, signed_body, signature FROM aimos_hub_keys"
                " WHERE brain_id = %s ORDER BY generation, recipient",
                (self._brain(),),
            )
            return [
                KeyRow(int(r[0]), str(r[1]), bytes(r[2]), r[3], None if r[4] is None else bytes(r[4]))
                for r in cur.fetchall()
            ]

    def add_generation(self, generation: int, made: list[KeyRow]) -> None:
        """A new generation's rows, when it is still the next (else BusyError: another device made
        one meanwhile)."""
        brain = self._brain()
        with self._tx() as cur:
            cur.execute(_LOCK_SQL, (brain,))
            cur.execute(
                "SELECT COALESCE(MAX(generation), 1) FROM aimos_hub_keys WHERE brain_id = %s", (brain,)
            )
            newest = int(cur.fetchone()[0])
            if newest + 1 != generation:
                raise generation_taken(newest)
            self._insert_keys(cur, made, "")

    def add_wraps(self, made: list[KeyRow]) -> None:
        """Generations sealed to more housekeeper keys (one another device added first is kept)."""
        with self._tx() as cur:
            self._insert_keys(cur, made, " ON CONFLICT DO NOTHING")

    def _insert_keys(self, cur: Any, made: list[KeyRow], conflict: str) -> None:
        cur.executemany(
            "INSERT INTO aimos_hub_keys (brain_id, generation, recipient, wrapped, signed_body, signature)"
            " VALUES (%s, %s, %s, %s, %s, %s)" + conflict,
            [(self._brain(), r.generation, r.recipient, r.wrapped, r.signed_body, r.signature) for r in made],
        )

    # --- what sync asks (aimos/hub/sync.Hub) ---------------------------------------------------
    def _brain(self) -> str:
        if self.brain_id is None:
            raise UsageError("no brain chosen on the hub")
        return self.brain_id

    def newest_of(self, device: str) -> tuple[int, bytes] | None:
        with self._tx() as cur:
            cur.execute(
                "SELECT device_n, box FROM aimos_hub_records WHERE brain_id = %s AND device = %s"
                " ORDER BY device_n DESC LIMIT 1",
                (self._brain(), device),
            )
            row = cur.fetchone()
        return (int(row[0]), bytes(row[1])) if row else None

    def names_held(self, names: list[bytes]) -> set[bytes]:
        if not names:
            return set()
        with self._tx() as cur:
            cur.execute(
                "SELECT name FROM aimos_hub_records WHERE brain_id = %s AND name = ANY(%s)",
                (self._brain(), names),
            )
            return {bytes(r[0]) for r in cur.fetchall()}

    def append(self, device: str, items: list[tuple[int, bytes, bytes]]) -> None:
        brain = self._brain()
        with self._tx() as cur:
            cur.execute(_LOCK_SQL, (brain,))
            cur.execute("SELECT COALESCE(MAX(seq), 0) FROM aimos_hub_records WHERE brain_id = %s", (brain,))
            seq = int(cur.fetchone()[0])
            cur.executemany(
                "INSERT INTO aimos_hub_records (brain_id, seq, device, device_n, name, box)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                [(brain, seq + i, device, n, name, sealed) for i, (n, name, sealed) in enumerate(items, 1)],
            )

    def after(self, seq: int, limit: int, other_than: str) -> list[HubRow]:
        """The records after order number ``seq``, but those of device ``other_than``."""
        return self._records("seq > %s AND device <> %s ORDER BY seq LIMIT %s", (seq, other_than, limit))

    def of_device_after(self, device: str, n: int, limit: int) -> list[HubRow]:
        """Device ``device``'s records after its number ``n``, in order (what another device has
        pulled and the hub's order went past for this one: aimos/hub/heads.py; what this device
        pushed that its push log lacks: aimos/hub/pushed.py)."""
        return self._records("device = %s AND device_n > %s ORDER BY device_n LIMIT %s", (device, n, limit))

    def at(self, seq: int) -> HubRow | None:
        """The record at order number ``seq``, if the hub holds one."""
        found = self._records("seq = %s", (seq,))
        return found[0] if found else None

    def _records(self, where: str, params: tuple[Any, ...]) -> list[HubRow]:
        """This brain's records ``where`` (an SQL condition and its ORDER BY / LIMIT); a box over
        MAX_RECORD_BYTES is not read (HubRow.size says its size)."""
        with self._tx() as cur:
            cur.execute(
                "SELECT seq, device, device_n, CASE WHEN length(box) <= %s THEN box ELSE ''::bytea END,"
                " length(box) FROM aimos_hub_records WHERE brain_id = %s AND " + where,
                (MAX_RECORD_BYTES, self._brain(), *params),
            )
            return [HubRow(int(r[0]), str(r[1]), int(r[2]), bytes(r[3]), int(r[4])) for r in cur.fetchall()]

    def waiting_for(self, seq: int, device: str) -> int:
        """How many records after order number ``seq`` are other devices' (what ``device`` has to pull)."""
        with self._tx() as cur:
            cur.execute(
                "SELECT COUNT(*) FROM aimos_hub_records WHERE brain_id = %s AND seq > %s AND device <> %s",
                (self._brain(), seq, device),
            )
            return int(cur.fetchone()[0])

    def counts(self) -> dict[str, Any]:
        """What the hub holds of this brain: records and bytes per device, the newest order number
        and push time."""
        with self._tx() as cur:
            cur.execute(
                "SELECT device, COUNT(*), COALESCE(SUM(length(box)), 0), MAX(pushed_at)"
                " FROM aimos_hub_records WHERE brain_id = %s GROUP BY device ORDER BY device",
                (self._brain(),),
            )
            devices = [
                {"device": r[0], "records": int(r[1]), "bytes": int(r[2]), "newest": r[3].isoformat()}
                for r in cur.fetchall()
            ]
            cur.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM aimos_hub_records WHERE brain_id = %s", (self._brain(),)
            )
            newest = int(cur.fetchone()[0])
        return {"devices": devices, "newest_seq": newest}


def _unreachable(exc: BaseException) -> HubUnreachableError:
    """The driver's first line, its quoted paths left out, and no URL (`aimos hub status` shows the
    one in use): an error line holds nothing that could pass for a secret, so the CLI says it as
    it is (a socket folder's digits beside a port's once read as a card number)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    first = re.sub(r'"[^"]*"', '"…"', first)
    return HubUnreachableError(f"the hub could not be used: {first}")
