"""`aimos export-recall RECEIPT -o FILE`: a MutMem V2 recall-disclosure envelope made from one of
aimos's own recall receipts, accepted by aimos's V2 verifier (37 structural + 7 cryptographic
checks) under the master fingerprint install wrote to anchors.json, and refused with a closed
reason when any single leaf of it changes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import UUID_RE, parse_json, run_aimos
from support.json_leaves import changed, leaves, set_at

from aimos.verify.v2_recall import RECALL_REASONS, verify_recall_envelope

pytestmark = pytest.mark.timeout(300)

VERIFICATION, NOT_FOUND = 4, 3


def _save(text: str) -> str:
    memory_id: str = run_aimos("save", text).ok().out.strip()
    assert UUID_RE.match(memory_id)
    return memory_id


def _recall(query: str, *options: str) -> dict[str, Any]:
    data: dict[str, Any] = parse_json(run_aimos("recall", query, "--json", *options))
    return data


def _export(receipt_id: str, target: Path) -> dict[str, Any]:
    run_aimos("export-recall", receipt_id, "-o", str(target)).ok()
    bundle: dict[str, Any] = json.loads(target.read_text("utf-8"))
    return bundle


def test_export_recall_verifies_offline(installed: Path, master_fingerprint: str, tmp_path: Path) -> None:
    _save("my coffee order is a flat white with oat milk")
    _save("the coffee machine on floor 3 is broken")
    _save("the quarterly report is due on Friday")
    data = _recall("coffee")
    assert len(data["results"]) >= 2
    receipt_id = data["receipt"]["receipt_id"]
    target = tmp_path / "recall.json"
    bundle = _export(receipt_id, target)
    assert bundle["result_count"] == len(data["results"])
    assert bundle["object_count"] == 13 + 5 * bundle["result_count"]
    assert bundle["expected_master_fingerprint"] == master_fingerprint

    verdict = verify_recall_envelope(bundle, master_fingerprint)
    assert verdict.ok, verdict.to_json()
    # 2 certificates + master grant + actor request + housekeeper event + one occurrence per result
    assert verdict.signatures_verified == 5 + bundle["result_count"]

    out = run_aimos("verify-bundle", str(target), "--master-fingerprint", master_fingerprint, "--json")
    assert out.code == 0, out.describe()
    assert json.loads(out.out)["verdict"] == "valid"

    wrong = "0" * 64
    refused = run_aimos("verify-bundle", str(target), "--master-fingerprint", wrong)
    assert refused.code == VERIFICATION, refused.describe()

    # the native receipt still verifies as before, and the cognitive export still works
    run_aimos("receipt", "verify", receipt_id).ok()
    run_aimos("export", "--cognitive", str(tmp_path / "cognitive.json")).ok()


def test_abstained_recall_exports_an_empty_envelope(
    installed: Path, master_fingerprint: str, tmp_path: Path
) -> None:
    data = _recall("zebra launch codes")
    assert data["results"] == []
    bundle = _export(data["receipt"]["receipt_id"], tmp_path / "empty.json")
    assert bundle["result_count"] == 0 and bundle["object_count"] == 13
    verdict = verify_recall_envelope(bundle, master_fingerprint)
    assert verdict.ok, verdict.to_json()


def test_unknown_receipt_is_not_found(installed: Path, tmp_path: Path) -> None:
    result = run_aimos(
        "export-recall", "00000000-0000-4000-8000-000000000000", "-o", str(tmp_path / "x.json")
    )
    assert result.code == NOT_FOUND, result.describe()
    assert not (tmp_path / "x.json").exists()


def test_every_leaf_change_is_refused(installed: Path, master_fingerprint: str, tmp_path: Path) -> None:
    _save("the wifi network is called lighthouse-guest")  # a password would be refused
    data = _recall("wifi network", "-k", "1")
    assert len(data["results"]) == 1
    bundle = _export(data["receipt"]["receipt_id"], tmp_path / "one.json")
    assert verify_recall_envelope(bundle, master_fingerprint).ok

    every_leaf = list(leaves(bundle))
    assert len(every_leaf) > 300
    accepted = []
    for path, value in every_leaf:
        tampered = copy.deepcopy(bundle)
        set_at(tampered, path, changed(value))
        verdict = verify_recall_envelope(tampered, master_fingerprint)
        if verdict.ok or verdict.reason not in RECALL_REASONS:
            accepted.append((path, verdict.to_json()))
    assert not accepted, accepted[:5]
