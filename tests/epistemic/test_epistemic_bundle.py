"""The portable verifier alone (SPEC 9): `aimos export --cognitive FILE` carries each memory's
label chain; `aimos verify-bundle FILE --master-fingerprint HEX --json` re-checks it offline
(never reading the brain). An edited chain is invalid (exit 4) with the label-chain reason of the
closed vocabulary; the unedited bundle is valid with the brain's corpus proof root."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.epistemic import Labelled, g_hash

pytestmark = pytest.mark.timeout(120)

Bundle = dict[str, Any]


def export(lab: Labelled, tmp_path: Path) -> Bundle:
    target = tmp_path / "bundle.json"
    run_aimos("export", "--cognitive", str(target)).ok()
    bundle: Bundle = json.loads(target.read_text("utf-8"))
    return bundle


def memory(bundle: Bundle, memory_id: str) -> dict[str, Any]:
    found: dict[str, Any]
    (found,) = [m for m in bundle["memories"] if m["memory_id"] == memory_id]
    return found


def verify_bundle(lab: Labelled, bundle: Bundle, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(bundle, indent=2), "utf-8")
    # run from an empty folder with no AIMOS_HOME: the verifier needs only the file and the anchor
    result = run_aimos(
        "verify-bundle",
        str(path),
        "--master-fingerprint",
        lab.master_fingerprint,
        "--json",
        env={"AIMOS_HOME": str(tmp_path / "nowhere")},
        cwd=tmp_path,
    )
    assert "Traceback" not in result.both, result.describe()
    return result.code, json.loads(result.out)


def _flip_label(b: Bundle, lab: Labelled) -> str:
    m = memory(b, lab.likely)
    m["epistemic"]["chain"][0]["label"] = "unverified"
    m["epistemic"]["label"] = "unverified"
    return "epistemic_hash_invalid"


def _confidence(b: Bundle, lab: Labelled) -> str:
    memory(b, lab.likely)["epistemic"]["chain"][0]["confidence_milli"] = 100
    return "epistemic_hash_invalid"


def _drop_genesis(b: Bundle, lab: Labelled) -> str:
    del memory(b, lab.refuted)["epistemic"]["chain"][0]
    return "fork_or_disconnected_history"


def _drop_middle(b: Bundle, lab: Labelled) -> str:
    del memory(b, lab.refuted)["epistemic"]["chain"][1]
    return "fork_or_disconnected_history"


def _drop_newest(b: Bundle, lab: Labelled) -> str:
    del memory(b, lab.refuted)["epistemic"]["chain"][-1]  # the live label stays poison_refuted
    return "unbacked_projection"


def _wrong_projection(b: Bundle, lab: Labelled) -> str:
    memory(b, lab.likely)["epistemic"]["label"] = "supported"
    return "unbacked_projection"


def _projection_on_a_plain_memory(b: Bundle, lab: Labelled) -> str:
    memory(b, lab.plain)["epistemic"]["label"] = "supported"  # no row at all
    return "unbacked_projection"


def _swap_rows(b: Bundle, lab: Labelled) -> str:
    chain = memory(b, lab.refuted)["epistemic"]["chain"]
    chain[1], chain[2] = chain[2], chain[1]
    return "fork_or_disconnected_history"


def _authority_repointed(b: Bundle, lab: Labelled) -> str:
    chain = memory(b, lab.refuted)["epistemic"]["chain"]
    chain[-1]["authority_event_id"] = chain[-2]["authority_event_id"]
    return "epistemic_authority_invalid"


def _live_hash_with_recomputed_g(b: Bundle, lab: Labelled) -> str:
    m = memory(b, lab.likely)
    row = m["epistemic"]["chain"][0]
    row["live_content_hash"] = "cd" * 32
    row["classification_hash"] = g_hash(
        lab.likely,
        row["label"],
        row["confidence_milli"],
        row["live_content_hash"],
        row["authority_mutation_hash"],
        None,
    )
    return "epistemic_live_content_mismatch"


def _label_with_recomputed_g(b: Bundle, lab: Labelled) -> str:
    """A chain whose hashes all recompute but whose label the signed event never said."""
    m = memory(b, lab.likely)
    row = m["epistemic"]["chain"][0]
    row["label"] = "supported"
    row["classification_hash"] = g_hash(
        lab.likely,
        "supported",
        row["confidence_milli"],
        row["live_content_hash"],
        row["authority_mutation_hash"],
        None,
    )
    m["epistemic"]["label"] = "supported"
    return "epistemic_authority_invalid"


def _unknown_label(b: Bundle, lab: Labelled) -> str:
    memory(b, lab.likely)["epistemic"]["chain"][0]["label"] = "harmless"
    return "portable_evidence_malformed"


def _array_label(b: Bundle, lab: Labelled) -> str:
    """A label that is not text at all is malformed evidence too, not a verifier failure."""
    memory(b, lab.likely)["epistemic"]["chain"][0]["label"] = ["poison_likely"]
    return "portable_evidence_malformed"


def _object_label(b: Bundle, lab: Labelled) -> str:
    memory(b, lab.likely)["epistemic"]["chain"][0]["label"] = {"label": "poison_likely"}
    return "portable_evidence_malformed"


EDITS: dict[str, Callable[[Bundle, Labelled], str]] = {
    "label-flip": _flip_label,
    "confidence": _confidence,
    "drop-genesis-row": _drop_genesis,
    "drop-middle-row": _drop_middle,
    "drop-newest-row": _drop_newest,
    "wrong-projection": _wrong_projection,
    "projection-without-rows": _projection_on_a_plain_memory,
    "rows-reordered": _swap_rows,
    "authority-repointed": _authority_repointed,
    "live-hash-with-recomputed-g": _live_hash_with_recomputed_g,
    "label-with-recomputed-g": _label_with_recomputed_g,
    "unknown-label": _unknown_label,
    "array-label": _array_label,
    "object-label": _object_label,
}


def test_the_unedited_bundle_is_valid(labelled: Labelled, tmp_path: Path) -> None:
    bundle = export(labelled, tmp_path)
    assert [r["label"] for r in memory(bundle, labelled.refuted)["epistemic"]["chain"]] == [
        "unverified",
        "poison_likely",
        "poison_refuted",
    ]
    assert memory(bundle, labelled.refuted)["epistemic"]["label"] == "poison_refuted"
    assert memory(bundle, labelled.plain)["epistemic"] == {"label": "unverified", "chain": []}
    code, verdict = verify_bundle(labelled, bundle, tmp_path)
    assert code == 0 and verdict["verdict"] == "valid" and verdict["primary_reason"] is None, verdict
    assert verdict["corpus_proof_root"] == labelled.root
    assert all(r["ok"] for r in verdict["records"])


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_label_chain_is_invalid(labelled: Labelled, tmp_path: Path, name: str) -> None:
    bundle = export(labelled, tmp_path)
    reason = EDITS[name](bundle, labelled)
    code, verdict = verify_bundle(labelled, bundle, tmp_path)
    assert code == 4, verdict
    assert verdict["verdict"] == "invalid" and verdict["primary_reason"] == reason, verdict
    failed = {r["memory_id"]: r["reason"] for r in verdict["records"] if not r["ok"]}
    assert list(failed.values()) == [reason] and len(failed) == 1, failed
    assert verdict["corpus_proof_root"] != labelled.root


def test_a_wrong_master_fingerprint_is_refused(labelled: Labelled, tmp_path: Path) -> None:
    bundle = export(labelled, tmp_path)
    wrong = Labelled(
        labelled.home, labelled.refuted, labelled.likely, labelled.plain, labelled.root, "0" * 64
    )
    code, verdict = verify_bundle(wrong, bundle, tmp_path)
    assert code == 4 and verdict["verdict"] == "invalid", verdict


# --- a chain cut back to something self-consistent ----------------------------------------------------------
def _wipe_poison_chain(b: Bundle, lab: Labelled) -> str:
    m = memory(b, lab.likely)
    m["epistemic"] = {"label": "unverified", "chain": []}
    return lab.likely


def _truncate_to_genesis(b: Bundle, lab: Labelled) -> str:
    m = memory(b, lab.refuted)
    m["epistemic"]["chain"] = m["epistemic"]["chain"][:1]
    m["epistemic"]["label"] = "unverified"
    return lab.refuted


def _drop_block(b: Bundle, lab: Labelled) -> str:
    del memory(b, lab.likely)["epistemic"]
    return lab.likely


TRUNCATIONS: dict[str, Callable[[Bundle, Labelled], str]] = {
    "wipe-poison-chain": _wipe_poison_chain,
    "truncate-to-genesis": _truncate_to_genesis,
    "drop-epistemic-block": _drop_block,
}


@pytest.mark.parametrize("name", list(TRUNCATIONS))
def test_a_truncated_label_chain_is_invalid(labelled: Labelled, tmp_path: Path, name: str) -> None:
    """The bundle's event streams still hold the housekeeper-signed `memory_epistemic_classified`
    events of the removed rows (each names the memory, its label and its predecessor g), so a
    chain cut back to a self-consistent prefix (or removed) must not verify (SPEC 1.3, 9)."""
    bundle = export(labelled, tmp_path)
    target = TRUNCATIONS[name](bundle, labelled)
    signed = [
        e
        for s in bundle["event_streams"]
        for e in s["events"]
        if e["operation"] == "memory_epistemic_classified" and e["metadata"]["memory_id"] == target
    ]
    kept = {r["authority_event_id"] for r in memory(bundle, target).get("epistemic", {"chain": []})["chain"]}
    orphaned = [e for e in signed if e["event_id"] not in kept]
    assert orphaned
    code, verdict = verify_bundle(labelled, bundle, tmp_path)
    assert code == 4 and verdict["verdict"] == "invalid", (
        f"{name}: the bundle's label chain of {target} was cut back although {len(orphaned)} signed "
        f"classification event(s) of the removed rows remain in its event streams, yet verify-bundle says "
        f"{verdict['verdict']} (exit {code}), corpus root "
        f"{'UNCHANGED' if verdict['corpus_proof_root'] == labelled.root else 'changed'}"
    )


def test_a_basis_edit_is_invalid(labelled: Labelled, tmp_path: Path) -> None:
    """The exported row's `basis` is bound by its signed authority event (metadata.basis) but is
    not compared with it: a person's judgment can be passed off as the classifier's, or the
    reverse, in a bundle that still verifies."""
    bundle = export(labelled, tmp_path)
    row = memory(bundle, labelled.refuted)["epistemic"]["chain"][-1]
    assert (row["label"], row["basis"]) == ("poison_refuted", "explicit")
    row["basis"] = "classifier"
    code, verdict = verify_bundle(labelled, bundle, tmp_path)
    assert code == 4 and verdict["primary_reason"] == "epistemic_authority_invalid", (
        f"a bundle whose poison_refuted row claims basis 'classifier' (its signed event says 'explicit') "
        f"is {verdict['verdict']} (exit {code}, reason {verdict['primary_reason']})"
    )
