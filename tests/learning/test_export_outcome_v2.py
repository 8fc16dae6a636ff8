"""`aimos export-outcome OUTCOME -o FILE`: a MutMem V2 mutation bundle made from one of aimos's own
outcomes, with its P2 witness (FILE.witness.json) and trust context (FILE.trust-context.json, the V2
recall envelope of the recall it rests on), accepted by aimos's V2 mutation verifier and by
`aimos verify-bundle` under the master fingerprint install wrote to anchors.json, and refused with
a closed reason when a single leaf of the bundle or of the witness changes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import UUID_RE, parse_json, run_aimos
from support.json_leaves import changed, leaves, set_at

from aimos.verify.v2_mutation import MUTATION_REASONS, verify_mutation_bundle

pytestmark = pytest.mark.timeout(300)

VERIFICATION, NOT_FOUND = 4, 3


@pytest.fixture
def master_fingerprint(installed: Path) -> str:
    anchors = json.loads(next(installed.rglob("anchors.json")).read_text("utf-8"))
    fingerprints = {b["master_fingerprint"] for b in anchors["brains"].values()}
    assert len(fingerprints) == 1, anchors
    return str(fingerprints.pop())


def _save(text: str) -> str:
    memory_id: str = run_aimos("save", text).ok().out.strip()
    assert UUID_RE.match(memory_id)
    return memory_id


def _recall(query: str) -> dict[str, Any]:
    data: dict[str, Any] = parse_json(run_aimos("recall", query, "--json"))
    return data


def _feedback(memory_id: str, *options: str) -> dict[str, Any]:
    data: dict[str, Any] = parse_json(run_aimos("feedback", memory_id, "--json", *options))
    return data


def _export(outcome_id: str, target: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    run_aimos("export-outcome", outcome_id, "-o", str(target)).ok()
    witness_path = Path(f"{target}.witness.json")
    trust_path = Path(f"{target}.trust-context.json")
    return (
        json.loads(target.read_text("utf-8")),
        json.loads(witness_path.read_text("utf-8")),
        json.loads(trust_path.read_text("utf-8")),
    )


def _verify_cli(target: Path, fingerprint: str) -> Any:
    return run_aimos(
        "verify-bundle",
        str(target),
        "--witness",
        f"{target}.witness.json",
        "--trust-context",
        f"{target}.trust-context.json",
        "--master-fingerprint",
        fingerprint,
        "--json",
    )


def _exported(
    tmp_path: Path, *feedback_options: str
) -> tuple[Path, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    memory_id = _save("my coffee order is a flat white with oat milk")
    _save("the quarterly report is due on Friday")
    data = _recall("coffee order")
    assert memory_id in {r["memory_id"] for r in data["results"]}
    result = _feedback(memory_id, *feedback_options)
    target = tmp_path / "outcome.json"
    bundle, witness, trust = _export(result["outcome_id"], target)
    return target, result, bundle, witness, trust


@pytest.mark.parametrize(
    ("options", "terminal"),
    [
        (("--good",), "authorized_transition"),
        (("--good", "--occurrence"), "occurrence_observation"),
    ],
)
def test_export_outcome_verifies_offline(
    installed: Path, master_fingerprint: str, tmp_path: Path, options: tuple[str, ...], terminal: str
) -> None:
    target, result, bundle, witness, trust = _exported(tmp_path, *options)
    assert result["terminal"] == terminal
    assert bundle["terminal"]["kind"] == terminal
    assert (bundle["cognitive_projection"] is not None) == (terminal == "authorized_transition")
    verdict = verify_mutation_bundle(
        bundle, witness=witness, trust_context=trust, expected_master_fingerprint=master_fingerprint
    )
    assert verdict.verdict == "valid", verdict.to_json()
    own = 4 if terminal == "authorized_transition" else 3
    assert verdict.signatures_verified > own

    out = _verify_cli(target, master_fingerprint)
    assert out.code == 0, out.describe()
    assert json.loads(out.out)["verdict"] == "valid"

    refused = _verify_cli(target, "0" * 64)
    assert refused.code == VERIFICATION, refused.describe()


def test_signed_noop_exports(installed: Path, master_fingerprint: str, tmp_path: Path) -> None:
    memory_id = _save("my coffee order is a flat white with oat milk")
    terminals = []
    for options in (("--good",), ("--bad",)):
        _recall("coffee order")
        terminals.append(_feedback(memory_id, *options))
    # the rule is j = tanh(sum of evidence): +1 then -1 sums to 0, so the second is a signed no-op
    assert [r["terminal"] for r in terminals] == ["authorized_transition", "signed_noop"], terminals
    noop = terminals[1]
    target = tmp_path / "noop.json"
    bundle, witness, trust = _export(noop["outcome_id"], target)
    verdict = verify_mutation_bundle(
        bundle, witness=witness, trust_context=trust, expected_master_fingerprint=master_fingerprint
    )
    assert verdict.verdict == "valid", verdict.to_json()
    assert _verify_cli(target, master_fingerprint).code == 0


def test_every_leaf_change_is_refused_with_a_closed_reason(
    installed: Path, master_fingerprint: str, tmp_path: Path
) -> None:
    _, _, bundle, witness, trust = _exported(tmp_path, "--good")
    documents = {"bundle": bundle, "witness": witness}
    for name, document in documents.items():
        for path, value in leaves(document):
            tampered = copy.deepcopy(documents)
            set_at(tampered[name], path, changed(value))
            verdict = verify_mutation_bundle(
                tampered["bundle"],
                witness=tampered["witness"],
                trust_context=trust,
                expected_master_fingerprint=master_fingerprint,
            )
            assert verdict.verdict == "invalid", (name, path, verdict.to_json())
            assert verdict.reason in MUTATION_REASONS, (name, path, verdict.to_json())


def test_unknown_outcome_is_not_found(installed: Path, tmp_path: Path) -> None:
    out = run_aimos("export-outcome", "00000000-0000-4000-8000-000000000000", "-o", str(tmp_path / "x.json"))
    assert out.code == NOT_FOUND, out.describe()
    assert not (tmp_path / "x.json").exists()


def test_outcome_without_the_v2_binding_is_not_exported(brain: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An outcome recorded as before the V2 binding existed (no V2 outcome event, no valence row)
    is refused with NOT_FOUND: nothing is signed or faked at export time."""
    from support.learning import disclosing_receipt, give, put

    from aimos.errors import NotFoundError, V2OutcomeUnavailableError
    from aimos.learning import outcomes
    from aimos.learning.outcome_export import build_outcome_export

    memory_id = put(brain, "the office wifi password rotates every Monday")
    receipt_id = disclosing_receipt(brain, "office wifi", memory_id)
    monkeypatch.setattr(outcomes, "recall_binding", lambda *args: None)
    legacy = give(brain, memory_id, receipt_id, "good")
    before = brain.conn.execute("SELECT COUNT(*) FROM events").fetchall()[0][0]
    with pytest.raises(V2OutcomeUnavailableError) as raised:
        build_outcome_export(brain.conn, legacy.outcome_id)
    assert isinstance(raised.value, NotFoundError)
    assert "without the signed V2 binding" in str(raised.value)
    assert brain.conn.execute("SELECT COUNT(*) FROM events").fetchall()[0][0] == before


def test_a_bundle_checked_without_its_witness_names_the_files_to_add(
    installed: Path, master_fingerprint: str, tmp_path: Path
) -> None:
    # a person runs verify-bundle on what export-outcome wrote, without the two files beside it:
    # the verdict stays invalid, and the hint names the options and the files, not `aimos verify`
    target, *_ = _exported(tmp_path, "--good")
    alone = run_aimos("verify-bundle", str(target), "--master-fingerprint", master_fingerprint)
    assert alone.code == VERIFICATION, alone.describe()
    assert "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED" in alone.err, alone.describe()
    assert f"add --witness {target}.witness.json --trust-context {target}.trust-context.json" in alone.err
    assert "run `aimos verify`" not in alone.err, alone.describe()

    half = run_aimos(
        "verify-bundle",
        str(target),
        "--witness",
        f"{target}.witness.json",
        "--master-fingerprint",
        master_fingerprint,
    )
    assert half.code == VERIFICATION, half.describe()
    assert f"add --trust-context {target}.trust-context.json" in half.err and "add --witness" not in half.err
