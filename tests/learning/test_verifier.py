"""The in-database verifier (`aimos.verify.brain.verifier.verify_brain`), SPEC sections 1.3 and 9 and
PROTOCOL-NOTES section 7: per-memory classification (certified_chain, default_empty_chain,
signed_initial_weight), chain length and signatures, the corpus proof root, and edits made outside
the writer with the real sqlite3 shell (/usr/bin/sqlite3, guard triggers dropped first) detected
with their reason, then restored to the very same corpus root.

The sqlite3 shell (3.40.1) opens these brains and edits the plain tables without trouble, so every
tamper here goes through the shell, never through aimos.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cli import SQLITE3
from support.learning import CANARY, disclosing_receipt, give, projections, put, reweight_nodes, weight

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.store.cells import EVENT_DICTIONARY_V2, compact_provenance_body, deflate_event_text, event_body
from aimos.verify.brain.verifier import REASONS, Report, verify_brain

pytestmark = pytest.mark.timeout(60)

CORPUS_DOMAIN = b"aimos.cognitive-corpus-proof/v1\x00"


@dataclass
class Corpus:
    brain: Any
    up: str  # three transitions: 1000 -> 1165 -> 1413 -> 1724
    down: str  # one transition: 1000 -> 859, then a signed no-op
    plain: str  # recalled, no outcome
    canary: str  # retained quarantine at 0.1

    @property
    def db(self) -> Path:
        return Path(self.brain.home) / "brain.sqlite3"


@pytest.fixture
def corpus(brain: Any) -> Corpus:
    up = put(brain, "the heron colony nests by the east lake")
    down = put(brain, "a heron eats fish and frogs at dawn")
    plain = put(brain, "herons fly south when the heron lake freezes")
    canary = put(brain, f"heron note {CANARY}")
    # each outcome about a recall of its own: one weight-bearing outcome per agent, recall and memory
    for _ in range(3):
        give(brain, up, disclosing_receipt(brain, "heron", up, down, plain), "good")
    receipt = disclosing_receipt(brain, "heron", up, down, plain)
    give(brain, down, receipt, "bad")
    give(brain, down, disclosing_receipt(brain, "heron", up, down, plain), "good")  # sum 0: signed no-op
    give(brain, plain, receipt, "good", scope="occurrence_observation")  # no weight authority
    assert (weight(brain.conn, up), weight(brain.conn, down), weight(brain.conn, plain)) == (1724, 859, 1000)
    assert weight(brain.conn, canary) == 100
    return Corpus(brain, up, down, plain, canary)


def record(report: Report, memory_id: str) -> Any:
    found = [r for r in report.records if r.memory_id == memory_id]
    assert len(found) == 1, memory_id
    return found[0]


# --- classification --------------------------------------------------------------------------------------
def test_untouched_brain_verifies(corpus: Corpus) -> None:
    report = verify_brain(corpus.brain.conn)
    assert report.ok, [r for r in report.records if not r.ok]
    assert [r.memory_id for r in report.records] == sorted(
        [corpus.up, corpus.down, corpus.plain, corpus.canary]
    )
    got = {
        r.memory_id: (r.certification_status, r.ok, r.chain_length, r.sigs_verified, r.reason)
        for r in report.records
    }
    assert got == {
        corpus.up: ("certified_chain", True, 3, 3, None),
        corpus.down: ("certified_chain", True, 1, 1, None),
        corpus.plain: ("default_empty_chain", True, 0, 0, None),
        corpus.canary: ("signed_initial_weight", True, 0, 0, None),
    }
    assert report.event_chains and all(c["ok"] for c in report.event_chains)


def test_brain_without_outcomes_is_default_empty_chains(brain: Any) -> None:
    ids = [put(brain, text) for text in ("first plain note", "second plain note", "third plain note")]
    canary = put(brain, f"a canary {CANARY}")
    report = verify_brain(brain.conn)
    assert report.ok
    for mid in ids:
        assert (record(report, mid).certification_status, record(report, mid).chain_length) == (
            "default_empty_chain",
            0,
        )
    assert record(report, canary).certification_status == "signed_initial_weight"
    assert record(report, canary).ok


def test_chain_length_counts_transitions_not_noops(corpus: Corpus) -> None:
    conn = corpus.brain.conn
    for mid in (corpus.up, corpus.down):
        r = record(verify_brain(conn), mid)
        assert r.chain_length == r.sigs_verified == len(projections(conn, mid))
    assert record(verify_brain(conn), corpus.down).chain_length == 1  # bad, then a no-op


def test_one_memory_only(corpus: Corpus) -> None:
    report = verify_brain(corpus.brain.conn, corpus.up)
    assert [r.memory_id for r in report.records] == [corpus.up]
    assert report.ok and report.records[0].chain_length == 3


# --- the corpus proof root -------------------------------------------------------------------------------
def test_corpus_root_is_the_commitment_over_the_records(corpus: Corpus) -> None:
    report = verify_brain(corpus.brain.conn)
    records = [r.proof_record() for r in report.records]
    assert report.corpus_proof_root == commitments.corpus_proof_root(records).hex()
    # and by hand: H(domain || canonicalJSON(records in memory-id order))
    ordered = sorted(records, key=lambda r: r["memory_id"])
    assert set(ordered[0]) == {
        "memory_id",
        "certification_status",
        "ok",
        "chain_length",
        "sigs_verified",
        "reason",
    }
    assert report.corpus_proof_root == hashlib.sha256(CORPUS_DOMAIN + canonical_json(ordered)).hexdigest()


def test_corpus_root_is_stable_and_moves_with_a_transition(corpus: Corpus) -> None:
    conn = corpus.brain.conn
    first = verify_brain(conn).corpus_proof_root
    assert verify_brain(conn).corpus_proof_root == first
    receipt = disclosing_receipt(corpus.brain, "heron lake freezes", corpus.plain)
    give(corpus.brain, corpus.plain, receipt, "good", scope="occurrence_observation")
    assert verify_brain(conn).corpus_proof_root == first, "an occurrence observation changes no record"
    give(corpus.brain, corpus.plain, receipt, "good")
    moved = verify_brain(conn)
    assert moved.ok and moved.corpus_proof_root != first
    assert record(moved, corpus.plain).certification_status == "certified_chain"


def test_every_reason_in_the_vocabulary_is_a_string() -> None:
    assert all(isinstance(r, str) and r == r.strip() for r in REASONS)
    assert "terminal_weight_mismatch" in REASONS and "hash_mismatch" in REASONS


# --- edits outside the writer (the sqlite3 shell) ---------------------------------------------------------
def shell(db: Path, sql: str) -> str:
    proc = subprocess.run([SQLITE3, str(db), sql], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, f"sqlite3 failed: {proc.stderr}\n{sql}"
    return proc.stdout


def drop_guards(db: Path, table: str, *, inserts: bool = False) -> None:
    """Drop ``table``'s BEFORE UPDATE / DELETE (and, with ``inserts``, INSERT) triggers."""
    kinds = ["BEFORE UPDATE", "BEFORE DELETE"] + (["BEFORE INSERT"] if inserts else [])
    names = shell(
        db,
        f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = '{table}' AND ("
        + " OR ".join(f"sql LIKE '%{k}%'" for k in kinds)
        + ")",
    ).split()
    assert names or not inserts, table
    if names:
        shell(db, " ".join(f"DROP TRIGGER {n};" for n in names))


def set_field(db: Path, table: str, column: str, value: Any, where: str) -> None:
    drop_guards(db, table)
    literal = value if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"
    if isinstance(value, bytes):
        literal = f"X'{value.hex()}'"
    shell(db, f"UPDATE {table} SET {column} = {literal} WHERE {where};")


def flip(b64u: str) -> str:
    raw = bytearray(b64u_decode(b64u))
    raw[10] ^= 0x40
    return b64u_encode(bytes(raw))


@dataclass
class Tamper:
    table: str
    column: str
    where: str
    original: Any
    forged: Any


def tamper_cases(c: Corpus, name: str) -> Tamper:
    conn = c.brain.conn
    chain = projections(conn, c.up)
    first, last = chain[0], chain[-1]
    node = reweight_nodes(conn, c.up)[-1]
    p_first = f"projection_id = '{first['projection_id']}'"
    p_last = f"projection_id = '{last['projection_id']}'"
    cases = {
        "projection-new-weight": Tamper(
            "weight_projections",
            "new_weight_milli",
            p_first,
            first["new_weight_milli"],
            first["new_weight_milli"] + 1,
        ),
        "projection-old-weight": Tamper(
            "weight_projections",
            "old_weight_milli",
            p_last,
            last["old_weight_milli"],
            last["old_weight_milli"] - 1,
        ),
        "transition-signature": Tamper(
            "weight_projections",
            "transition_signature_b64u",
            p_last,
            last["transition_signature_b64u"],
            flip(last["transition_signature_b64u"]),
        ),
        "projection-signer-epoch": Tamper(
            "weight_projections",
            "signer_valid_from",
            p_last,
            last["signer_valid_from"],
            last["signer_valid_from"] - 3600,
        ),
        "live-weight": Tamper("memories", "retrieval_weight_milli", f"memory_id = '{c.up}'", 1724, 1413),
        "reweight-body": Tamper(  # the compact body (migration 18) rewritten in the same form
            "memory_provenance",
            "body_deflated",
            f"provenance_id = '{node['provenance_id']}'",
            compact_provenance_body(node["body_json"], node["memory_id"]),  # as the writer stored it
            compact_provenance_body(
                str(node["body_json"]).replace('"reason":"outcome_evidence"', '"reason":"operator_override"'),
                node["memory_id"],
            ),
        ),
    }
    return cases[name]


EXPECTED = {
    "projection-new-weight": {"hash_mismatch"},
    "projection-old-weight": {"continuity_break"},
    "transition-signature": {"transition_signature_invalid"},
    "projection-signer-epoch": {"transition_signature_invalid", "provenance_binding_invalid"},
    "live-weight": {"terminal_weight_mismatch"},
    "reweight-body": {"provenance_signed_body_content_hash_mismatch"},
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_tamper_is_detected_and_restoring_gives_the_same_root(corpus: Corpus, name: str) -> None:
    conn = corpus.brain.conn
    before = verify_brain(conn)
    assert before.ok
    t = tamper_cases(corpus, name)
    assert t.forged != t.original
    set_field(corpus.db, t.table, t.column, t.forged, t.where)
    after = verify_brain(conn)
    target = record(after, corpus.up)
    assert not after.ok and not target.ok
    assert target.reason in REASONS
    assert target.reason in EXPECTED[name], (name, target.reason, target.detail)
    assert after.corpus_proof_root != before.corpus_proof_root
    others = [r for r in after.records if r.memory_id != corpus.up]
    assert all(r.ok for r in others), "an edit of one memory's chain failed another memory"
    set_field(corpus.db, t.table, t.column, t.original, t.where)
    restored = verify_brain(conn)
    assert restored.ok, [r for r in restored.records if not r.ok]
    assert restored.corpus_proof_root == before.corpus_proof_root


def test_terminal_projection_weight_edit_is_a_hash_mismatch(corpus: Corpus) -> None:
    """Editing the newest projection's new weight is an edit of the projection: its h_i no longer
    recomputes (hash_mismatch), whatever the live row says."""
    conn = corpus.brain.conn
    before = verify_brain(conn).corpus_proof_root
    last = projections(conn, corpus.up)[-1]
    where = f"projection_id = '{last['projection_id']}'"
    set_field(corpus.db, "weight_projections", "new_weight_milli", 1725, where)
    target = record(verify_brain(conn), corpus.up)
    assert not target.ok
    assert target.reason == "hash_mismatch", (target.reason, target.detail)
    set_field(corpus.db, "weight_projections", "new_weight_milli", 1724, where)
    assert verify_brain(conn).corpus_proof_root == before


def test_live_weight_edit_on_a_memory_without_chain_is_unattested(corpus: Corpus) -> None:
    """A memory with no projection whose live weight is not 1.000: unattested_initial_weight (never ok)."""
    conn = corpus.brain.conn
    before = verify_brain(conn).corpus_proof_root
    where = f"memory_id = '{corpus.plain}'"
    set_field(corpus.db, "memories", "retrieval_weight_milli", 1200, where)
    target = record(verify_brain(conn), corpus.plain)
    assert not target.ok
    assert target.certification_status == "unattested_initial_weight"
    assert target.reason == "unattested_initial_weight", (target.reason, target.detail)
    set_field(corpus.db, "memories", "retrieval_weight_milli", 1000, where)
    assert verify_brain(conn).corpus_proof_root == before


def test_reweight_node_signer_epoch_edit_is_detected(corpus: Corpus) -> None:
    """The REWEIGHT node names its signer epoch (signer_valid_from); the writer requires it to be the
    projection's housekeeper epoch (SPEC 6: exact signer epoch). Moving it to an epoch that does
    not exist is an edit outside the writer and must be detected (SPEC 1.3)."""
    conn = corpus.brain.conn
    before = verify_brain(conn).corpus_proof_root
    node = reweight_nodes(conn, corpus.up)[-1]
    where = f"provenance_id = '{node['provenance_id']}'"
    set_field(corpus.db, "memory_provenance", "signer_valid_from", node["signer_valid_from"] - 86400, where)
    target = record(verify_brain(conn), corpus.up)
    restore = node["signer_valid_from"]
    try:
        assert not target.ok, "a REWEIGHT node moved to a non-existent signer epoch still verifies"
        assert target.reason in {
            "provenance_binding_invalid",
            "signature_invalid",
            "provenance_signer_certificate_row_mismatch",
        }, target.reason
    finally:
        set_field(corpus.db, "memory_provenance", "signer_valid_from", restore, where)
    assert verify_brain(conn).corpus_proof_root == before


def test_truncating_the_newest_transition_is_detected(corpus: Corpus) -> None:
    """Deleting the newest projection and rolling the live weight back to its predecessor leaves the
    signed REWEIGHT node, the outcome marked authorized_transition and the signed
    `cognitive_weight_adjusted` event naming the deleted h_i: the edit must not verify (SPEC 1.1,
    1.3: no projection is ever deleted, and an edit outside the writer is detected)."""
    conn = corpus.brain.conn
    before = verify_brain(conn).corpus_proof_root
    chain = projections(conn, corpus.up)
    last = chain[-1]
    drop_guards(corpus.db, "weight_projections")
    shell(corpus.db, f"DELETE FROM weight_projections WHERE projection_id = '{last['projection_id']}';")
    set_field(
        corpus.db,
        "memories",
        "retrieval_weight_milli",
        chain[-2]["new_weight_milli"],
        f"memory_id = '{corpus.up}'",
    )
    report = verify_brain(conn)
    target = record(report, corpus.up)
    detected = not report.ok
    # restore: re-insert the row (the insert trigger needs the writer's functions: drop it too)
    drop_guards(corpus.db, "weight_projections", inserts=True)
    columns = ", ".join(last)
    values = ", ".join(
        str(v) if isinstance(v, int) else ("NULL" if v is None else "'" + str(v) + "'") for v in last.values()
    )
    shell(corpus.db, f"INSERT INTO weight_projections ({columns}) VALUES ({values});")
    set_field(
        corpus.db,
        "memories",
        "retrieval_weight_milli",
        last["new_weight_milli"],
        f"memory_id = '{corpus.up}'",
    )
    assert verify_brain(conn).corpus_proof_root == before
    assert detected, (
        f"the newest transition of {corpus.up} was deleted and the live weight rolled back, yet the "
        f"verifier says ok (chain_length {target.chain_length}, reason {target.reason})"
    )


def test_tamper_with_an_event_breaks_the_event_chain(corpus: Corpus) -> None:
    """The body is stored deflated against its dictionary (migration 17): an edit of that stored
    form, re-deflated so that it reads back as a well-formed body, is named by the event chain."""
    conn = corpus.brain.conn
    before = verify_brain(conn).corpus_proof_root
    event = conn.execute(
        "SELECT event_id, signed_body, signed_body_deflated FROM events"
        " WHERE operation = 'cognitive_weight_adjusted' LIMIT 1"
    ).fetchall()[0]
    assert event[1] == ""
    body = json.loads(event_body("cognitive_weight_adjusted", event[1], event[2]) or "")
    body["metadata"]["new_weight_milli"] = 2999
    where = f"event_id = '{event[0]}'"
    forged = deflate_event_text(canonical_json(body).decode(), EVENT_DICTIONARY_V2)
    set_field(corpus.db, "events", "signed_body_deflated", forged, where)
    report = verify_brain(conn)
    assert not report.ok
    assert any(c["reason"] == "event_hash_mismatch" for c in report.event_chains)
    set_field(corpus.db, "events", "signed_body_deflated", event[2], where)
    restored = verify_brain(conn)
    assert restored.ok and restored.corpus_proof_root == before


def test_canary_live_weight_edit_is_detected(corpus: Corpus) -> None:
    """A canary kept in quarantine at 0.100 (its signed initial weight) lifted to 1.000 outside the
    writer no longer verifies; putting 0.100 back restores the corpus root."""
    conn = corpus.brain.conn
    before = verify_brain(conn)
    assert record(before, corpus.canary).certification_status == "signed_initial_weight"
    where = f"memory_id = '{corpus.canary}'"
    set_field(corpus.db, "memories", "retrieval_weight_milli", 1000, where)
    target = record(verify_brain(conn), corpus.canary)
    assert not target.ok
    assert target.reason == "terminal_weight_mismatch", (target.reason, target.detail)
    set_field(corpus.db, "memories", "retrieval_weight_milli", 100, where)
    assert verify_brain(conn).corpus_proof_root == before.corpus_proof_root
