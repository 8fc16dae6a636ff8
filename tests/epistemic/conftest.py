"""Fixtures for the signed epistemic label tests: `aimos_home`, `brain`, `installed` and
`brain_template` come from tests/conftest.py; this folder is put on sys.path for
`support.epistemic`.

`labelled_template` is one home per session, made by the real CLI from the session's installed
template: two PoisonedRAG-shaped memories from one web source (the first then refuted by the
person), and one plain note. `labelled` copies it into the test's own AIMOS_HOME, so each test
tampers with its own brain file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import PASSPHRASE_ENV, run_aimos
from support.epistemic import EVIL, PLAIN, POISON_1, POISON_2, Labelled, master_fingerprint_of, saved_id

PASSPHRASE = "correct horse battery staple"


@pytest.fixture(scope="session")
def labelled_template(brain_template: Any, tmp_path_factory: pytest.TempPathFactory) -> Labelled:
    root = tmp_path_factory.mktemp("labelled")
    home = root / "home"
    shutil.copytree(brain_template(PASSPHRASE), home)
    pass_file = root / "passphrase"
    pass_file.write_text(PASSPHRASE + "\n")
    pass_file.chmod(0o600)
    env = {"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)}

    def cli(*args: str) -> Any:
        return run_aimos(*args, env=env, unset=("AIMOS_KEYSTORE",))

    refuted = saved_id(cli("save", "--source", EVIL, POISON_1))
    likely = saved_id(cli("save", "--source", EVIL, POISON_2))
    plain = saved_id(cli("save", PLAIN))
    cli("label", refuted, "not-poison", "--reason", "checked the broadcaster's listing").ok()
    fingerprint = master_fingerprint_of(home)
    report = cli("verify", "--json", "--master-fingerprint", fingerprint).json()
    assert report["ok"] and report["parity"], report
    assert report["in_database"]["corpus_proof_root"] == report["portable"]["corpus_proof_root"]
    return Labelled(home, refuted, likely, plain, report["in_database"]["corpus_proof_root"], fingerprint)


@pytest.fixture
def labelled(aimos_home: Path, passphrase: str, labelled_template: Labelled) -> Labelled:
    """The prepared brain copied into this test's AIMOS_HOME (already exported)."""
    assert passphrase == PASSPHRASE
    shutil.copytree(labelled_template.home, aimos_home, dirs_exist_ok=True)
    return Labelled(
        aimos_home,
        labelled_template.refuted,
        labelled_template.likely,
        labelled_template.plain,
        labelled_template.root,
        labelled_template.master_fingerprint,
    )
