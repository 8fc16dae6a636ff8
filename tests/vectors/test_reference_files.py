"""The reference's V2 vector files: sidecars, self-commitments and protocol manifest.

Each self-commitment is SHA-256 over canonical JSON of (part of) the file, so these tests run
``canonical_json`` over ~2 MB of the reference's own data and compare against the bytes it hashed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from aimos import vocabulary
from aimos.crypto.canonical import canonical_sha256_hex

V2_FILES = (
    "protocol-manifest.json",
    "vectors.json",
    "mutation-vectors.json",
    "p2-crypto-vectors.json",
    "live-projection.json",
    "live-mutation-projections.json",
)
WITH_MANIFEST_SHA256 = tuple(f for f in V2_FILES if f != "protocol-manifest.json")
WITH_SUMMARIES = ("vectors.json", "mutation-vectors.json")

# protocol-manifest domain_hex name -> the aimos constant that must equal it byte for byte.
DOMAIN_NAMES = {
    "portable_object_v2": "V2_OBJECT",
    "portable_bundle_v2": "V2_BUNDLE",
    "recall_authorization_v1": "RECALL_AUTHORIZATION",
    "request_receipt_v1": "REQUEST_RECEIPT",
    "event_link_v1": "EVENT_LINK",
    "occurrence_v3": "OCCURRENCE_V3",
    "occurrence_signature_v3": "OCCURRENCE_V3_SIGNATURE",
}

_cache: dict[Path, Any] = {}


def load(path: Path) -> Any:
    if path not in _cache:
        _cache[path] = json.loads(path.read_bytes())
    return _cache[path]


def without(data: dict[str, Any], field: str) -> dict[str, Any]:
    assert field in data
    return {k: v for k, v in data.items() if k != field}


def test_sidecar_set(v2_dir: Path) -> None:
    assert sorted(p.name for p in v2_dir.glob("*.sha256")) == sorted(f"{f}.sha256" for f in V2_FILES)


@pytest.mark.parametrize("name", V2_FILES)
def test_sidecar(v2_dir: Path, name: str) -> None:
    digest = hashlib.sha256((v2_dir / name).read_bytes()).hexdigest()
    assert (v2_dir / f"{name}.sha256").read_text("ascii") == f"{digest}  {name}\n"


@pytest.mark.parametrize("name", WITH_MANIFEST_SHA256)
def test_manifest_sha256(v2_dir: Path, name: str) -> None:
    data = load(v2_dir / name)
    assert canonical_sha256_hex(without(data, "manifest_sha256")) == data["manifest_sha256"]


@pytest.mark.parametrize("name", WITH_SUMMARIES)
def test_vectors_root(v2_dir: Path, name: str) -> None:
    data = load(v2_dir / name)
    assert len(data["summaries"]) == len(data["vectors"]) == data["intended_n"]
    assert canonical_sha256_hex(data["summaries"]) == data["vectors_root_sha256"]


@pytest.mark.parametrize("name", WITH_SUMMARIES)
def test_summary_bundle_sha256(v2_dir: Path, name: str) -> None:
    """summaries[i].bundle_sha256 = H(canonicalJSON(whole bundle)), not the envelope commitment."""
    data = load(v2_dir / name)
    for summary, vector in zip(data["summaries"], data["vectors"], strict=True):
        assert summary["id"] == vector["id"]
        assert canonical_sha256_hex(vector["bundle"]) == summary["bundle_sha256"], vector["id"]
        assert summary["bundle_sha256"] != vector["bundle"].get("bundle_sha256")


def test_protocol_root(v2_dir: Path) -> None:
    manifest = load(v2_dir / "protocol-manifest.json")
    root = canonical_sha256_hex(without(manifest, "protocol_root_sha256"))
    assert root == manifest["protocol_root_sha256"]
    assert root.startswith("663174ea")  # the value SOURCE.md quotes


def test_protocol_manifest_links_the_vector_files(v2_dir: Path) -> None:
    manifest = load(v2_dir / "protocol-manifest.json")
    links = [
        ("vectors.json", manifest["vectors"]),
        ("mutation-vectors.json", manifest["mutation_profile"]["vectors"]),
        ("live-projection.json", manifest["live_projection"]),
        ("live-mutation-projections.json", manifest["mutation_profile"]["live_projection"]),
    ]
    for name, link in links:
        data = load(v2_dir / name)
        assert link["file_sha256"] == hashlib.sha256((v2_dir / name).read_bytes()).hexdigest()
        assert link["manifest_sha256"] == data["manifest_sha256"]
        if "vectors_root_sha256" in link:
            assert link["vectors_root_sha256"] == data["vectors_root_sha256"]


def test_domains_match_protocol_manifest(v2_dir: Path) -> None:
    manifest = load(v2_dir / "protocol-manifest.json")
    domain_hex: dict[str, str] = manifest["domain_hex"]
    assert set(domain_hex) == {*DOMAIN_NAMES, "recall_leaf", "recall_node"}
    for name, constant in DOMAIN_NAMES.items():
        assert getattr(vocabulary, constant).hex() == domain_hex[name], name
    assert (domain_hex["recall_leaf"], domain_hex["recall_node"]) == ("00", "01")
    mutation_domain = manifest["mutation_profile"]["domain_hex"]
    assert vocabulary.V2_MUTATION_BUNDLE.hex() == mutation_domain
