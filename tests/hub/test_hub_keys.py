"""A brain on a hub keeps two more secrets in its keystore, the hub's URL and the brain's content
key (issue 39): a keystore move carries them (the device still syncs after it) and the purge
ceremony destroys them (and says what stays on the hub), through the real CLI."""

from __future__ import annotations

import json

import pytest
from support.cli import run_aimos
from support.hub_devices import Pair

from aimos.identity.devices import HUB_ITEMS

pytestmark = pytest.mark.timeout(240)


def test_a_keystore_move_keeps_the_hub_link(pair: Pair) -> None:
    b = pair.b
    files = [b.keystore_item(item) for item in HUB_ITEMS]
    assert all(f.exists() for f in files), files
    moved = b.run("keystore", "move", "--to", "os", "--json").ok()
    assert "os" in moved.out, moved.describe()
    assert not any(f.exists() for f in files), files  # gone from the file keystore with the other keys
    memory = pair.a.save("the spare bicycle pump hangs behind the garage door")
    pair.a.sync()
    done = b.sync()
    assert done["pulled"] > 0, done
    assert memory in b.recall("where is the bicycle pump"), done


def test_a_purge_destroys_the_hub_link_and_names_what_stays_on_the_hub(pair: Pair) -> None:
    b = pair.b
    files = [b.keystore_item(item) for item in HUB_ITEMS]
    assert all(f.exists() for f in files), files
    inventory = json.loads(b.run("purge", "--json").ok().out)
    assert any("sync hub" in k["what"] for k in inventory["kept"]), inventory["kept"]
    purged = run_aimos(
        "purge", "--live", input="PURGE AIMOS personal personal\n", env=b.env(), unset=("AIMOS_KEYSTORE",)
    )
    assert purged.code == 0, purged.describe()
    assert not any(f.exists() for f in files), files
    assert not (b.home / "state" / "hub").exists()
