"""A red team on the hub (issue 39): the owner of the hub's database, a hostile device of the brain
(its own epochs and the content key: what any joined device holds), and a careless person.

Each test is an attack that worked when it was written, and asserts what the brain does now that
it is fixed. (Attacks not fixed yet are listed in the issue's notes, not here.) The devices are real
AIMOS_HOMEs run through the real CLI (`aimos install`, `aimos hub init|join`, `aimos sync`); a
hostile device's records are crafted with aimos's own Python API in that device's home (its file
keystore, its content key), as modified aimos code on that device would write them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.cli import PASSPHRASE_ENV, Result, run_aimos
from support.hub_devices import opened_brain

PASSPHRASE = "correct horse battery staple"


@dataclass
class Device:
    """One device of the brain: its own AIMOS_HOME and environment."""

    name: str
    home: Path
    env: dict[str, str]

    def aimos(self, *args: str, **kwargs: Any) -> Result:
        return run_aimos(*args, env={**self.env, **kwargs.pop("env", {})}, **kwargs)

    def install(self) -> Result:
        return self.aimos(
            "install", "--yes", "--no-guides", "--keystore", "file", "--no-service", unset=("AIMOS_KEYSTORE",)
        ).ok()

    def join(self, url: str, *args: str, env: dict[str, str] | None = None) -> Result:
        """`aimos hub join URL` into this device's home (file keystore, no service)."""
        return self.aimos(
            "hub",
            "join",
            url,
            "--keystore",
            "file",
            "--no-service",
            *args,
            env=env or {},
            unset=("AIMOS_KEYSTORE",),
        )

    def sync(self) -> dict[str, Any]:
        return self.aimos("sync", "--json").json()  # type: ignore[no-any-return]

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        import apsw

        conn = apsw.Connection(str(self.home / "brain.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            return list(conn.execute(query, params))
        finally:
            conn.close()

    @property
    def fp(self) -> str:
        return str(self.sql("SELECT value FROM brain_meta WHERE key = 'device_fp'")[0][0])

    def opened(self) -> AbstractContextManager[Any]:
        """This device's brain opened in-process by aimos's own session (its keystore, its
        housekeeper sealing every write): what modified aimos code on the device would hold."""
        return opened_brain(self.home, self.env)


@pytest.fixture
def make_device(tmp_path: Path) -> Callable[[str], Device]:
    pass_file = tmp_path / "passphrase"
    pass_file.write_text(PASSPHRASE + "\n")
    pass_file.chmod(0o600)

    def make(name: str) -> Device:
        home = tmp_path / name
        home.mkdir(mode=0o700)
        return Device(name, home, {"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)})

    return make


@pytest.fixture
def hub(hub_url: str, make_device: Callable[[str], Device]) -> Callable[[str], Device]:
    """A factory of devices on one hub: the first installs the brain and puts it on the hub (the
    home), every later one joins it."""
    made: list[Device] = []

    def device(name: str) -> Device:
        dev = make_device(name)
        if not made:
            dev.install()
            dev.aimos("hub", "init", hub_url).ok()
        else:
            dev.join(hub_url).ok()
        made.append(dev)
        return dev

    return device


def save(dev: Device, text: str) -> str:
    return str(dev.aimos("save", text, "--json").json()["memory_id"])


def recall(dev: Device, query: str) -> list[str]:
    found = dev.aimos("recall", query, "--json").json()
    return [m["memory_id"] for m in found["results"]]


def weight(dev: Device, memory_id: str) -> int:
    return int(dev.sql("SELECT retrieval_weight_milli FROM memories WHERE memory_id = ?", (memory_id,))[0][0])


def label(dev: Device, memory_id: str) -> str:
    return str(dev.sql("SELECT epistemic_label FROM memories WHERE memory_id = ?", (memory_id,))[0][0])


def _outcome_as_home_would(dev: Device, memory_id: str, *, good: bool) -> None:
    """What modified aimos on a device that is not the home does: record an outcome and sign its
    weight transition itself (give_feedback's is_home test left out)."""
    from aimos.actions.bodies import build_outcome_body
    from aimos.actions.session import now
    from aimos.identity.requests import sign_request
    from aimos.learning.outcomes import latest_receipt_for, record_outcome
    from aimos.vocabulary import PATH_OUTCOME

    with dev.opened() as brain:
        body = build_outcome_body(
            memory_id=memory_id,
            receipt_id=latest_receipt_for(brain.conn, memory_id, "cli"),
            outcome="good" if good else "bad",
        )
        request = sign_request(brain.signer("cli"), body, PATH_OUTCOME, now())
        record_outcome(brain.conn, brain.housekeeper(), request, now())


# --- a hostile device: chains only the home appends to ---------------------------------------------
def test_a_weight_transition_signed_by_a_device_that_is_not_the_home_is_refused(
    hub: Callable[[str], Device],
) -> None:
    """docs/sync.md: "after [a save] only the home appends" to a memory's weight chain. Only the
    writer's own code keeps to it: a device that is not the home signs a weight transition with its
    own housekeeper (any device's housekeeper passes the brain's triggers), and the home, and every
    other device, applies it. Two such writers fork the chain."""
    a, b = hub("A"), hub("B")
    memory = save(a, "the staging database listens on port 6543")
    a.sync()
    b.sync()
    assert memory in recall(b, "staging database port")
    _outcome_as_home_would(b, memory, good=True)
    assert weight(b, memory) != 1000  # B moved the weight itself
    b.sync()
    pulled = a.aimos("sync", "--json")
    assert weight(a, memory) == 1000, "the home applied a weight transition another device signed"
    assert pulled.code != 0 or json.loads(pulled.out)["refused"], pulled.describe()


def test_a_label_signed_by_a_device_that_is_not_the_home_is_refused(hub: Callable[[str], Device]) -> None:
    """The label chain has one writer too (the home's detector and classifier): a device that is
    not the home labels another device's memory poison with its own housekeeper, and every device
    applies it; the memory is withheld from recall everywhere."""
    from aimos.actions.session import now
    from aimos.epistemic.chain import append_classification
    from aimos.store.connection import write_transaction

    a, b = hub("A"), hub("B")
    memory = save(a, "the release train leaves every second Thursday")
    a.sync()
    b.sync()
    with b.opened() as brain, write_transaction(brain.conn, brain.housekeeper()):
        append_classification(
            brain.conn,
            brain.housekeeper(),
            memory,
            label="poison_likely",
            confidence_milli=990,
            basis="classifier",
            now=now(),
        )
    b.sync()
    a.aimos("sync", "--json")
    assert label(a, memory) == "unverified", "the home applied a label another device signed"
    assert memory in recall(a, "release train Thursday")


def test_a_nonce_squatted_by_another_device_does_not_drop_a_forwarded_outcome(
    hub: Callable[[str], Device],
) -> None:
    """request_nonces rows travel and no guard checks them (no signature, no owner): a hostile
    device reads the nonce of an outcome another device kept for the home (hub_requests) and pushes
    a request_nonces row with it. The home then takes the outcome for applied (apply_forwarded skips
    every request whose nonce is recorded): it is dropped, and no device says so."""
    from aimos.store.connection import write_transaction

    a, b, c = hub("A"), hub("B"), hub("C")
    memory = save(a, "the backup window opens at 02:00 UTC")
    a.sync()
    b.sync()
    c.sync()
    assert memory in recall(b, "backup window")
    kept = b.aimos("feedback", memory, "--good", "--json").json()
    assert kept["provisional"] is True
    b.sync()
    c.sync()
    ((agent, valid_from, nonce, ts),) = c.sql(
        "SELECT agent_id, agent_valid_from, nonce, ts_signed FROM hub_requests"
    )
    with c.opened() as brain, write_transaction(brain.conn, brain.housekeeper()):
        brain.conn.execute(
            "INSERT INTO request_nonces (agent_id, nonce, valid_from, ts_signed, signed_path, request_hash,"
            " received_at) VALUES (?, ?, ?, ?, '/aimos/recall', ?, ?)",
            (agent, nonce, valid_from, ts, "0" * 64, ts),
        )
    c.sync()
    done = a.sync()
    assert weight(a, memory) > 1000 or done.get("forwarded_refused"), (
        f"the home dropped B's outcome without a word: {done}"
    )


def _push_as(hostile: Device, claimed: Device, table: str, row: dict[str, Any]) -> None:
    """A record the hostile device seals with the brain's content key (it holds it, as every
    device does) and files under another device's name, continuing that device's chain of records
    (the link is a hash of the newest box, which anyone can read)."""
    from aimos.hub import box, records
    from aimos.hub.device import content_key, linked_url
    from aimos.store.postgres import PostgresHub
    from aimos.vocabulary import HUB_RECORD_SIGNATURE

    with hostile.opened() as brain:
        key, url = content_key(brain.keystore), linked_url(brain.keystore)
        signer = brain.housekeeper()  # the hostile device signs with the key it holds
        filed = box.device_name(key, claimed.fp)
        with PostgresHub(url, brain.meta["brain_id"]) as hub:
            newest = hub.newest_of(filed)
            assert newest is not None
            record = records.Record(
                claimed.fp, newest[0] + 1, box.record_link(newest[1]), table, row, signer.valid_from
            )
            plaintext = records.encode(record)
            sealed = box.seal_record(key, signer.key.sign(HUB_RECORD_SIGNATURE + plaintext) + plaintext)
            hub.append(filed, [(record.n, box.row_name(key, table, record.key_text()), sealed)])


def test_a_record_filed_under_another_devices_name_is_refused(hub: Callable[[str], Device]) -> None:
    """A record's device and its chain are bound by the content key alone, which every device
    holds: a hostile device files records under the home's name, continuing the home's chain.
    Every other device applies them as the home's; the home never does (it skips its own records),
    so the devices diverge, and the home's next push continues the forged chain unaware."""
    a, b, c = hub("A"), hub("B"), hub("C")
    a.sync()
    b.sync()
    ((agent, valid_from),) = b.sql(
        "SELECT agent_id, valid_from FROM identity_epochs WHERE role = 'agent' AND device_fp = ?", (b.fp,)
    )
    forged = {
        "agent_id": agent,
        "nonce": "forged-under-the-homes-name",
        "valid_from": valid_from,
        "ts_signed": valid_from,
        "signed_path": "/aimos/recall",
        "request_hash": "0" * 64,
        "received_at": valid_from,
    }
    _push_as(c, a, "request_nonces", forged)
    b.aimos("sync", "--json")
    assert a.sync()["not_its_own"], "the home did not say a record under its name is not its own"
    save(a, "the home keeps writing, unaware")
    a.sync()
    assert not b.sql("SELECT 1 FROM request_nonces WHERE nonce = ?", (forged["nonce"],)), (
        "B applied a record another device filed under the home's name"
    )


def _clock(seconds: int) -> dict[str, str]:
    """An `aimos` process whose wall clock is ``seconds`` off the real one (libfaketime)."""
    import glob

    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))
    assert found, "libfaketime is missing: `apt-get install faketime`"
    return {"LD_PRELOAD": found[0], "FAKETIME": f"{seconds:+d}", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


# --- revocation and expiry -------------------------------------------------------------------------
def test_a_revoked_device_with_its_clock_set_back_gets_nothing_applied(
    hub: Callable[[str], Device], make_device: Callable[[str], Device], hub_url: str
) -> None:
    """A revocation cuts the device at the newest of its records the revoking device held
    (hub_cuts), whatever times its later records claim: a stolen device whose clock is set back
    before the revocation signs saves that no device applies, the third device as the revoker."""
    import time

    a, b = hub("A"), hub("B")
    c = make_device("C")
    c.join(hub_url, "--agent-id", "laptop").ok()
    c.sync()
    started = max(
        int(r[0]) for r in c.sql("SELECT valid_from FROM identity_epochs WHERE device_fp = ?", (c.fp,))
    )
    while time.time() < started + 6:  # the revocation comes well after C's epochs began
        time.sleep(0.5)
    a.sync()
    a.aimos("hub", "revoke", c.fp, "--reason", "laptop stolen").ok()
    a.sync()
    back = _clock(started + 2 - int(time.time()))  # inside C's epochs, before the revocation
    stolen = c.aimos(
        "save", "wire the deposit to account 0000 1111 2222", "--as", "laptop", "--json", env=back
    )
    assert stolen.code == 0, stolen.describe()
    stolen = stolen.json()
    c.aimos("sync", env=back)  # it pushes before it pulls the revocation
    done = a.aimos("sync", "--json")
    assert not a.sql("SELECT 1 FROM memories WHERE memory_id = ?", (stolen["memory_id"],)), (
        f"the home applied a save the revoked device signed after its revocation: {done.describe()}"
    )
    assert any(c.fp in r and "cut by the master" in r for r in done.json()["refused"]), done.describe()
    on_b = b.sync()
    assert not b.sql("SELECT 1 FROM memories WHERE memory_id = ?", (stolen["memory_id"],)), on_b
    assert b.sql("SELECT device_fp, why FROM hub_cuts") == [(c.fp, "revoked")]
    for dev in (a, b):
        assert dev.aimos("verify", "--json").json()["ok"] is True


def test_two_devices_revoking_one_device_while_apart_keep_syncing(hub: Callable[[str], Device]) -> None:
    """A careless person revokes the lost laptop C from A and again from B before either synced:
    each holds its own revocation of C's epochs. Every device syncs on (the revocation held first
    stands), and C's later records are refused everywhere."""
    a, b, c = hub("A"), hub("B"), hub("C")
    for dev in (c, a, b):
        dev.sync()
    a.aimos("hub", "revoke", c.fp, "--reason", "lost on the train").ok()
    b.aimos("hub", "revoke", c.fp, "--reason", "the laptop was lost").ok()
    late = save(c, "the alarm code changed to 4711")
    c.aimos("sync")
    results = [dev.aimos("sync") for dev in (a, b, a, b)]
    assert all(r.code == 0 for r in results), "\n".join(r.describe() for r in results)
    for dev in (a, b):
        assert not dev.sql("SELECT 1 FROM memories WHERE memory_id = ?", (late,))
        # C by its id: devices are listed by when they joined, which two quick joins can share
        listed = {d["device"]: d for d in dev.aimos("hub", "devices", "--json").json()}
        assert listed[c.fp]["revoked"] is True, listed
        assert dev.aimos("verify", "--json").json()["ok"] is True


def test_a_revoked_device_writing_garbage_to_the_hub_stops_no_sync(
    hub: Callable[[str], Device], hub_url: str
) -> None:
    """A revoked device still holds the hub's URL (its login outlives the revocation): it appends a
    box of random bytes under its own hub name. Its records after the cut are refused unread, so
    the garbage stops no other device's sync."""
    a, b, c = hub("A"), hub("B"), hub("C")
    for dev in (a, b):
        dev.sync()
    save(c, "the spare charger is in the hall cupboard")
    c.sync()
    with psycopg.connect(hub_url) as conn:
        [(c_name,)] = conn.execute(
            "SELECT device FROM aimos_hub_records ORDER BY seq DESC LIMIT 1"
        ).fetchall()
    a.sync()
    a.aimos("hub", "revoke", c.fp, "--reason", "sold the laptop").ok()
    a.sync()
    with psycopg.connect(hub_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO aimos_hub_records (brain_id, seq, device, device_n, name, box)"
            " SELECT brain_id, MAX(seq) + 1, %s, (SELECT MAX(device_n) + 1 FROM aimos_hub_records"
            " WHERE device = %s), decode(md5(random()::text) || md5(random()::text), 'hex'),"
            " decode(repeat(md5(random()::text), 12), 'hex')"
            " FROM aimos_hub_records GROUP BY brain_id",
            (c_name, c_name),
        )
    for dev in (a, b, a, b):
        synced = dev.aimos("sync", "--json")
        assert synced.code == 0, synced.describe()
    assert b.aimos("verify", "--json").json()["ok"] is True


# --- the home moved while the old home was online (a careless person) ------------------------------
def test_moving_the_home_while_the_old_home_is_online_does_not_stop_every_devices_sync(
    hub: Callable[[str], Device],
) -> None:
    """`aimos hub home` on B while A (the home until it hands over) still gives feedback: A keeps
    writing the chains until its next sync, then hands over; B takes over at its next sync and
    applies what it kept for the home. Every device syncs on, with one chain per memory, and the
    three weights agree."""
    a, b, c = hub("A"), hub("B"), hub("C")
    memory = save(a, "the on-call phone is in the top drawer")
    for dev in (a, b, c):
        dev.sync()
    recall(a, "on-call phone drawer")
    recall(b, "on-call phone drawer")
    moved = b.aimos("hub", "home").ok()
    assert "takes over once" in moved.both, moved.describe()
    b.sync()
    b.aimos("feedback", memory, "--good").ok()  # not the home yet: kept for the home
    a.aimos("feedback", memory, "--bad").ok()  # A has not pulled the move yet: still the home
    results = [dev.aimos("sync") for dev in (a, b, c, a, b, c)]
    assert all(r.code == 0 for r in results), "\n".join(r.describe() for r in results)
    homes = {dev.name: dev.aimos("hub", "status", "--json").json()["home"] for dev in (a, b, c)}
    assert set(homes.values()) == {b.fp}, homes
    weights = {dev.name: weight(dev, memory) for dev in (a, b, c)}
    assert len(set(weights.values())) == 1, weights
    assert [len(dev.sql("SELECT 1 FROM outcomes WHERE memory_id = ?", (memory,))) for dev in (a, b, c)] == [
        2
    ] * 3
    # B writes the chains now, at once; A keeps what it is given for B
    recall(b, "on-call phone drawer")
    recall(a, "on-call phone drawer")
    assert not b.aimos("feedback", memory, "--good", "--json").json().get("provisional")
    assert a.aimos("feedback", memory, "--good", "--json").json().get("provisional") is True
    for dev in (a, b, c):
        assert dev.aimos("verify", "--json").json()["ok"] is True


def test_a_device_that_is_not_the_home_cannot_hand_the_home_over(hub: Callable[[str], Device]) -> None:
    """While B waits to take over from A, C (a hostile device: its own housekeeper key) signs a
    handover of its own: every device refuses it by name, A stays the home until it hands over."""
    from aimos.actions.session import now
    from aimos.identity.devices import hand_over, waiting_home
    from aimos.store.connection import write_transaction

    a, b, c = hub("A"), hub("B"), hub("C")
    b.aimos("hub", "home").ok()
    b.sync()
    c.sync()
    with c.opened() as brain:
        waiting = waiting_home(brain.conn)
        assert waiting is not None and waiting["device_fp"] == b.fp
        signer = brain.housekeeper()
        with write_transaction(brain.conn, signer):
            hand_over(brain.conn, waiting["home_id"], c.fp, now(), housekeeper=signer)
    c.sync()
    refused = b.sync()["refused"]
    assert any(c.fp in r and "may not write" in r for r in refused), refused
    assert not b.sql("SELECT 1 FROM hub_handovers WHERE from_device = ?", (c.fp,))
    assert b.aimos("hub", "status", "--json").json()["home"] == a.fp
    a.sync()
    assert a.aimos("hub", "status", "--json").json()["home"] == b.fp  # A handed over on its own


def test_a_lost_home_is_replaced_by_force_and_cut_off(hub: Callable[[str], Device]) -> None:
    """A (the home) is lost: B takes over with `aimos hub home --force`. When A comes back, what it
    wrote after the newest of its records B held is refused on every device, and A's sync says it
    must join again; B and C sync on and verify alike."""
    a, b, c = hub("A"), hub("B"), hub("C")
    memory = save(a, "the boiler pressure should read one and a half bar")
    for dev in (a, b, c):
        dev.sync()
    recall(a, "boiler pressure")
    a.aimos("feedback", memory, "--bad").ok()  # A, lost before it syncs this
    forced = b.aimos("hub", "home", "--force").ok()
    assert "cut off" in forced.both and a.fp in forced.both, forced.describe()
    assert b.aimos("hub", "status", "--json").json()["this_device_is_home"] is True
    b.sync()
    c.sync()
    late = a.aimos("sync")
    assert late.code != 0 and "join the brain again" in late.both.lower(), late.describe()
    assert "Traceback" not in late.both
    on_c = c.sync()
    assert any(a.fp in r for r in on_c["refused"]), on_c
    assert len(c.sql("SELECT 1 FROM outcomes WHERE memory_id = ?", (memory,))) == 0
    recall(c, "boiler pressure")
    c.aimos("feedback", memory, "--good").ok()
    c.sync(), b.sync(), c.sync()
    assert weight(b, memory) == weight(c, memory) > 1000
    for dev in (b, c):
        assert dev.aimos("verify", "--json").json()["ok"] is True


# --- the hub's owner -------------------------------------------------------------------------------
def _hub_sql(url: str, *statements: str) -> None:
    """The hub's owner at the database: guards off for the statements, then on again."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE aimos_hub_records DISABLE TRIGGER USER")
        for statement in statements:
            conn.execute(statement)
        conn.execute("ALTER TABLE aimos_hub_records ENABLE TRIGGER USER")


def test_a_hub_that_lost_a_devices_newest_records_gets_them_again(
    hub: Callable[[str], Device], hub_url: str
) -> None:
    """The hub's database restored from last night's backup (or its owner deleting the newest
    records): the device that pushed them never sends them again (its push continues from what the
    hub holds, after the seal it last pushed), so they are lost to every other device, and what it
    writes next no longer follows on them there. No device says the hub went back."""
    a, b = hub("A"), hub("B")
    a.sync()
    b.sync()
    with psycopg.connect(hub_url) as conn:
        [(before,)] = conn.execute("SELECT MAX(seq) FROM aimos_hub_records").fetchall()
    lost = save(a, "the spare key is under the blue flowerpot")
    a.sync()
    _hub_sql(hub_url, f"DELETE FROM aimos_hub_records WHERE seq > {before}")
    kept = save(a, "the garage code is the year the house was built")
    a.sync()
    pulled = b.aimos("sync")
    assert pulled.code == 0, pulled.describe()
    assert {lost, kept} <= {r[0] for r in b.sql("SELECT memory_id FROM memories")}


# --- secrets ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("password", ["s3cr?t-pw", "s3cr#t-pw"])
def test_the_hubs_password_never_shows_whatever_characters_it_holds(
    make_device: Callable[[str], Device], hub_url: str, password: str
) -> None:
    """libpq takes `?` and `#` in a URL's password; `masked` stopped at them, so `hub init`, `sync`
    and `hub status` printed the password (the cluster's trust authentication takes any)."""
    url = hub_url.replace("postgresql:///", f"postgresql://postgres:{password}@/", 1)
    a = make_device("A")
    a.install()
    said = [
        a.aimos("hub", "init", url),
        a.aimos("sync"),
        a.aimos("hub", "status"),
        a.aimos("hub", "status", "--json"),
    ]
    for result in said:
        result.ok()
        assert "s3cr" not in result.both, result.describe()


# --- a passphrase changed after `hub init` (a careless person) -------------------------------------
def test_a_device_joins_with_the_passphrase_changed_after_hub_init(
    hub: Callable[[str], Device], make_device: Callable[[str], Device], hub_url: str, tmp_path: Path
) -> None:
    """`aimos passphrase change` re-seals the master in the keystore only; the hub keeps it sealed
    with the old passphrase for good. A new device is then refused with the current passphrase
    ("wrong passphrase"), and the old one, which the person changed because it leaked, still opens
    the master from the hub: whoever reads the hub's database and knows it holds the master key."""
    a = hub("A")
    new = "a much better passphrase, changed since"
    read_end, write_end = os.pipe()
    os.write(write_end, (new + "\n").encode())
    os.close(write_end)
    try:
        a.aimos("passphrase", "change", "--new-passphrase-fd", str(read_end), pass_fds=(read_end,)).ok()
    finally:
        os.close(read_end)
    new_file = tmp_path / "new-passphrase"
    new_file.write_text(new + "\n")
    new_file.chmod(0o600)
    d = make_device("D")
    joined = d.join(hub_url, env={PASSPHRASE_ENV: str(new_file)})
    assert joined.code == 0, joined.describe()


def test_a_recall_receipt_for_another_devices_agent_is_refused(
    hub: Callable[[str], Device], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receipt's guard wants a request_nonces row (which anyone writes) and a housekeeper's
    signed event (any device's): a hostile device signs a receipt saying B's agent recalled a
    memory it never asked for, and every device records it as B's."""
    import aimos.recall.pipeline as pipeline
    from aimos.actions.bodies import build_recall_body
    from aimos.actions.session import now
    from aimos.identity.requests import VerifiedRequest, record_nonce, sign_request
    from aimos.identity.trusted import verified_grant
    from aimos.vocabulary import PATH_RECALL

    a, b, c = hub("A"), hub("B"), hub("C")
    memory = save(a, "the board meets on the first Monday of the quarter")
    for dev in (a, b, c):
        dev.sync()
    ((agent, valid_from, cert_fp),) = b.sql(
        "SELECT agent_id, valid_from, cert_fingerprint FROM identity_epochs WHERE role = 'agent'"
        " AND device_fp = ?",
        (b.fp,),
    )

    def as_b(conn: Any, request: Any, **kwargs: Any) -> VerifiedRequest:  # C's modified aimos
        import hashlib

        from aimos.crypto.canonical import canonical_json

        body = canonical_json(request.body)
        verified = VerifiedRequest(
            request,
            agent,
            valid_from,
            cert_fp,
            "T1",
            verified_grant(conn, agent, valid_from) or {},
            hashlib.sha256(body).hexdigest(),
            body,
        )
        record_nonce(conn, verified, kwargs["now"])
        return verified

    monkeypatch.setattr(pipeline, "verify_request", as_b)
    with c.opened() as brain:
        request = sign_request(
            brain.signer("cli"), build_recall_body(query="board meets Monday"), PATH_RECALL, now()
        )
        forged = pipeline.recall(brain.conn, brain.housekeeper(), request, now(), meaning=False)
    assert forged.receipt["agent_id"] == agent and memory in json.dumps(forged.receipt["evidence"])
    c.sync()
    a.aimos("sync")
    assert not a.sql("SELECT 1 FROM recall_receipts WHERE receipt_id = ?", (forged.receipt["receipt_id"],)), (
        "the home recorded a recall B's agent never made"
    )


# --- a careless person: a backup restored, a text redacted --------------------------------------------
def test_a_text_redacted_on_one_device_is_gone_from_the_others(hub: Callable[[str], Device]) -> None:
    """`aimos redact` removed "one memory's text from the brain for good" on the device it ran on;
    the other devices kept the text, and the hub kept it (sealed) for every device that joins
    later. Now the master's record travels: B removes the text at its next sync, and redact says
    what the hub keeps."""
    a, b = hub("A"), hub("B")
    memory = save(b, "my bank PIN hint is the cat's birthday")
    b.sync()
    a.sync()
    redacted = a.aimos("redact", memory[:8], "--reason", "a PIN hint", input=f"redact {memory[:8]}\n").ok()
    a.sync()
    b.sync()
    kept = b.sql("SELECT value, key, source FROM memories WHERE memory_id = ?", (memory,))[0]
    assert kept == ("", None, ""), f"B still holds the redacted text ({kept!r}):\n{redacted.describe()}"
    assert "hub keeps" in redacted.both and "content key" in redacted.both, redacted.describe()
    b.aimos("verify").ok()


def test_the_hub_cannot_tell_the_first_devices_host_name(hub: Callable[[str], Device], hub_url: str) -> None:
    """Each record names its device in the clear; the first device's id is `uuid5(DNS, hostname)`
    (aimos install), so the hub's owner learns the machine's host name by trying names."""
    import socket
    import uuid

    a = hub("A")
    with psycopg.connect(hub_url) as conn:
        named = {r[0] for r in conn.execute("SELECT DISTINCT device FROM aimos_hub_records")}
    guess = f"aimos-device:{uuid.uuid5(uuid.NAMESPACE_DNS, socket.gethostname())}"
    assert a.fp == guess  # what install names the device
    assert guess not in named, "the hub's records name the device by a hash of its host name"


def test_a_refused_record_is_named_once_with_its_device(hub: Callable[[str], Device], hub_url: str) -> None:
    """A record the hub's owner changed refuses the pull "by name": the name said `hub record hub
    record #N` and not whose record it was, the device a person must look at (or revoke)."""
    a, b = hub("A"), hub("B")
    save(a, "the recycling goes out on Tuesdays")
    a.sync()
    with psycopg.connect(hub_url) as conn:
        [(seq,)] = conn.execute("SELECT MAX(seq) FROM aimos_hub_records").fetchall()
    _hub_sql(
        hub_url,
        f"UPDATE aimos_hub_records SET box = overlay(box placing '\\x00'::bytea from 30) WHERE seq = {seq}",
    )
    refused = b.aimos("sync")
    assert refused.code != 0, refused.describe()
    assert "hub record hub record" not in refused.both, refused.describe()
    assert f"hub record #{seq} (device {a.fp}" in refused.both, refused.describe()


def test_a_record_larger_than_any_aimos_writes_is_refused_unread(
    hub: Callable[[str], Device], hub_url: str
) -> None:
    """The hub's owner pads a record to 6 MiB (a pull of 2,000 such records would need 12 GB):
    the pull refuses it by name from its size on the hub, without reading it."""
    a, b = hub("A"), hub("B")
    save(a, "the window cleaner comes every other Thursday")
    a.sync()
    with psycopg.connect(hub_url) as conn:
        [(seq,)] = conn.execute("SELECT MAX(seq) FROM aimos_hub_records").fetchall()
    _hub_sql(
        hub_url,
        f"UPDATE aimos_hub_records SET box = box || decode(repeat('00', 6 * 1048576), 'hex') WHERE seq = {seq}",
    )
    refused = b.aimos("sync")
    assert refused.code != 0 and "Traceback" not in refused.both, refused.describe()
    assert f"hub record #{seq}" in refused.both and "more than any record aimos writes" in refused.both, (
        refused.describe()
    )


# --- ordinary use ------------------------------------------------------------------------------------
def test_two_devices_saving_the_same_text_offline_keep_syncing(hub: Callable[[str], Device]) -> None:
    """docs/sync.md (limits): "Two devices saving exactly the same text offline make two memories
    with one content hash, and the second to arrive is refused by the brain's uniqueness rule." It
    is refused with its whole batch, and again at every sync: from then on no device pulls
    anything from the device whose copy came second, nor anything after it."""
    a, b, c = hub("A"), hub("B"), hub("C")
    for dev in (a, b, c):
        dev.sync()
    save(a, "the user prefers dark mode")
    save(b, "the user prefers dark mode")
    later = save(b, "the user's time zone is Europe/Lisbon")
    results = [dev.aimos("sync") for dev in (a, b, c, a, b, c)]
    assert all(r.code == 0 for r in results[3:]), "\n".join(r.describe() for r in results[3:])
    assert all(later in {r[0] for r in dev.sql("SELECT memory_id FROM memories")} for dev in (a, c))


# --- a revoked device ----------------------------------------------------------------------------
def test_a_revoked_device_cannot_read_what_is_written_after_its_revocation(
    hub: Callable[[str], Device],
) -> None:
    """`aimos hub revoke` stopped a device's writes, not its reads: the content key was never
    replaced, so the stolen device (its keystore holds the key and the hub's URL) opened every
    record pushed after its revocation, memory text included. Now the revocation makes a new
    generation of the key, which the stolen device is not given: with every key it holds, it
    opens what was pushed before, and nothing pushed after."""
    from aimos.errors import VerificationError
    from aimos.hub import generations, records
    from aimos.hub.device import linked_url
    from aimos.store.postgres import PostgresHub

    a, c = hub("A"), hub("C")
    older = "the spare key to the shed hangs behind the calendar"
    save(a, older)
    c.sync()
    a.sync()
    a.aimos("hub", "revoke", c.fp, "--reason", "laptop stolen").ok()
    secret = "the board approved the merger with Northwind on Friday"
    save(a, secret)
    a.sync()
    texts, unopened = [], []
    with c.opened() as brain:
        ring, url = generations.held(brain.keystore), linked_url(brain.keystore)
        with PostgresHub(url, brain.meta["brain_id"]) as hub_:
            for r in hub_.after(0, 100_000, ""):
                try:
                    texts.append(records.decode(ring.open(r.box, "x")[64:], "x").row.get("value"))
                except VerificationError as exc:
                    unopened.append(exc.reason)
    assert older in texts
    assert secret not in texts, "the revoked device read a memory saved after its revocation"
    assert unopened and set(unopened) == {"hub_record_unknown_generation"}, unopened
    # its own sync says it is revoked, and takes in nothing
    refused = c.aimos("sync")
    assert refused.code == 6 and "the master revoked this device" in refused.err, refused.describe()
    assert secret not in {str(r[0]) for r in c.sql("SELECT value FROM memories")}


def test_a_record_sealed_under_a_generation_no_device_was_given_is_refused_by_name(
    hub: Callable[[str], Device],
) -> None:
    """A device of the brain seals its records under a content key generation no device was given
    (a key of its own making, pushed by its modified aimos): every other device refuses the record
    by name, as sealed under a generation it does not hold, and applies nothing of its batch."""
    from aimos import paths
    from aimos.hub import generations, sync
    from aimos.hub.device import linked_url, read_state
    from aimos.hub.pushed import PushedLog
    from aimos.store.postgres import PostgresHub

    a, b = hub("A"), hub("B")
    a.sync()
    saved = save(b, "the attic ladder needs a new hinge")
    with b.opened() as brain:
        ring = generations.held(brain.keystore).add(7, os.urandom(32))
        brain_id = brain.meta["brain_id"]
        with (
            PostgresHub(linked_url(brain.keystore), brain_id) as hub_,
            PushedLog(paths.hub_pushed_path(brain_id)) as log,
        ):
            after = int(read_state(brain_id)["pushed_through_seal"])
            sync.push(brain.conn, hub_, ring, b.fp, after, brain.housekeeper(), log)
    before = a.sql("SELECT COUNT(*) FROM memories")
    refused = a.aimos("sync")
    assert refused.code == 4, refused.describe()
    assert "is sealed under content key generation 7, which this device does not hold" in refused.err
    assert f"(device {b.fp}, record" in refused.err, refused.describe()
    assert a.sql("SELECT COUNT(*) FROM memories") == before
    assert saved not in {r[0] for r in a.sql("SELECT memory_id FROM memories")}
