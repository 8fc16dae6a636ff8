"""The SQL of a brain's devices (aimos/identity/devices.py, aimos/hub): the home records, their
handovers, the master's cuts, the requests kept for the home, and the devices' epochs as a
synced brain reads them."""

from __future__ import annotations

from typing import Any, TypedDict

from aimos.store.connection import Connection, Row, insert, insert_sql, one, rows


# --- the home and its handovers --------------------------------------------------------------------
class HomeRecord(TypedDict):
    home_id: str
    device_fp: str
    ts_signed: int


class HomeInOrder(HomeRecord):
    handed: int  # 1 when a handover put it in force


def home_records(conn: Connection) -> list[HomeInOrder]:
    """Every home record, oldest first, each with whether a handover put it in force."""
    return rows(
        conn,
        "SELECT h.home_id, h.device_fp, h.ts_signed, d.home_id IS NOT NULL AS handed"
        " FROM hub_homes h LEFT JOIN hub_handovers d ON d.home_id = h.home_id ORDER BY h.rowid",
        row=HomeInOrder,
    )


def newest_home_record(conn: Connection) -> HomeRecord | None:
    return one(
        conn,
        "SELECT home_id, device_fp, ts_signed FROM hub_homes ORDER BY rowid DESC LIMIT 1",
        row=HomeRecord,
    )


class SignedRow(TypedDict):
    """The columns every signed hub row ends with: its canonical body, nonce, time and signature."""

    signed_body: str
    nonce: str
    ts_signed: int
    signature_b64u: str


class HomeRow(SignedRow):
    home_id: str
    device_fp: str
    prev_home_id: str | None
    master_fingerprint: str


class HandoverRow(SignedRow):
    home_id: str
    from_device: str
    signer_valid_from: int | None
    master_fingerprint: str | None


def insert_home(conn: Connection, row: HomeRow) -> None:
    insert(conn, "hub_homes", dict(row))


def insert_handover(conn: Connection, row: HandoverRow) -> None:
    insert(conn, "hub_handovers", dict(row))


# --- the master's cuts -------------------------------------------------------------------------------
class Cut(TypedDict):
    device_fp: str
    through_n: int


def lowest_cuts(conn: Connection) -> list[Cut]:
    """Per device cut, the lowest number it was cut through."""
    return rows(
        conn, "SELECT device_fp, MIN(through_n) AS through_n FROM hub_cuts GROUP BY device_fp", row=Cut
    )


class CutRow(SignedRow):
    cut_id: str
    device_fp: str
    through_n: int
    why: str
    master_fingerprint: str


def insert_cut(conn: Connection, row: CutRow) -> None:
    insert(conn, "hub_cuts", dict(row))


# --- the requests kept for the home --------------------------------------------------------------
class KeptRequest(TypedDict):
    request_id: str
    device_fp: str
    agent_id: str
    agent_valid_from: int
    signed_path: str
    body: str
    nonce: str
    ts_signed: int
    signature_b64u: str
    received_at: int
    master_signature_b64u: str | None


class WaitingRequest(KeptRequest):
    certificate: str  # the certificate of the request's agent epoch


# one text for every request a device keeps (each save or outcome away from the home)
_INSERT_KEPT_REQUEST = insert_sql("hub_requests", KeptRequest)


def insert_kept_request(conn: Connection, request: KeptRequest) -> None:
    conn.execute(_INSERT_KEPT_REQUEST, request)


def waiting_requests(conn: Connection) -> list[WaitingRequest]:
    """The kept requests whose nonce is not used yet, in the order they arrived, each with its
    agent epoch's certificate."""
    return rows(
        conn,
        "SELECT r.*, e.certificate FROM hub_requests r JOIN identity_epochs e"
        " ON e.agent_id = r.agent_id AND e.valid_from = r.agent_valid_from"
        " WHERE NOT EXISTS (SELECT 1 FROM request_nonces n"
        " WHERE n.agent_id = r.agent_id AND n.nonce = r.nonce)"
        " ORDER BY r.rowid",
        row=WaitingRequest,
    )


# --- the devices and their epochs ------------------------------------------------------------------
class EpochCounts(TypedDict):
    epochs: int
    revoked: int


def epoch_counts(conn: Connection, device_fp: str) -> EpochCounts | None:
    """How many epochs the device holds, and how many of them are revoked."""
    return one(
        conn,
        "SELECT COUNT(*) AS epochs, COUNT(r.revocation_id) AS revoked FROM identity_epochs e"
        " LEFT JOIN agent_revocations r ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from"
        " WHERE e.device_fp = ?",
        (device_fp,),
        row=EpochCounts,
    )


class DeviceSeen(TypedDict):
    device_fp: str
    since: int
    agents: str | None  # the agent ids, comma separated
    epochs: int
    revoked: int


def devices_seen(conn: Connection) -> list[DeviceSeen]:
    """Every device of the brain's epochs, the first to join first: when, its agents, how many
    epochs it holds and how many are revoked."""
    return rows(
        conn,
        "SELECT e.device_fp, MIN(e.created_at) AS since,"
        " group_concat(DISTINCT CASE WHEN e.role = 'agent' THEN e.agent_id END) AS agents,"
        " COUNT(*) AS epochs, COUNT(r.revocation_id) AS revoked"
        " FROM identity_epochs e LEFT JOIN agent_revocations r"
        " ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from"
        " GROUP BY e.device_fp ORDER BY since",
        row=DeviceSeen,
    )


def device_fps(conn: Connection) -> list[str]:
    """Every device that holds an epoch of the brain."""
    return [str(fp) for (fp,) in conn.execute("SELECT DISTINCT device_fp FROM identity_epochs")]


def device_count(conn: Connection) -> int:
    return int(str(conn.execute("SELECT COUNT(DISTINCT device_fp) FROM identity_epochs").fetchall()[0][0]))


# an epoch ``e`` the master has not revoked
_NOT_REVOKED = (
    " NOT EXISTS (SELECT 1 FROM agent_revocations r"
    " WHERE r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from)"
)


def _live_epochs(
    conn: Connection, columns: str, where: str, value: str, order: str, *, row: type[Row]
) -> list[Row]:
    """``columns`` of the epochs ``e`` whose ``where`` column holds ``value``, not revoked, by ``order``."""
    return rows(
        conn,
        f"SELECT {columns} FROM identity_epochs e WHERE {where} = ? AND"
        + _NOT_REVOKED
        + f" ORDER BY {order}",
        (value,),
        row=row,
    )


class EpochKey(TypedDict):
    agent_id: str
    valid_from: int


def live_epochs_of(conn: Connection, device_fp: str) -> list[EpochKey]:
    """The device's epochs not revoked."""
    return _live_epochs(
        conn, "e.agent_id, e.valid_from", "e.device_fp", device_fp, "e.agent_id, e.valid_from", row=EpochKey
    )


class LiveKey(TypedDict):
    device_fp: str
    public_key_b64u: str


def live_keys(conn: Connection, agent_id: str) -> list[LiveKey]:
    """(device, public key) of every epoch of ``agent_id`` not revoked."""
    return _live_epochs(
        conn,
        "e.device_fp, e.public_key_b64u",
        "e.agent_id",
        agent_id,
        "e.device_fp, e.valid_from",
        row=LiveKey,
    )


class EpochOfDevice(TypedDict):
    public_key_b64u: str
    device_fp: str


def epoch_of(conn: Connection, agent_id: Any, valid_from: Any) -> EpochOfDevice | None:
    """The public key and device of an epoch."""
    return one(
        conn,
        "SELECT public_key_b64u, device_fp FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
        (agent_id, valid_from),
        row=EpochOfDevice,
    )


def epoch_device(conn: Connection, agent_id: Any, valid_from: Any) -> str | None:
    """The device of an epoch; None when the brain holds no such epoch."""
    found = epoch_of(conn, agent_id, valid_from)
    return None if found is None else str(found["device_fp"])


def revocation_held(conn: Connection, agent_id: Any, agent_valid_from: Any) -> bool:
    """Whether the brain holds a revocation of the epoch."""
    return (
        one(
            conn,
            "SELECT 1 AS x FROM agent_revocations WHERE agent_id = ? AND agent_valid_from = ?",
            (agent_id, agent_valid_from),
        )
        is not None
    )
