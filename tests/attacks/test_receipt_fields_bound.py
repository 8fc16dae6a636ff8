"""Every field of an exported recall receipt is bound or refused (issue 35, item 11).

An attacker with a receipt file edits one value, or adds one, and hands it to `aimos receipt verify`.
Before, `request.path`, `request.method` and `event.event_id` could be changed and the receipt still
said valid. Here every leaf of a real receipt (a real brain, a real recall) is changed in turn, and
a field is added to every object: each edited document must fail. Over the CLI the three fields the
red team changed fail naming their check.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.json_leaves import changed, leaves, set_at

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.recall.receipts import receipt_document
from aimos.verify.receipt import verdict, verify_receipt_document
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

pytestmark = pytest.mark.timeout(120)

Path_ = tuple[str | int, ...]


def _objects(node: Any, at: Path_ = ()) -> Iterator[Path_]:
    if isinstance(node, dict):
        yield at
        for k, v in node.items():
            yield from _objects(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _objects(v, (*at, i))


def _get(doc: Any, at: Path_) -> Any:
    for step in at:
        doc = doc[step]
    return doc


def _receipt(brain: Any) -> dict[str, Any]:
    t = int(time.time())
    for text in ("kestrel nest on the north tower", "kestrel sightings logged in spring"):
        body = build_save_body(company_id="personal", value=text)
        save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, t), t)
    request = sign_request(brain.agent, build_recall_body(query="kestrel"), PATH_RECALL, t)
    result = recall(brain.conn, brain.housekeeper, request, t)
    assert len(result.results) == 2
    return receipt_document(brain.conn, result.receipt["receipt_id"])


def test_every_leaf_and_every_added_field_of_a_receipt_is_refused(brain: Any) -> None:
    doc = _receipt(brain)
    fingerprint = brain.master.fingerprint
    assert verdict(verify_receipt_document(doc, expected_master_fingerprint=fingerprint))
    paths = [at for at, _ in leaves(doc)]
    assert len(paths) > 60, paths  # the whole document, evidence and decision included
    passed = []
    for at in paths:
        edited = copy.deepcopy(doc)
        set_at(edited, at, changed(_get(doc, at)))
        if verdict(verify_receipt_document(edited, expected_master_fingerprint=fingerprint)):
            passed.append(at)
    assert passed == [], f"edited fields that still verify: {passed}"
    added = []
    for at in _objects(doc):
        edited = copy.deepcopy(doc)
        _get(edited, at)["zz_unbound"] = "planted"
        if verdict(verify_receipt_document(edited, expected_master_fingerprint=fingerprint)):
            added.append(at)
    assert added == [], f"objects that accept an added field: {added}"


RED_TEAM_EDITS = {
    "request path": (("request", "path"), "/aimos/save", "agent's signed recall request"),
    "request method": (("request", "method"), "GET", "agent's signed recall request"),
    "event id": (("event", "event_id"), "00000000-0000-4000-8000-000000000000", "event id"),
}


def test_receipt_verify_refuses_the_red_team_edits_naming_the_check(installed: Path, tmp_path: Path) -> None:
    for text in ("kestrel nest on the north tower", "kestrel sightings logged in spring"):
        run_aimos("save", text).ok()
    receipt_id = json.loads(run_aimos("recall", "kestrel", "--json").ok().out)["receipt"]["receipt_id"]
    exported = run_aimos("receipt", "show", receipt_id, "--json").ok().out
    for name, ((obj, field), value, check) in {
        **RED_TEAM_EDITS,
        "added field": (("request", "origin"), "https://attacker.example", "every field of the document"),
    }.items():
        doc = json.loads(exported)
        doc[obj][field] = value
        edited = tmp_path / f"{name.replace(' ', '-')}.json"
        edited.write_text(json.dumps(doc), "utf-8")
        result = run_aimos("receipt", "verify", str(edited))  # against the anchor install wrote
        assert result.code == 4, f"{name}\n{result.describe()}"
        failed = [line for line in result.out.splitlines() if line.startswith("FAIL")]
        assert any(check in line for line in failed), f"{name}: {check!r}\n{result.describe()}"
        assert "Traceback" not in result.both


def test_a_number_of_another_type_is_refused(brain: Any) -> None:
    """A whole number given as a float, a string or a boolean is the same value to a loose reader:
    the verifier wants the exact type, so nothing in the document reads two ways."""
    doc = _receipt(brain)
    fingerprint = brain.master.fingerprint
    at = [("result_count",), ("created_at",), ("housekeeper", "valid_from"), ("request", "agent_valid_from")]
    at += [("request", "ts_signed"), ("event", "ts_signed")]
    accepted = []
    for path in at:
        value = _get(doc, path)
        for other in (float(value), str(value), *((True,) if value == 1 else ())):
            edited = copy.deepcopy(doc)
            set_at(edited, path, other)
            if verdict(verify_receipt_document(edited, expected_master_fingerprint=fingerprint)):
                accepted.append((path, other))
    assert accepted == [], f"numbers of another type that still verify: {accepted}"
