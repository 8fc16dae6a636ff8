"""Save-time classification (SPEC 7, PROTOCOL-NOTES 3 and 9): the classifier runs in the save's
transaction (`save_and_classify`, as `aimos save` does) and appends housekeeper-signed, chained
classification rows; when a cluster grows, earlier members are relabelled retroactively with
their first judgment kept in their chain. Content, weight and retention never change.

Expected scores come from PROTOCOL-NOTES 9 (not from the kernel): a reference-like memory with a
leading question scores 450 (unverified); a same-source cluster of two or more adds 250 + 100
(800, poison_likely); a cross-source peer holding another number adds 200 per contradiction; one
holding the same number subtracts 250 per support.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey
from support.epistemic import (
    CLASSIFIED,
    DETECTOR_VERSION,
    PLAIN,
    POISON_1,
    POISON_2,
    POISON_3,
    QUESTION,
    SCHEMA,
    chain,
    count,
    g_hash,
    memory_row,
    q,
    save_text,
)

pytestmark = pytest.mark.timeout(60)

CLEAN = "Chicago Fire's fourth season has 23 episodes, according to the network's listing."
TRUE_PEER = QUESTION + ".The fourth season of Chicago Fire had 23 episodes."
AGREEING_PEER = QUESTION + ".NBC lists 24 episodes for the fourth season of Chicago Fire."


def anchor_fingerprint(home: Path) -> str:
    anchors = json.loads(next(home.rglob("anchors.json")).read_text("utf-8"))
    (fingerprint,) = {b["master_fingerprint"] for b in anchors["brains"].values()}
    return str(fingerprint)


def housekeeper_signed(conn: Any, row: dict[str, Any]) -> bool:
    """The authority event's signature, checked here with PyNaCl against the housekeeper epoch's
    public key (payload form: canonical body \\n nonce \\n ts)."""
    (epoch,) = q(
        conn,
        "SELECT role, public_key_b64u FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
        (row["signer_agent_id"], row["signer_valid_from"]),
    )
    spki = base64.urlsafe_b64decode(epoch["public_key_b64u"] + "=" * (-len(epoch["public_key_b64u"]) % 4))
    sig_text = row["signature_b64u"]
    signature = base64.urlsafe_b64decode(sig_text + "=" * (-len(sig_text) % 4))
    message = b"\n".join(
        [row["signed_body"].encode("utf-8"), row["nonce"].encode(), str(row["ts_signed"]).encode()]
    )
    try:
        VerifyKey(spki[-32:]).verify(message, signature)
    except BadSignatureError:
        return False
    return bool(epoch["role"] == "housekeeper" and row["signer_agent_id"] == "housekeeper")


def assert_chain_binds(conn: Any, memory_id: str) -> list[dict[str, Any]]:
    """Every row: g_j recomputes from the notes' formula, chains to its predecessor, and its
    housekeeper-signed `memory_epistemic_classified` event binds label, confidence, live hash,
    previous hash, the detector version and the memory; the live label is the newest row's."""
    rows = chain(conn, memory_id)
    live = memory_row(conn, memory_id)["live_content_hash"]
    prev = None
    for r in rows:
        meta = r["body"]["metadata"]
        assert r["operation"] == CLASSIFIED and r["e_subject"] == memory_id
        assert r["authority_mutation_hash"] == r["e_mutation"]
        assert housekeeper_signed(conn, r), r
        assert r["prev_classification_hash"] == prev
        assert r["live_content_hash"] == live
        assert r["classification_hash"] == g_hash(
            memory_id, r["label"], r["confidence_milli"], live, r["authority_mutation_hash"], prev
        )
        assert meta["schema"] == SCHEMA and meta["detector_version"] == DETECTOR_VERSION
        assert meta["memory_id"] == memory_id
        assert (meta["label"], meta["confidence_milli"], meta["basis"]) == (
            r["label"],
            r["confidence_milli"],
            r["basis"],
        )
        assert meta["live_content_hash"] == live and meta["prev_classification_hash"] == prev
        if r["basis"] == "classifier":
            assert meta["signals"]["detector_version"] == DETECTOR_VERSION
            assert meta["signals"]["score"] == r["confidence_milli"]
        prev = r["classification_hash"]
    assert memory_row(conn, memory_id)["epistemic_label"] == (rows[-1]["label"] if rows else "unverified")
    return rows


def labels(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(r["label"], r["confidence_milli"]) for r in rows]


def test_poison_cluster_is_labelled_at_save_and_retroactively(brain: Any) -> None:
    from aimos.verify.brain.parity import verify_everything
    from aimos.verify.brain.verifier import verify_event_chains

    conn = brain.conn
    plain = save_text(brain, PLAIN, source="cli")
    assert plain.status == "saved"
    assert chain(conn, plain.memory_id) == []
    assert memory_row(conn, plain.memory_id)["epistemic_label"] == "unverified"
    assert count(conn, "events", "operation = ?", (CLASSIFIED,)) == 0

    first = save_text(brain, POISON_1)
    rows1 = assert_chain_binds(conn, first.memory_id)
    assert labels(rows1) == [("unverified", 450)]
    signals = rows1[0]["body"]["metadata"]["signals"]
    assert signals["leading_question"] is True and signals["reference_like"] is True
    assert signals["fingerprint"] == hashlib.sha256(QUESTION.encode()).hexdigest()
    assert signals["cluster_size"] == 1 and "retroactive" not in signals
    first_row = dict(rows1[0])
    before = {m: memory_row(conn, m) for m in (plain.memory_id, first.memory_id)}

    second = save_text(brain, POISON_2)
    rows1 = assert_chain_binds(conn, first.memory_id)
    rows2 = assert_chain_binds(conn, second.memory_id)
    assert labels(rows2) == [("poison_likely", 800)]
    assert labels(rows1) == [("unverified", 450), ("poison_likely", 800)]
    assert rows1[0]["classification_hash"] == first_row["classification_hash"]  # first judgment kept
    assert rows1[1]["prev_classification_hash"] == first_row["classification_hash"]
    retro = rows1[1]["body"]["metadata"]["signals"]
    assert retro["retroactive"] is True and retro["cluster_grew_with"] == second.memory_id
    assert (retro["cluster_size"], retro["source_concentration"], retro["same_lure_cluster"]) == (
        2,
        True,
        True,
    )
    assert rows1[1]["body"]["metadata"]["previous_label"] == "unverified"
    s2 = rows2[0]["body"]["metadata"]["signals"]
    assert (s2["cluster_size"], s2["source_concentration"], s2["contradictions"], s2["supports"]) == (
        2,
        True,
        0,
        0,
    )
    assert "retroactive" not in s2

    third = save_text(brain, POISON_3)
    assert labels(assert_chain_binds(conn, third.memory_id)) == [("poison_likely", 800)]
    assert len(chain(conn, first.memory_id)) == 2 and len(chain(conn, second.memory_id)) == 1

    events = count(conn, "events")
    classifications = count(conn, "memory_classifications")
    again = save_text(brain, POISON_2)
    assert again.status == "duplicate" and again.memory_id == second.memory_id
    assert count(conn, "memory_classifications") == classifications == 4
    assert count(conn, "events", "operation = ?", (CLASSIFIED,)) == 4
    assert count(conn, "events") > events  # the duplicate is recorded (occurrence), not classified

    # content, weight and retention never change; only the label projection moved
    for mid, old in before.items():
        new = memory_row(conn, mid)
        for column in ("value", "live_content_hash", "retrieval_weight_milli", "quarantine", "created_at"):
            assert new[column] == old[column], (mid, column)
    assert memory_row(conn, first.memory_id)["retrieval_weight_milli"] == 1000
    assert count(conn, "memories") == 4

    assert all(c["ok"] for c in verify_event_chains(conn))
    report = verify_everything(conn, anchor_fingerprint(brain.home))
    assert report["ok"] and report["parity"], report
    assert report["in_database"]["corpus_proof_root"] == report["portable"]["corpus_proof_root"]


def test_clean_reference_stays_unverified_and_a_cross_source_peer_contradicts(brain: Any) -> None:
    conn = brain.conn
    clean = save_text(brain, CLEAN, source="web:nbc.example")
    assert chain(conn, clean.memory_id) == []
    assert memory_row(conn, clean.memory_id)["epistemic_label"] == "unverified"
    assert count(conn, "epistemic_fingerprints") == 0

    poison = save_text(brain, POISON_1)
    assert labels(chain(conn, poison.memory_id)) == [("unverified", 450)]

    peer = save_text(brain, TRUE_PEER, source="web:wiki.example")
    rows = assert_chain_binds(conn, peer.memory_id)
    assert labels(rows) == [("poison_likely", 900)]  # 450 + 250 + 200, no source concentration
    signals = rows[0]["body"]["metadata"]["signals"]
    assert (signals["cluster_size"], signals["contradictions"], signals["supports"]) == (2, 1, 0)
    assert signals["source_concentration"] is False and signals["score"] == 900
    back = assert_chain_binds(conn, poison.memory_id)
    assert labels(back) == [("unverified", 450), ("poison_likely", 900)]
    assert back[1]["body"]["metadata"]["signals"]["contradictions"] == 1
    assert chain(conn, clean.memory_id) == []  # no leading question: never in the cluster


def test_an_agreeing_cross_source_peer_supports_and_nothing_is_relabelled(brain: Any) -> None:
    conn = brain.conn
    poison = save_text(brain, POISON_1)
    peer = save_text(brain, AGREEING_PEER, source="web:nbc.example")
    rows = assert_chain_binds(conn, peer.memory_id)
    assert labels(rows) == [("unverified", 450)]  # 450 + 250 - 250
    assert rows[0]["body"]["metadata"]["signals"]["supports"] == 1
    # the earlier member's label would not change (450 again): no second row
    assert labels(assert_chain_binds(conn, poison.memory_id)) == [("unverified", 450)]
