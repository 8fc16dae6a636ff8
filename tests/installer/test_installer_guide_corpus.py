"""The guide corpus shipped with aimos: 8 guide files, a manifest with each file's sha256 and byte
count, and a Merkle corpus root over them; `python -m aimos.installer.guide_corpus --check` guards it."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from support.installer import GUIDES, REPO

from aimos import vocabulary
from aimos.crypto.commitments import guide_corpus_root

CHECK_WITH_FOLDER = (
    "import sys, pathlib\n"
    "import aimos.installer.guide_corpus as g\n"
    "g.GUIDES_DIR = pathlib.Path(sys.argv[1])\n"
    "raise SystemExit(g.main(['--check']))\n"
)


def test_check_passes_on_the_repository() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "aimos.installer.guide_corpus", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_manifest_lists_exactly_the_eight_guides() -> None:
    manifest = json.loads((GUIDES / "manifest.json").read_text("utf-8"))
    on_disk = sorted(p.name for p in GUIDES.glob("*.md"))
    assert len(on_disk) == 8, on_disk
    assert sorted(f["path"] for f in manifest["files"]) == on_disk
    for entry in manifest["files"]:
        data = (GUIDES / entry["path"]).read_bytes()
        assert entry["bytes"] == len(data), entry["path"]
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), entry["path"]
        assert data.decode("utf-8").lstrip().startswith("# "), f"{entry['path']} has no H1 title"
    assert manifest["corpus_root"] == guide_corpus_root(manifest["files"]).hex()
    assert manifest["schema"] == vocabulary.GUIDE_MANIFEST_SCHEMA


def test_load_verified_gives_the_guides_with_their_keys() -> None:
    from aimos.installer.guide_corpus import load_verified

    guides, manifest = load_verified()
    assert [g.path for g in guides] == [f["path"] for f in manifest["files"]]
    assert sorted(g.key for g in guides) == sorted(f"guide:{p.stem}" for p in GUIDES.glob("*.md"))
    assert all(g.title for g in guides)


def test_check_fails_on_a_changed_guide(tmp_path: Path) -> None:
    folder = tmp_path / "guides"
    shutil.copytree(GUIDES, folder)
    victim = sorted(folder.glob("*.md"))[0]
    victim.write_bytes(victim.read_bytes() + b"one more line\n")
    done = subprocess.run(
        [sys.executable, "-c", CHECK_WITH_FOLDER, str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "out of date" in done.stderr and "--write" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
