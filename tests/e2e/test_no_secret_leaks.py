"""SPEC section 1.5: private keys and the passphrase never reach the brain, a log, the config or the
terminal. After install, save, enrol, correct, revoke and rotate (real subprocesses), every file aimos
wrote outside its keystore and every captured stdout/stderr is scanned for the passphrase and for
each secret seed in raw, hex, base64url and base64 form.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.e2e import (
    BRAIN,
    Result,
    b64u_seed,
    brain_id,
    key_refs,
    require_keychain,
    run_aimos,
    secret_forms,
)

from aimos.identity.anchors import KEPT_ANCHOR_ITEM
from aimos.identity.passphrase import unseal

pytestmark = pytest.mark.timeout(180)


def read_seeds(home: Path, kind: str, passphrase: str) -> dict[str, bytes]:
    """Every secret seed the keystore holds now, by item name (the master unsealed in-process)."""
    bid = brain_id(home)
    items: dict[str, str] = {}
    if kind == "file":
        directory = home / "state" / "keys" / bid
        for path in sorted(directory.glob("*.key")):
            items[path.stem] = path.read_text("utf-8")
    else:
        keyring = require_keychain()
        for name in ["master", *key_refs(home)]:
            value = keyring.get_password(f"aimos:{bid}", name)
            if value is not None:
                items[name] = value
    assert "master" in items, f"no master item in the {kind} keystore: {sorted(items)}"
    seeds = {}
    for name, text in items.items():
        if name == KEPT_ANCHOR_ITEM:  # a seal number, a link and revoked epochs: public, not a seed
            continue
        if name == "master":
            seeds[name] = unseal(text, passphrase)
            assert len(seeds[name]) == 32
        else:
            seeds[name] = b64u_seed(text)
            # the scan below looks for exactly this form: prove it matches what the keystore holds
            assert secret_forms(seeds[name])["base64url"] == text.strip().encode()
    return seeds


def scanned_files(home: Path) -> list[Path]:
    """The brain (+ -wal, -shm), logs, config, and any other file aimos wrote outside its keystore."""
    keys = home / "state" / "keys"
    files = [p for p in home.rglob("*") if p.is_file() and keys not in p.parents]
    names = {p.name for p in files}
    assert BRAIN in names, sorted(names)
    assert any(p.parent == home / "logs" for p in files), "no log file was written"
    assert any(p.parent == home / "config" for p in files), "no config file was written"
    return files


def test_no_secret_reaches_files_or_output(aimos_home: Path, passphrase: str, keystore: str) -> None:
    if keystore == "os":
        require_keychain()
    runs: list[Result] = []

    def run(*args: str, input: str | None = None) -> Result:
        result = run_aimos(*args, input=input).ok()
        runs.append(result)
        return result

    seeds: dict[str, bytes] = {}
    run("install", "--yes", "--no-guides", "--keystore", keystore)
    seeds.update(read_seeds(aimos_home, keystore, passphrase))
    assert {n.split("@")[0] for n in seeds} == {"master", "housekeeper", "cli"}

    first = run("save", "a memory saved while looking for leaks").out.strip()
    run("save", input="a second memory, from stdin")
    run("save", "a memory saved while looking for leaks")  # a duplicate: an occurrence
    run("agent", "enroll", "bob", "--clearance", "8", "--data-class", "internal")
    seeds.update(read_seeds(aimos_home, keystore, passphrase))
    run("save", "bob remembers this", "--agent", "bob", "--clearance", "8")
    run("correct", first, "a corrected memory, still no leaks")
    run("agent", "rotate", "cli")
    seeds.update(read_seeds(aimos_home, keystore, passphrase))
    run("save", "saved with the rotated key")
    run("housekeeper", "rotate-key")
    seeds.update(read_seeds(aimos_home, keystore, passphrase))
    run("save", "saved after the housekeeper's new key")
    run("agent", "revoke", "bob")
    for args in (["status"], ["status", "--json"], ["list", "--history"], ["list", "--json", "--history"]):
        run(*args)
    run("show", first)
    run("show", first, "--json")
    run("agent", "list", "--json")
    # failures print too: they must not leak either
    refused = run_aimos("save", "bob after his revocation", "--agent", "bob")
    assert refused.code == 6, refused.describe()
    runs.append(refused)

    agents = {n.split("@")[0] for n in seeds}
    assert agents == {"master", "housekeeper", "cli", "bob"}, sorted(seeds)
    assert len([n for n in seeds if n.startswith("cli@")]) == 2, "both cli epochs' seeds were read"
    assert len([n for n in seeds if n.startswith("housekeeper@")]) == 2, "both housekeeper seeds were read"

    needles: dict[str, bytes] = {"passphrase": passphrase.encode("utf-8")}
    for name, seed in seeds.items():
        for form, value in secret_forms(seed).items():
            needles[f"{name} seed as {form}"] = value

    haystacks: dict[str, bytes] = {}
    for path in scanned_files(aimos_home):
        haystacks[str(path.relative_to(aimos_home))] = path.read_bytes()
    for i, result in enumerate(runs):
        label = f"#{i} aimos {' '.join(result.args)[:60]}"
        haystacks[f"{label} stdout"] = result.out.encode("utf-8")
        haystacks[f"{label} stderr"] = result.err.encode("utf-8")

    leaks = [
        f"{needle_name} found in {where}"
        for where, data in haystacks.items()
        for needle_name, needle in needles.items()
        if needle in data
    ]
    assert not leaks, "secrets leaked:\n" + "\n".join(leaks)
