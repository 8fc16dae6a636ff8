"""A hub that withholds one device's records from another (issue 39, red-team finding 6): its owner
serves device B everything but device C's newest records, which A gets. Each device's push that
sends rows ends with a signed record of how far it has pulled (aimos/hub/heads.py); B pulls A's,
and `aimos sync` and `aimos hub status` on B say that C has records the hub did not give it, how
many, and that A has them. Once the hub serves them again, B asks for them by device and number
(the hub's order went past them) and is whole. With nothing withheld (two devices, or three),
nothing is said.

Real PostgreSQL: the owner gives B a role of its own and a row-level security policy that hides
C's newest records from that role alone (the hub's owner controls the database); A and C connect
as the owner and see every record. Through the real CLI in subprocesses.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from support.hub_devices import Device, Pair, assert_verified_alike, hub_query, join

pytestmark = pytest.mark.timeout(300)

RECORDS = "aimos_hub_records"


def says_nothing(*devices: Device) -> None:
    """A sync and `aimos hub status` on each device: nothing behind."""
    for device in devices:
        assert device.sync()["behind"] == [], device.home.name
        assert device.run("hub", "status", "--json").json()["behind"] == [], device.home.name


def test_two_devices_syncing_as_usual_hear_of_nothing_withheld(pair: Pair) -> None:
    a, b = pair.a, pair.b
    for round_ in range(2):
        a.save(f"the heron came back to the reservoir, round {round_}")
        b.save(f"the turbine in hangar nine was serviced, round {round_}")
        says_nothing(a, b, a, b)
    assert {r["device"] for r in hub_records_of(pair.url)} == {a.hub_name(), b.hub_name()}


def hub_records_of(url: str) -> list[dict[str, object]]:
    return [{"device": r[0], "n": r[1]} for r in hub_query(url, f"SELECT device, device_n FROM {RECORDS}")]


@pytest.fixture
def victim_role(pair: Pair) -> Iterator[str]:
    """A database role for device B alone, allowed what a device needs (read and append)."""
    role = f"aimos_victim_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pair.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(sql.Identifier(role)))
        conn.execute(
            sql.SQL("GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {}").format(sql.Identifier(role))
        )
    yield role
    with psycopg.connect(pair.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def withhold(url: str, role: str, device: str, after: int) -> None:
    """As the hub's owner: from ``role``, hide ``device``'s records after number ``after``."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {RECORDS} ENABLE ROW LEVEL SECURITY")
        conn.execute(
            sql.SQL(
                "CREATE POLICY withhold ON {} USING (current_user <> {} OR device <> {} OR device_n <= {})"
                " WITH CHECK (true)"
            ).format(sql.Identifier(RECORDS), sql.Literal(role), sql.Literal(device), sql.Literal(after))
        )


def test_a_device_whose_records_the_hub_withholds_from_another_is_named_there(
    pair: Pair, victim_role: str, tmp_path: Path
) -> None:
    a, b = pair.a, pair.b
    c = join(tmp_path / "C", a.passphrase_file, pair.url, b)
    c.save("the orchard ladder leans on the pear tree")
    says_nothing(c, a, b, c, a, b)  # three devices syncing as usual: nothing withheld

    newest_of_c = max(int(str(r["n"])) for r in hub_records_of(pair.url) if r["device"] == c.hub_name())
    withhold(pair.url, victim_role, c.hub_name(), newest_of_c)
    b.point_at(re.sub(r"([?&]user=)[^&]*", rf"\g<1>{victim_role}", pair.url))

    hidden = c.save("the lighthouse keeper logs the fog at dawn")
    c.sync()
    a.sync()  # A pulls C's records
    a.save("the recycling goes out on Tuesdays")
    a.sync()  # and its push tells how far it has pulled
    withheld = sum(
        1 for r in hub_records_of(pair.url) if r["device"] == c.hub_name() and int(str(r["n"])) > newest_of_c
    )
    assert withheld > 0

    synced = b.sync()
    assert hidden not in b.memory_ids()
    assert synced["behind"] == [
        {"device": c.device_fp(), "records": withheld, "seen_by": a.device_fp(), "here": newest_of_c}
    ], synced
    said = b.run("sync").ok()
    assert f"warning: device {c.device_fp()} has {withheld} more records on the hub" in said.err, (
        said.describe()
    )
    assert f"device {a.device_fp()} has pulled them" in said.err, said.describe()
    status = b.run("hub", "status").ok()
    assert f"behind        device {c.device_fp()}" in status.out, status.describe()

    assert synced["caught_up"] == 0  # it asked for them by device: the hub still withholds them

    # the owner stops withholding: B asks for C's records by number, gets them, and says nothing more
    b.point_at(pair.url)
    caught = b.sync()
    assert caught["caught_up"] == withheld and caught["behind"] == [], caught
    assert hidden in b.memory_ids()
    c.save("the bins go out on Thursdays too")
    c.sync()
    assert b.sync()["memories"] == 1  # C's next records follow the ones B took
    says_nothing(a, b, c, a, b, c)  # (the home's labels of the newest memories reach everyone)
    assert_verified_alike(a, b, c)
    assert b.run("hub", "status", "--json").json()["behind"] == []
