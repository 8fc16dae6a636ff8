"""Shared fixtures for the vector tests: where the HOM-AIMOS reference data lives.

The reference data is not part of the checkout: it sits in ``shared/reference/hom-aimos`` beside
the project root (locally /work/shared, in CI ``shared/`` laid beside the checkout the same way).
Parametrization over reference vectors happens at collection time, so the ids come from the
manifests themselves (``pytest_generate_tests`` below), never from a hand-kept list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REFERENCE_DIR = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hom-aimos"
S4_FIXTURES = REFERENCE_DIR / "verifiers" / "mutmem-python" / "fixtures"
V2_DIR = REFERENCE_DIR / "verifiers" / "mutmem-conformance" / "v2"


def _load(path: Path) -> Any:
    if not path.is_file():
        raise pytest.UsageError(
            f"reference data missing: {path} (shared/reference/hom-aimos must sit beside the project root)"
        )
    return json.loads(path.read_bytes())


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    assert REFERENCE_DIR.is_dir(), f"reference data missing at {REFERENCE_DIR}"
    return REFERENCE_DIR


@pytest.fixture(scope="session")
def s4_fixtures_dir(reference_dir: Path) -> Path:
    return reference_dir / "verifiers" / "mutmem-python" / "fixtures"


@pytest.fixture(scope="session")
def v2_dir(reference_dir: Path) -> Path:
    return reference_dir / "verifiers" / "mutmem-conformance" / "v2"


@pytest.fixture(scope="session")
def p2_vectors(v2_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((v2_dir / "p2-crypto-vectors.json").read_bytes())
    return data


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize by the reference's own vector ids.

    ``s4_member``: one member of the S4 fixture manifest.
    ``p2_recall_id``: the id of one P2 recall crypto vector.
    """
    if "s4_member" in metafunc.fixturenames:
        members = _load(S4_FIXTURES / "manifest.json")["vectors"]
        metafunc.parametrize("s4_member", members, ids=[m["vector_id"] for m in members])
    if "p2_recall_id" in metafunc.fixturenames:
        vectors = _load(V2_DIR / "p2-crypto-vectors.json")["recall"]["vectors"]
        metafunc.parametrize("p2_recall_id", [v["id"] for v in vectors])
