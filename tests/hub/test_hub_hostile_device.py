"""A device of the brain gone hostile (issue 39): it holds the content key, so what it appends to the
hub opens, is chained after its own records and is named as a push names it. What it cannot do is
forge the rows inside: the other device inserts each pulled row through its brain's own guards, as if
it were written there, and a row that does not verify refuses the pull by the record's name, nothing
of it applied, on this sync and on every sync after (the record stays on the hub; it is never
skipped).

The hostile device is B, with the python API: the content key from B's file keystore, records
sealed with aimos.hub.box and appended to B's chain of records on the hub. Device A refuses them
through the real `aimos sync`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import apsw
import pytest
from support.cells import the_row
from support.cli import assert_refused, assert_unchanged, snapshot, sqlite_value
from support.hub_devices import Device, Pair, hub_records

from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_decode
from aimos.hub import box, records
from aimos.identity.grants import issue_grant
from aimos.identity.keystore import FileKeystore
from aimos.store.connection import one
from aimos.store.postgres import PostgresHub
from aimos.vocabulary import HUB_RECORD_SIGNATURE

pytestmark = pytest.mark.timeout(240)

Rows = list[tuple[str, dict[str, Any]]]


def read_only(d: Device) -> apsw.Connection:
    return apsw.Connection(f"file:{d.brain}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def written_since(d: Device, seal: int) -> Rows:
    """The rows the seals after ``seal`` sealed on ``d``, as a push would send them."""
    conn = read_only(d)
    try:
        return [(table, row) for _seal, table, row in records.written_after(conn, seal)]
    finally:
        conn.close()


def head_seal(d: Device) -> int:
    conn = read_only(d)
    try:
        return int(the_row(conn, "SELECT MAX(seq) AS seq FROM brain_seals")["seq"])
    finally:
        conn.close()


def append_as(hostile: Device, url: str, rows: Rows) -> dict[str, int]:
    """Seal ``rows`` under the brain's content key (read from the hostile device's keystore) and
    append them to the hub after that device's newest record, each naming the one before, as a push
    does. Returns each row's table -> its order number on the hub."""
    brain_id, fp = hostile.brain_id(), hostile.device_fp()
    key, filed = hostile.content_key(), hostile.hub_name()
    # the hostile device's own housekeeper signs, as its push does: the records are its, and valid
    signer_from = int(
        sqlite_value(
            hostile.brain,
            f"SELECT MAX(valid_from) FROM identity_epochs WHERE agent_id = 'housekeeper' AND device_fp = '{fp}'",
        )
    )
    seed = FileKeystore(brain_id, hostile.home / "state" / "keys" / brain_id).get(
        f"housekeeper@{signer_from}"
    )
    signer = KeyPair(b64u_decode(seed))
    with PostgresHub(url, brain_id) as hub:
        newest = hub.newest_of(filed)
        assert newest is not None, "the hostile device has pushed before"
        n, link = newest[0], box.record_link(newest[1])
        items = []
        for table, row in rows:
            n += 1
            plaintext = records.encode(records.Record(fp, n, link, table, row, signer_from))
            sealed = box.seal_record(key, signer.sign(HUB_RECORD_SIGNATURE + plaintext) + plaintext)
            link = box.record_link(sealed)
            items.append((n, box.row_name(key, table, records.key_text(table, row)), sealed))
        hub.append(filed, items)
    placed = {r["device_n"]: r["seq"] for r in hub_records(url) if r["device"] == filed}
    return {table: placed[n] for (table, _row), (n, _name, _box) in zip(rows, items, strict=True)}


def a_save_of_b(pair: Pair, text: str) -> Rows:
    """B saves ``text`` (not synced): the rows of that save, as B would push them."""
    pushed = int(pair.b.hub_state()["pushed_through_seal"])
    pair.b.save(text)
    rows = written_since(pair.b, pushed)
    assert [t for t, _r in rows] == ["request_nonces", "memory_provenance", "events", "memories"], rows
    return rows


def changed(rows: Rows, table: str, **cells: Any) -> Rows:
    return [(t, {**r, **cells} if t == table else r) for t, r in rows]


# --- the forgeries: each returns (the rows, the table of the row that must be refused) ------------
def memory_changed_after_signing(pair: Pair, _tmp: Path) -> tuple[Rows, str]:
    rows = a_save_of_b(pair, "the spare house key is under the third flowerpot")
    return changed(rows, "memories", value="the spare house key is under the doormat"), "memories"


def event_with_a_bad_signature(pair: Pair, _tmp: Path) -> tuple[Rows, str]:
    rows = a_save_of_b(pair, "the plumber comes on Thursday morning")
    event = dict(rows)["events"]
    signature = str(event["signature_b64u"])
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    return changed(rows, "events", signature_b64u=flipped), "events"


def grant_not_signed_by_the_master(pair: Pair, _tmp: Path) -> tuple[Rows, str]:
    """B's agent's grant raised (data class up to restricted), signed by a key of B's own: aimos's
    own grant code, run on a scratch table, with that key standing in for the master."""
    conn = read_only(pair.b)
    try:
        current = one(
            conn,
            "SELECT g.* FROM recall_grants g JOIN identity_epochs e ON e.agent_id = g.subject_agent_id"
            " AND e.valid_from = g.subject_valid_from WHERE e.role = 'agent' AND e.device_fp ="
            " (SELECT value FROM brain_meta WHERE key = 'device_fp') ORDER BY g.rowid DESC LIMIT 1",
        )
        schema = the_row(conn, "SELECT sql FROM sqlite_master WHERE name = 'recall_grants'")["sql"]
    finally:
        conn.close()
    assert current is not None and current["data_class_ceiling"] != "restricted", current
    scratch = apsw.Connection(":memory:")
    scratch.execute(schema)
    scratch.execute(
        f"INSERT INTO recall_grants ({', '.join(current)}) VALUES ({', '.join('?' * len(current))})",
        tuple(current.values()),
    )
    impostor = SimpleNamespace(fingerprint=current["master_fingerprint"], sign=KeyPair.generate().sign)
    raised = issue_grant(
        scratch,
        impostor,  # type: ignore[arg-type]
        company_id=current["company_id"],
        agent_id=current["subject_agent_id"],
        valid_from=current["subject_valid_from"],
        clearance_ceiling=current["clearance_ceiling"],
        data_class_ceiling="restricted",
        write_allowed=True,
        now=int(time.time()),
    )
    return [("recall_grants", raised)], "recall_grants"


def save_by_an_epoch_not_in_the_brain(pair: Pair, tmp: Path) -> tuple[Rows, str]:
    """On a copy of itself, B enrols an agent `rogue` and saves as it; it sends the save, not the
    enrolment: the save's signer is an epoch the brain does not hold."""
    rogue = Device(tmp / "rogue", pair.b.passphrase_file)
    shutil.copytree(pair.b.home, rogue.home, symlinks=True)
    rogue.run("agent", "enroll", "rogue").ok()
    enrolled = head_seal(rogue)
    rogue.save("the rogue agent's note", "--as", "rogue")
    rows = written_since(rogue, enrolled)
    provenance = dict(rows)["memory_provenance"]
    assert provenance["signer_agent_id"] == "rogue", provenance
    # its first row names the unknown epoch: the request's nonce, refused as no device's of the brain
    assert rows[0][0] == "request_nonces" and rows[0][1]["agent_id"] == "rogue", rows[0]
    return rows, "request_nonces"


FORGERIES: dict[str, Callable[[Pair, Path], tuple[Rows, str]]] = {
    "a-memory-changed-after-signing": memory_changed_after_signing,
    "an-event-with-a-bad-signature": event_with_a_bad_signature,
    "a-grant-not-signed-by-the-master": grant_not_signed_by_the_master,
    "a-save-by-an-epoch-not-in-the-brain": save_by_an_epoch_not_in_the_brain,
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_row_from_a_device_of_the_brain_is_refused_on_every_sync(
    pair: Pair, forgery: str, tmp_path: Path
) -> None:
    a = pair.a
    a.sync()
    rows, bad_table = FORGERIES[forgery](pair, tmp_path)
    placed = append_as(pair.b, pair.url, rows)
    if forgery in CUT_OFF:
        return a_device_that_pushes_what_it_may_not_is_cut_off(pair, placed[bad_table])
    before = snapshot(a.home)
    messages = []
    for _attempt in range(2):
        refused = a.run("sync")
        print(forgery, "->", refused.code, refused.err)
        assert refused.code in (4, 5), refused.describe()
        assert_refused(refused, refused.code, "Nothing from this pull was applied")
        named = f"hub record #{placed[bad_table]} (device {pair.b.device_fp()}, record "
        assert named in refused.err and f") ({bad_table})" in refused.err, (placed, refused.describe())
        assert_unchanged(a.home, before)
        messages.append(refused.err)
    assert messages[0] == messages[1]


# a row its device may not have written (records.check_pushed_by): only a misbehaving device signs one
CUT_OFF = ("a-save-by-an-epoch-not-in-the-brain",)


def a_device_that_pushes_what_it_may_not_is_cut_off(pair: Pair, first_bad: int) -> None:
    """Every device refuses that record, and every later one of its device, by name, and applies
    the other devices' records (the same in the hub's order everywhere): the sync goes on."""
    a = pair.a
    memories = sqlite_value(a.brain, "SELECT COUNT(*) FROM memories")
    done = a.run("sync", "--json").ok().json()
    assert any(
        r.startswith(f"hub record #{first_bad} (device {pair.b.device_fp()}") and "may not write" in r
        for r in done["refused"]
    ), done
    assert sqlite_value(a.brain, "SELECT COUNT(*) FROM memories") == memories
    status = a.run("hub", "status", "--json").ok().json()
    assert pair.b.device_fp() in status["devices_refused_from"], status
    pair.b.save("written by the misbehaving device afterwards")
    pair.b.run("sync").ok()
    again = a.run("sync", "--json").ok().json()
    assert again["refused"] and all(pair.b.device_fp() in r for r in again["refused"]), again
    assert sqlite_value(a.brain, "SELECT COUNT(*) FROM memories") == memories
