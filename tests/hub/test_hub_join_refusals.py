"""What `aimos hub join`, `aimos hub init` and `aimos sync` refuse (issue 39), through the real CLI:
each refusal exits with the project's code for it, says why and what to do, and leaves nothing
behind (no brain, no keystore item, no anchor, no hub state) and the hub as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import PASSPHRASE_ENV, assert_refused, assert_unchanged, snapshot
from support.hub_devices import (
    PASSPHRASE,
    Device,
    Pair,
    hub_query,
    hub_records,
    install,
    nothing_left,
    passphrase_file,
)

pytestmark = pytest.mark.timeout(240)


def test_a_join_with_the_wrong_passphrase_is_refused_and_leaves_nothing(
    made_pair: Pair, tmp_path: Path
) -> None:
    wrong = "not the master's passphrase, though long enough"
    c = Device(tmp_path / "C", passphrase_file(tmp_path, wrong))
    before = hub_records(made_pair.url)
    refused = c.run("hub", "join", made_pair.url, "--keystore", "file")
    assert_refused(refused, 6, str(c.passphrase_file))
    assert "wrong master passphrase" in refused.err, refused.describe()
    assert wrong not in refused.both and PASSPHRASE not in refused.both, refused.describe()
    nothing_left(c.home)
    assert hub_records(made_pair.url) == before


def test_a_join_into_a_home_that_holds_a_brain_is_refused(
    made_pair: Pair, tmp_path: Path, brain_template: Callable[[str], Path]
) -> None:
    home = tmp_path / "D"
    shutil.copytree(brain_template(PASSPHRASE), home, symlinks=True)
    d = Device(home, passphrase_file(tmp_path))
    before = snapshot(home)
    refused = d.run("hub", "join", made_pair.url, "--keystore", "file")
    assert_refused(refused, 2, "new AIMOS_HOME")
    assert "already holds brain" in refused.err, refused.describe()
    assert_unchanged(home, before)
    # the home of a device already on the hub is refused the same way
    a_before = snapshot(made_pair.a.home)
    assert_refused(made_pair.a.run("hub", "join", made_pair.url), 2, "new AIMOS_HOME")
    assert_unchanged(made_pair.a.home, a_before)


def test_a_join_of_a_database_with_no_hub_names_hub_init(hub_url: str, tmp_path: Path) -> None:
    c = Device(tmp_path / "C", passphrase_file(tmp_path))
    refused = c.run("hub", "join", hub_url, "--keystore", "file")
    assert_refused(refused, 3, "aimos hub init")
    assert "holds no aimos hub" in refused.err, refused.describe()
    nothing_left(c.home)
    assert hub_query(hub_url, "SELECT to_regclass('aimos_hub_records') IS NULL") == [(True,)]


def test_hub_init_twice_is_a_usage_error(pair: Pair, new_hub_url: Callable[[], str]) -> None:
    a = pair.a
    before, hub_before = snapshot(a.home), hub_records(pair.url)
    again = a.run("hub", "init", pair.url)
    assert_refused(again, 2, "aimos sync")
    assert "already linked to a hub" in again.err, again.describe()
    # nor onto another hub: the brain is linked to one, and the other database is left untouched
    other = new_hub_url()
    assert_refused(a.run("hub", "init", other), 2, "aimos sync")
    assert hub_query(other, "SELECT to_regclass('aimos_hub_meta') IS NULL") == [(True,)]
    assert_unchanged(a.home, before)
    assert hub_records(pair.url) == hub_before


def test_a_second_copy_of_a_brain_cannot_put_it_on_its_hub_again(tmp_path: Path, hub_url: str) -> None:
    """A brain is on a hub once: a copy of the first device's home made before `hub init` (so not
    linked) cannot add the same brain to the hub a second time."""
    secret = passphrase_file(tmp_path)
    first = install(tmp_path / "first", secret)
    unlinked = tmp_path / "copy"
    shutil.copytree(first.home, unlinked, symlinks=True)
    first.run("hub", "init", hub_url).ok()
    records = hub_records(hub_url)
    copy = Device(unlinked, secret)
    refused = copy.run("hub", "init", hub_url)
    assert_refused(refused, 2, "aimos sync")
    assert "already holds brain" in refused.err, refused.describe()
    assert hub_records(hub_url) == records
    assert copy.run("sync").code == 3  # the copy did not link itself on the way


@pytest.mark.parametrize(
    "url",
    ["mysql://aimos@db.home/aimos", "https://db.home/aimos", "/var/run/postgresql", "aimos_hub"],
)
@pytest.mark.parametrize("command", ["init", "join"])
def test_a_url_that_is_not_postgresql_is_a_usage_error(
    made_pair: Pair, tmp_path: Path, command: str, url: str
) -> None:
    if command == "init":
        device = made_pair.a
        before = snapshot(device.home)
    else:
        device = Device(tmp_path / "C", passphrase_file(tmp_path))
    refused = device.run("hub", command, url)
    assert_refused(refused, 2, "postgresql://")
    assert "is not a PostgreSQL URL" in refused.err, refused.describe()
    if command == "init":
        assert_unchanged(device.home, before)
    else:
        nothing_left(device.home)


def test_sync_and_hub_status_on_a_brain_with_no_hub_name_the_way_to_link_it(
    tmp_path: Path, brain_template: Callable[[str], Path]
) -> None:
    home = tmp_path / "D"
    shutil.copytree(brain_template(PASSPHRASE), home, symlinks=True)
    d = Device(home, passphrase_file(tmp_path))
    before = snapshot(home)
    for args in (("sync",), ("sync", "--json"), ("hub", "status"), ("hub", "status", "--json")):
        refused = d.run(*args)
        assert_refused(refused, 3, "aimos hub init", "aimos hub join")
        assert "not linked to a hub" in refused.err, refused.describe()
    assert_unchanged(home, before)


def test_a_join_says_where_the_passphrase_came_from_never_the_passphrase(
    made_pair: Pair, tmp_path: Path
) -> None:
    """The join that succeeds says where the passphrase came from, never the passphrase."""
    c = Device(tmp_path / "C", passphrase_file(tmp_path))
    joined = c.run("hub", "join", made_pair.url, "--keystore", "file")
    joined.ok()
    assert f"({PASSPHRASE_ENV})" in joined.err and PASSPHRASE not in joined.both, joined.describe()
    assert made_pair.url.split("?")[0] in joined.out, joined.describe()


def test_a_restore_on_a_synced_brain_is_refused_and_points_to_a_join(pair: Pair) -> None:
    """A backup put back on a device that syncs would fork what it already pushed (the same
    record numbers, its event chains): refused, nothing changed, the hint names `aimos hub join`."""
    b = pair.b
    backup = b.run("backup", "--json").ok().json()["path"]
    b.save("written after the backup, and pushed")
    b.run("sync").ok()
    before = snapshot(b.home)
    refused = b.run("restore", backup, "--yes")
    assert_refused(refused, 2, "aimos hub join")
    assert "syncs through a hub" in refused.err, refused.describe()
    assert_unchanged(b.home, before)


def test_a_sealed_master_asking_for_gigabytes_of_argon2_is_refused_at_once(
    made_pair: Pair, tmp_path: Path
) -> None:
    """The hub's owner stores a sealing of the master that asks Argon2id for 4 GiB and many
    passes (a join would exhaust the device): refused as damaged before any hashing, naming the
    hub, not the passphrase; nothing is joined."""
    import json

    import psycopg

    with psycopg.connect(made_pair.url, autocommit=True) as conn:
        ((brain, sealed),) = conn.execute(
            "SELECT brain_id, sealed_master FROM aimos_hub_masters ORDER BY seq DESC LIMIT 1"
        ).fetchall()
        costly = json.dumps({**json.loads(sealed), "memlimit": 4 << 30, "opslimit": 64}, sort_keys=True)
        conn.execute(
            "INSERT INTO aimos_hub_masters (brain_id, seq, sealed_master)"
            " SELECT %s, MAX(seq) + 1, %s FROM aimos_hub_masters WHERE brain_id = %s",
            (brain, costly, brain),
        )
    c = Device(tmp_path / "C", passphrase_file(tmp_path))
    refused = c.run("hub", "join", made_pair.url, "--keystore", "file")
    assert_refused(refused, 6, "check who can write to the hub")
    assert "asks for an Argon2 cost aimos never sets" in refused.err, refused.describe()
    nothing_left(c.home)
