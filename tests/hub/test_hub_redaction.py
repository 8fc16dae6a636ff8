"""A redaction on a synced brain (issue 39, red-team finding 5): `aimos redact` on one device
removes the text on every device of the brain at its next sync, and on a device that joins later
right after it pulls the memory; a redaction record the master did not sign (a hostile device's,
signed with its own housekeeper or agent key) is refused by name and changes nothing.

Through the real CLI in subprocesses (`aimos redact`, `aimos sync`, `aimos hub join`, `aimos
verify`, `aimos recall`); the hostile device writes its event with aimos's own Python API in its
own home, as modified aimos code there would, and pushes it with its real `aimos sync`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, run_aimos
from support.hub_devices import Device, Pair, assert_verified_alike, join, opened_brain

pytestmark = pytest.mark.timeout(240)

SECRET = "the safe's combination is 31 left 14 right 27 left"
WORD = b"combination"


def redact(device: Device, memory: str, reason: str = "a code to a safe") -> dict[str, Any]:
    """`aimos redact MEMORY --reason ... --json`, the confirmation typed on standard input."""
    done = run_aimos(
        "redact", memory[:8], "--reason", reason, "--json",
        env=device.env(), unset=("AIMOS_KEYSTORE",), input=f"redact {memory[:8]}\n",
    )  # fmt: skip
    return dict(done.ok().json())


def held_text(device: Device, memory: str) -> list[dict[str, Any]]:
    return device.query(f"SELECT value, key, source FROM memories WHERE memory_id = '{memory}'")


def brain_bytes(device: Device) -> bytes:
    """The brain file and its WAL, as they are on disk."""
    home = device.home
    return b"".join(p.read_bytes() for p in (home / BRAIN, home / f"{BRAIN}-wal") if p.exists())


def saved_everywhere(pair: Pair) -> str:
    """B saves the secret (with a key and a source), and both devices sync it."""
    memory = pair.b.save(SECRET, "--key", "safe:combination", "--source", "note:study")
    pair.b.sync()
    pair.a.sync()
    assert held_text(pair.a, memory) == [{"value": SECRET, "key": "safe:combination", "source": "note:study"}]
    return memory


def test_a_redaction_reaches_the_other_device_and_one_that_joins_later(pair: Pair, tmp_path: Path) -> None:
    memory = saved_everywhere(pair)
    done = redact(pair.a, memory)
    assert "hub keeps" in done["other_devices"] and "content key" in done["other_devices"], done
    pair.a.sync()
    synced = pair.b.sync()
    assert synced["redacted"] == [memory] and synced["redactions_refused"] == [], synced
    assert held_text(pair.b, memory) == [{"value": "", "key": None, "source": ""}]
    # the device that joins now pulls the memory with its text (the hub keeps it), then the record
    c = join(tmp_path / "C", pair.a.passphrase_file, pair.url, pair.b)
    assert held_text(c, memory) == [{"value": "", "key": None, "source": ""}]
    for device in (pair.a, pair.b, c):
        assert WORD not in brain_bytes(device), f"{device.home.name}'s brain file still holds the text"
        assert memory not in device.recall("safe combination"), device.home.name
        (shown,) = device.query(f"SELECT redaction_id FROM memory_redactions WHERE memory_id = '{memory}'")
        assert shown["redaction_id"] == done["redaction_id"], "one record, the same id on every device"
    c.sync()
    assert_verified_alike(pair.a, pair.b, c)
    # nothing waits any more: a second sync redacts nothing again
    assert pair.b.sync()["redacted"] == []


def forge_redaction(hostile: Device, memory: str, key: str) -> str:
    """On ``hostile``: the redaction record of ``memory`` the master would sign, signed with the
    device's own ``key`` ("housekeeper" or its agent "cli") instead, carried by a `memory_redacted`
    event of its housekeeper (a valid event: only the record inside is forged). The event's id."""
    from aimos.actions.redaction import redaction_event
    from aimos.crypto.canonical import canonical_text
    from aimos.crypto.encoding import b64u_encode
    from aimos.identity.master import master_row
    from aimos.memory.redaction import portable_record
    from aimos.store.connection import write_transaction
    from aimos.verify.kit.redaction import record_id, record_message

    with opened_brain(hostile.home, hostile.env()) as brain:
        at = int(time.time())
        portable, _rows = portable_record(
            brain.conn,
            brain_id=brain.meta["brain_id"],
            memory_id=memory,
            reason="nothing to see here",
            now=at,
            master_fingerprint=master_row(brain.conn)["fingerprint"],
        )
        text = canonical_text(portable)
        signer = brain.housekeeper() if key == "housekeeper" else brain.signer(key)
        sent = {
            "redaction_record": text,
            "redaction_signature_b64u": b64u_encode(signer.key.sign(record_message(text))),
        }
        with write_transaction(brain.conn, brain.housekeeper):
            event = redaction_event(
                brain.conn, brain.housekeeper(), {**portable, "redaction_id": record_id(text)}, sent, at
            )
    return str(event["event_id"])


@pytest.mark.parametrize("key", ["housekeeper", "cli"])
def test_a_redaction_a_device_or_agent_key_signed_is_refused_by_name(pair: Pair, key: str) -> None:
    """B (hostile) blanks A's memory with a record it signed itself: A refuses it, names the memory,
    the device and why, and keeps the text; B's sync goes on, A's verify passes."""
    a, b = pair.a, pair.b
    memory = a.save(SECRET, "--key", "safe:combination")
    a.sync()
    b.sync()
    event = forge_redaction(b, memory, key)
    b.sync()
    synced = a.sync()
    assert synced["redacted"] == [], synced
    (refused,) = synced["redactions_refused"]
    assert memory in refused and b.device_fp() in refused and event in refused, refused
    assert "not signed by this brain's master" in refused, refused
    assert held_text(a, memory) == [{"value": SECRET, "key": "safe:combination", "source": "cli"}]
    assert a.query("SELECT COUNT(*) AS n FROM memory_redactions") == [{"n": 0}]
    status = a.run("hub", "status").ok()
    assert f"refused here  {refused}" in status.out, status.describe()
    assert json.loads(a.run("hub", "status", "--json").ok().out)["redactions_refused"] == [refused]
    assert a.verify()["ok"] is True


def test_a_memory_not_pushed_yet_is_not_redacted_until_it_is(pair: Pair) -> None:
    """A careless person saves a secret and redacts it at once, before a sync: redacted then, its
    save would reach the other devices without its text, where its signature no longer checks, and
    every sync of theirs would be refused. Refused by name, nothing changed; after a sync it goes."""
    a, b = pair.a, pair.b
    memory = a.save(SECRET)
    refused = run_aimos(
        "redact", memory[:8], "--reason", "a code to a safe",
        env=a.env(), unset=("AIMOS_KEYSTORE",), input=f"redact {memory[:8]}\n",
    )  # fmt: skip
    assert refused.code == 2, refused.describe()
    assert f"memory {memory} was saved on this device and has not reached the hub yet" in refused.err
    assert "run `aimos sync` first" in refused.err, refused.describe()
    assert held_text(a, memory)[0]["value"] == SECRET
    assert a.query("SELECT COUNT(*) AS n FROM memory_redactions") == [{"n": 0}]
    a.sync()
    redact(a, memory)
    a.sync()
    assert b.sync()["redacted"] == [memory]
    assert held_text(b, memory) == [{"value": "", "key": None, "source": ""}]
    assert_verified_alike(a, b)
