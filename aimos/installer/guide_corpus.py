"""The guide corpus: aimos's 8 guide texts (package data in aimos/installer/guides/), their manifest
(path, sha256, bytes per file) and its Merkle corpus root, checked before anything is ingested.

`python -m aimos.installer.guide_corpus --write` regenerates the manifest after a guide is edited;
`--check` fails when it is out of date (a test runs it).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.errors import IntegrityError

GUIDES_DIR = Path(__file__).resolve().parent / "guides"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
GUIDE_COUNT = 8


@dataclass(frozen=True)
class Guide:
    path: str
    stem: str
    title: str
    text: str
    sha256: str
    bytes: int

    @property
    def key(self) -> str:
        return f"guide:{self.stem}"


def _title(text: str, path: str) -> str:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if not first.startswith("# "):
        raise IntegrityError(f"guide {path} does not start with an H1 title", "Start it with '# Title'.")
    return first[2:].strip()


def build_manifest(folder: Path | None = None) -> dict[str, Any]:
    folder = folder or GUIDES_DIR
    files = []
    for path in sorted(folder.glob("*.md")):
        data = path.read_bytes()
        files.append({"path": path.name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    return {
        "schema": vocabulary.GUIDE_MANIFEST_SCHEMA,
        "version": MANIFEST_VERSION,
        "files": files,
        "corpus_root": commitments.guide_corpus_root(files).hex(),
    }


def render_manifest(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def load_verified(folder: Path | None = None) -> tuple[list[Guide], dict[str, Any]]:
    """The guides, after checking every byte against the manifest and the manifest's root.

    Raises IntegrityError naming the first file that does not match (so install stops before it
    creates anything)."""
    folder = folder or GUIDES_DIR
    fix = (
        "Reinstall aimos; a developer who edited a guide runs "
        "`python -m aimos.installer.guide_corpus --write`."
    )
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
        entries = manifest["files"]
        root = manifest["corpus_root"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(
            f"the guide manifest {folder / MANIFEST} is missing or unreadable: {exc}", fix
        ) from None
    if manifest.get("schema") != vocabulary.GUIDE_MANIFEST_SCHEMA or len(entries) != GUIDE_COUNT:
        raise IntegrityError(f"the guide manifest must list {GUIDE_COUNT} guides", fix)
    if commitments.guide_corpus_root(entries).hex() != root:
        raise IntegrityError("the guide manifest's corpus root does not match its entries", fix)
    on_disk = sorted(p.name for p in folder.glob("*.md"))
    if on_disk != sorted(e["path"] for e in entries):
        raise IntegrityError(
            f"the guide folder holds {on_disk}, the manifest lists {sorted(e['path'] for e in entries)}", fix
        )
    guides = []
    for entry in entries:
        path = folder / entry["path"]
        data = path.read_bytes()
        if len(data) != entry["bytes"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise IntegrityError(
                f"the guide {entry['path']} does not match its manifest entry (bytes or sha256)", fix
            )
        text = data.decode("utf-8")
        guides.append(
            Guide(
                entry["path"],
                Path(entry["path"]).stem,
                _title(text, entry["path"]),
                text,
                entry["sha256"],
                len(data),
            )
        )
    return guides, manifest


def main(argv: list[str]) -> int:
    text = render_manifest(build_manifest())
    target = GUIDES_DIR / MANIFEST
    if "--check" in argv:
        if not target.is_file() or target.read_text("utf-8") != text:
            command = "python -m aimos.installer.guide_corpus --write"
            print(f"{target} is out of date: run {command}", file=sys.stderr)
            return 1
        return 0
    if "--write" in argv:
        target.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {target}")
        return 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
