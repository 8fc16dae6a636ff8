"""The main job end to end, in real subprocesses, with each keystore:
install -> save -> show -> revoke an agent -> its save refused -> rotate cli -> save -> show both
-> rotate the housekeeper's key -> save -> verify.

The "os" case runs against the real Secret Service (gnome-keyring in a private D-Bus session);
the test process is in the same session, so it reads the items back through `keyring` itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from support.e2e import (
    BRAIN,
    UUID_RE,
    brain_id,
    iso_seconds,
    key_refs,
    require_keychain,
    run_aimos,
    sqlite_rows,
)

pytestmark = pytest.mark.timeout(180)


def save(text: str) -> str:
    result = run_aimos("save", text).ok()
    assert UUID_RE.match(result.out.strip()), result.describe()
    return result.out.strip()


def counts(home: Path) -> dict[str, Any]:
    tables = ("memories", "events", "memory_provenance", "request_nonces", "identity_epochs")
    sql = " UNION ALL ".join(f"SELECT '{t}' AS t, COUNT(*) AS n FROM {t}" for t in tables)
    return {r["t"]: r["n"] for r in sqlite_rows(home / BRAIN, sql)}


def keystore_items(home: Path, kind: str, bid: str, names: list[str]) -> set[str]:
    """Which of ``names`` the brain's keystore holds right now."""
    if kind == "file":
        directory = home / "state" / "keys" / bid
        return {n for n in names if (directory / f"{n}.key").is_file()}
    keyring = require_keychain()
    return {n for n in names if keyring.get_password(f"aimos:{bid}", n) is not None}


def test_install_save_revoke_rotate_save(aimos_home: Path, keystore: str) -> None:
    if keystore == "os":
        require_keychain()
    installed = run_aimos("install", "--yes", "--no-guides", "--keystore", keystore).ok()
    fingerprint = re.search(r"master fingerprint: ([0-9a-f]{64})\b", installed.out)
    assert fingerprint, installed.describe()
    expected_note = "OS keychain" if keystore == "os" else "file keystore"
    assert expected_note.lower() in installed.out.lower(), installed.describe()

    status = run_aimos("status", "--json").json()
    assert status["keystore"]["kind"] == keystore
    assert status["master_fingerprint"] == fingerprint.group(1)
    bid = status["brain_id"]
    assert bid == brain_id(aimos_home)
    if keystore == "os":
        assert not (aimos_home / "state" / "keys").exists(), "an os-keystore brain wrote key files"
        assert f"aimos:{bid}" in status["keystore"]["detail"]

    # the key names: `<agent>@<valid_from>` from status --json, checked against the brain
    identities = {i["agent_id"]: i for i in status["identities"]}
    housekeeper_item = f"housekeeper@{iso_seconds(identities['housekeeper']['valid_from'])}"
    old_cli_item = f"cli@{iso_seconds(identities['cli']['valid_from'])}"
    assert sorted(key_refs(aimos_home)) == sorted([housekeeper_item, old_cli_item])
    names = ["master", housekeeper_item, old_cli_item]
    assert keystore_items(aimos_home, keystore, bid, names) == set(names)
    if keystore == "os":
        keyring = require_keychain()
        assert keyring.get_password(f"aimos:{bid}", housekeeper_item)
        assert keyring.get_password(f"aimos:{bid}", "master")

    first = save("aimos keeps what my agents learn, and signs every save")
    shown = run_aimos("show", first).ok()
    assert shown.out.startswith("aimos keeps what my agents learn, and signs every save\n")
    assert first in shown.out

    run_aimos("agent", "enroll", "scout").ok()
    scout = run_aimos("agent", "list", "--json").json()[-1]
    assert scout["agent_id"] == "scout"
    scout_item = f"scout@{iso_seconds(scout['valid_from'])}"
    assert keystore_items(aimos_home, keystore, bid, [scout_item]) == {scout_item}
    revoked = run_aimos("agent", "revoke", "scout").ok()
    assert "revoked" in revoked.out
    before = counts(aimos_home)
    refused = run_aimos("save", "said by a revoked epoch", "--agent", "scout")
    assert refused.code == 6, refused.describe()
    assert "Traceback" not in refused.both
    assert "error:" in refused.err and "hint:" in refused.err and "aimos agent rotate scout" in refused.err
    assert refused.out == ""
    assert counts(aimos_home) == before, "a refused save changed the brain"
    # the revoked epoch's key is gone from the keystore
    assert not keystore_items(aimos_home, keystore, bid, [scout_item])

    # the person's own agent is rotated, never revoked (that would leave the CLI without a key)
    kept = run_aimos("agent", "revoke", "cli")
    assert kept.code == 2 and "aimos agent rotate cli" in kept.err, kept.describe()
    assert counts(aimos_home) == before
    rotated = run_aimos("agent", "rotate", "cli").ok()
    assert "rotated cli" in rotated.out
    assert not keystore_items(aimos_home, keystore, bid, [old_cli_item]), "the rotated-out key is kept"
    second = save("after the rotation the agent saves with its new key")
    assert second != first

    one = run_aimos("show", first, "--json").json()
    two = run_aimos("show", second, "--json").json()
    assert one["value"] == "aimos keeps what my agents learn, and signs every save"
    assert two["value"] == "after the rotation the agent saves with its new key"
    assert one["author_agent_id"] == two["author_agent_id"] == "cli"
    assert two["author_valid_from"] > one["author_valid_from"], "the second save must use the new epoch"
    assert {m["memory_id"] for m in run_aimos("list", "--json").json()["memories"]} == {first, second}

    agents = run_aimos("agent", "list", "--json").json()
    cli_epochs = sorted((a for a in agents if a["agent_id"] == "cli"), key=lambda a: a["valid_from"])
    assert [a["state"] for a in cli_epochs] == ["revoked", "active"], cli_epochs
    assert cli_epochs[0]["revoked_at"] is not None
    assert cli_epochs[1]["grant"] == cli_epochs[0]["grant"], "rotation keeps the grant ceilings"
    listing = run_aimos("agent", "list").ok().out
    assert "revoked" in listing and "active" in listing

    new_cli_item = f"cli@{iso_seconds(cli_epochs[1]['valid_from'])}"
    assert new_cli_item in key_refs(aimos_home)
    held = keystore_items(aimos_home, keystore, bid, [*names, new_cli_item])
    assert held == {"master", housekeeper_item, new_cli_item}

    # the housekeeper's key is replaced the same way, and the brain goes on: the old key leaves
    # the keystore, the new one seals the next writes, and both verifiers agree
    assert run_aimos("agent", "revoke", "housekeeper").code == 2
    rotated_key = run_aimos("housekeeper", "rotate-key", "--json").json()
    assert rotated_key["previous_epoch_revoked"] is True
    new_housekeeper_item = f"housekeeper@{iso_seconds(rotated_key['valid_from'])}"
    assert new_housekeeper_item in key_refs(aimos_home)
    held = keystore_items(aimos_home, keystore, bid, [*names, new_cli_item, new_housekeeper_item])
    assert held == {"master", new_cli_item, new_housekeeper_item}
    save("saved after the housekeeper's new key")
    checked = run_aimos("verify", "--json").json()
    assert checked["ok"] and checked["parity"], checked

    final = run_aimos("status", "--json").json()
    assert final["keystore"]["kind"] == keystore
    assert final["counts"]["memories"] == 3
