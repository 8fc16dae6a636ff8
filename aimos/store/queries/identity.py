"""The SQL of aimos/identity: the master identity, identity epochs, grants, revocations and the
nonces of signed requests."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from aimos.store.connection import Connection, insert, one, rows


class MasterRow(TypedDict):
    fingerprint: str
    public_key_b64u: str
    created_at: int


class EpochCore(TypedDict):
    """An epoch's agent, span, role, tier and public key: what a signed request's check reads of
    the epoch its certificate names."""

    agent_id: str
    valid_from: int
    valid_until: int
    role: str
    identity_tier: str
    public_key_b64u: str


class EpochRow(EpochCore):
    """An identity_epochs row (``SELECT *``), as an enrolment writes it."""

    key_fingerprint: str
    certificate: str
    cert_fingerprint: str
    device_fp: str
    key_ref: str
    created_at: int


class ListedEpoch(EpochCore):
    """An epoch as `epochs_of` lists it: the row (but its creation time) with its revocation."""

    key_fingerprint: str
    cert_fingerprint: str
    key_ref: str
    certificate: str
    device_fp: str
    revoked_at: int | None
    revocation_reason: str | None


class MasterSigned(TypedDict):
    """The columns every master-signed identity record has (a grant, a revocation)."""

    company_id: str
    reason: str
    master_fingerprint: str
    signed_body: str
    content_hash: str
    nonce: str
    ts_signed: int
    signature_b64u: str
    mutation_hash: str


class GrantRow(MasterSigned):
    """A recall_grants row (``SELECT *``)."""

    grant_id: str
    subject_agent_id: str
    subject_valid_from: int
    allowed: int
    write_allowed: int
    clearance_ceiling: int
    data_class_ceiling: str
    prev_mutation_hash: str | None


class RevocationRow(MasterSigned):
    """An agent_revocations row."""

    revocation_id: str
    agent_id: str
    agent_valid_from: int
    revoked_at: int
    prior_identity_hash: str


def _of_epoch(conn: Connection, sql: str, agent_id: str, valid_from: int) -> dict[str, Any] | None:
    """The first row ``sql`` (with the epoch's agent id and start as its two parameters) finds."""
    return one(conn, sql, (agent_id, valid_from))


# --- master -------------------------------------------------------------------------------
def insert_master(conn: Connection, fingerprint: str, public_key_b64u: str, created_at: int) -> None:
    """The brain's master identity row, as an install or a hub join writes it."""
    conn.execute(
        "INSERT INTO master_identity (fingerprint, public_key_b64u, created_at) VALUES (?, ?, ?)",
        (fingerprint, public_key_b64u, created_at),
    )


def master_identity(conn: Connection) -> MasterRow | None:
    """The brain's master identity row; None when the brain has none."""
    return one(conn, "SELECT fingerprint, public_key_b64u, created_at FROM master_identity", row=MasterRow)


# --- epochs -------------------------------------------------------------------------------
def newest_valid_from(conn: Connection, agent_id: str) -> int | None:
    """The start of the agent's newest epoch; None when it has none."""
    row = one(conn, "SELECT MAX(valid_from) AS vf FROM identity_epochs WHERE agent_id = ?", (agent_id,))
    return row["vf"] if row and row["vf"] is not None else None


def insert_epoch(conn: Connection, epoch: EpochRow) -> None:
    insert(conn, "identity_epochs", dict(epoch))


def epochs_of(conn: Connection, agent_id: str | None = None) -> list[ListedEpoch]:
    """Every epoch (or the agent's) with its revocation, by agent and start."""
    sql = (
        "SELECT e.agent_id, e.valid_from, e.valid_until, e.role, e.identity_tier, e.key_fingerprint,"
        " e.cert_fingerprint, e.key_ref, e.public_key_b64u, e.certificate, e.device_fp,"
        " r.revoked_at, r.reason AS revocation_reason"
        " FROM identity_epochs e LEFT JOIN agent_revocations r"
        " ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from"
    )
    params: tuple[Any, ...] = ()
    if agent_id is not None:
        sql += " WHERE e.agent_id = ?"
        params = (agent_id,)
    return rows(conn, sql + " ORDER BY e.agent_id, e.valid_from", params, row=ListedEpoch)


def epoch_row(conn: Connection, agent_id: str, valid_from: int) -> EpochRow | None:
    """The identity epoch row of ``agent_id`` starting at ``valid_from``, if there is one."""
    sql = "SELECT * FROM identity_epochs WHERE agent_id = ? AND valid_from = ?"
    return one(conn, sql, (agent_id, valid_from), row=EpochRow)


def epoch_certificate(conn: Connection, agent_id: str, valid_from: int) -> str | None:
    """The certificate of the agent's epoch starting at ``valid_from``; None when there is none."""
    sql = "SELECT certificate FROM identity_epochs WHERE agent_id = ? AND valid_from = ?"
    row = _of_epoch(conn, sql, agent_id, valid_from)
    return None if row is None else cast(str, row["certificate"])


def epoch_by_certificate(conn: Connection, cert_fingerprint: str) -> EpochCore | None:
    """The epoch whose certificate has this fingerprint, if one is enrolled."""
    return one(
        conn,
        "SELECT agent_id, valid_from, valid_until, role, identity_tier, public_key_b64u"
        " FROM identity_epochs WHERE cert_fingerprint = ?",
        (cert_fingerprint,),
        row=EpochCore,
    )


def key_refs(conn: Connection) -> list[str]:
    """Every epoch's keystore item name, by agent and start."""
    return [
        str(name)
        for (name,) in conn.execute("SELECT key_ref FROM identity_epochs ORDER BY agent_id, valid_from")
    ]


# --- grants -------------------------------------------------------------------------------
def current_grant(conn: Connection, agent_id: str, valid_from: int) -> GrantRow | None:
    """The epoch's newest grant row; None when it has none."""
    sql = (
        "SELECT * FROM recall_grants WHERE subject_agent_id = ? AND subject_valid_from = ?"
        " ORDER BY rowid DESC LIMIT 1"
    )
    return one(conn, sql, (agent_id, valid_from), row=GrantRow)


def newest_grant_hash(conn: Connection, agent_id: str, valid_from: int) -> str | None:
    """The mutation hash of the epoch's newest grant; None when it has none."""
    sql = (
        "SELECT mutation_hash FROM recall_grants WHERE subject_agent_id = ? AND subject_valid_from = ?"
        " ORDER BY rowid DESC LIMIT 1"
    )
    row = _of_epoch(conn, sql, agent_id, valid_from)
    return row["mutation_hash"] if row else None


def insert_grant(conn: Connection, grant: GrantRow) -> None:
    insert(conn, "recall_grants", dict(grant))


# --- revocations --------------------------------------------------------------------------
def is_revoked(conn: Connection, agent_id: str, valid_from: int) -> bool:
    sql = "SELECT 1 AS x FROM agent_revocations WHERE agent_id = ? AND agent_valid_from = ?"
    return bool(_of_epoch(conn, sql, agent_id, valid_from))


def revoked_at(conn: Connection, agent_id: str, valid_from: int) -> int | None:
    """When the epoch was revoked; None when it is not."""
    sql = "SELECT revoked_at FROM agent_revocations WHERE agent_id = ? AND agent_valid_from = ?"
    row = _of_epoch(conn, sql, agent_id, valid_from)
    return int(row["revoked_at"]) if row else None


def revoked_epochs_sorted(conn: Connection) -> list[tuple[str, int]]:
    """Every revoked epoch, as (agent id, valid from), in order."""
    return [
        (str(a), int(v))
        for a, v in conn.execute(
            "SELECT agent_id, agent_valid_from FROM agent_revocations ORDER BY agent_id, agent_valid_from"
        )
    ]


def newest_signed_by(conn: Connection, agent_id: str, valid_from: int) -> int | None:
    """The newest time the epoch signed anything the brain holds (a request, an event, a
    provenance node); None when it signed nothing."""
    row = one(
        conn,
        "SELECT MAX(ts) AS ts FROM (SELECT MAX(ts_signed) AS ts FROM request_nonces"
        " WHERE agent_id = ?1 AND valid_from = ?2"
        " UNION ALL SELECT MAX(ts_signed) FROM events WHERE signer_agent_id = ?1 AND signer_valid_from = ?2"
        " UNION ALL SELECT MAX(ts_signed) FROM memory_provenance"
        " WHERE signer_agent_id = ?1 AND signer_valid_from = ?2)",
        (agent_id, valid_from),
    )
    return None if row is None or row["ts"] is None else int(row["ts"])


def insert_revocation(conn: Connection, record: RevocationRow) -> None:
    insert(conn, "agent_revocations", dict(record))


# --- request nonces -----------------------------------------------------------------------
def nonce_used(conn: Connection, agent_id: str, nonce: str) -> bool:
    """Whether the agent's nonce is recorded as used by this brain."""
    return bool(
        one(conn, "SELECT 1 AS x FROM request_nonces WHERE agent_id = ? AND nonce = ?", (agent_id, nonce))
    )


def nonce_forwarded(conn: Connection, agent_id: str, nonce: str) -> bool:
    """Whether a request with the agent's nonce was forwarded to the home (hub_requests)."""
    return bool(
        one(conn, "SELECT 1 AS x FROM hub_requests WHERE agent_id = ? AND nonce = ?", (agent_id, nonce))
    )


def insert_nonce(
    conn: Connection,
    agent_id: str,
    nonce: str,
    valid_from: int,
    ts_signed: int,
    signed_path: str,
    request_hash: str,
    received_at: int,
) -> None:
    """A signed request's nonce, used from now on (its epoch, time, path and hash beside it)."""
    conn.execute(
        "INSERT INTO request_nonces (agent_id, nonce, valid_from, ts_signed, signed_path,"
        " request_hash, received_at) VALUES (?,?,?,?,?,?,?)",
        (agent_id, nonce, valid_from, ts_signed, signed_path, request_hash, received_at),
    )
