"""The preset dictionaries a save's event body (migration 16), an outcome's (migration 17) and a
REWEIGHT node's (migration 18) are
deflated against are part of the stored form: a stream names its dictionary by its Adler-32, and
every brain written since holds streams only that dictionary inflates. Their bytes are pinned here,
each with a stream written by the first writer that must keep inflating to the same body; a
different dictionary is a new version beside these, never an edit."""

from __future__ import annotations

import hashlib
import zlib

from aimos.crypto.canonical import canonical_json, json_loads
from aimos.store.cells import (
    EVENT_DICTIONARY_OF,
    EVENT_DICTIONARY_V1,
    EVENT_DICTIONARY_V1_ID,
    EVENT_DICTIONARY_V2,
    PROVENANCE_DICTIONARY_V1,
    compact_provenance_body,
    deflate_event_text,
    event_body,
    inflate_event_text,
    provenance_body,
)

DICTIONARY_SHA256 = "4a9b9a4679508ac56ad9cdf2153859c986c43e6d2d25bec400a34f967111345f"
BODY = (
    '{"actor_agent_id":"cli","actor_valid_from":"2026-01-02T03:04:05.000Z","cert_fingerprint":"'
    + "ab" * 32
    + '","company_id":"personal","event_id":"00000000-0000-4000-8000-000000000001","identity_tier":"T1",'
    '"ledger_seq":7,"ledger_version":"aimos-ledger/v1","metadata":{"live_content_hash":"'
    + "01" * 32
    + '","memory_id":"00000000-0000-4000-8000-000000000002","request_hash":"'
    + "02" * 32
    + '","retained_quarantine":false,"save_mutation_hash":"'
    + "03" * 32
    + '","supersedes":null},"operation":"memory_saved","parent_event_id":null,"prev_mutation_hash":"'
    + "04" * 32
    + '","signer_agent_id":"housekeeper","signer_valid_from":"2026-01-02T03:04:05.000Z",'
    '"subject_memory_id":"00000000-0000-4000-8000-000000000002","ts_signed":1767323045}'
)
# deflate_event_text(BODY) as the first writer stored it (zlib 1.2/1.3, level 6)
STORED = bytes.fromhex(
    "78bbacdfbd5ead944b0a80300c444f5498a43fe939bc80ba12bc827717a505d120d1980781ae4a677815029e96590e96"
    "c1c9811cb8872f0805b15d24043e8c367485a18e3b56d857d78e7548536a7edbaaa812c8c64545c5e3f8ae2bd8c617dd"
    "e16dfcf45dc81221d8f828e1832e9297cab24fee524ed9b34788eb06204212ab"
)


def test_the_dictionary_is_the_one_every_stream_names() -> None:
    assert hashlib.sha256(EVENT_DICTIONARY_V1).hexdigest() == DICTIONARY_SHA256
    assert EVENT_DICTIONARY_V1_ID.hex() == "acdfbd5e"
    assert STORED[2:6] == EVENT_DICTIONARY_V1_ID and STORED[1] & 0x20  # FDICT, this dictionary


def test_a_stream_the_first_writer_stored_reads_as_the_same_body() -> None:
    assert canonical_json(json_loads(BODY)).decode() == BODY  # the vector is a canonical body
    assert inflate_event_text(STORED) == BODY
    assert event_body("memory_saved", "", STORED) == BODY


def test_the_writer_today_stores_a_stream_that_reads_back_and_is_small() -> None:
    stored = deflate_event_text(BODY)
    assert inflate_event_text(stored) == BODY
    assert stored[2:6] == EVENT_DICTIONARY_V1_ID
    assert len(stored) < len(BODY) // 5  # keys and words from the dictionary, the hex repeated here


# --- the second dictionary: an outcome's events (migration 17) -------------------------------------
DICTIONARY_V2_SHA256 = "559fd1904215d3e29c5d5fff29c8081ba6ec8a39d1afe06db5f44317e73d53a4"
OUTCOME_BODY = "".join(
    (
        '{"actor_agent_id":"cli","actor_valid_from":"2026-01-02T03:04:05.000Z","cert_fingerprint":"',
        "ab" * 32,
        '","company_id":"personal","event_id":"00000000-0000-4000-8000-000000000003","identity_tier":"T1",',
        '"ledger_seq":9,"ledger_version":"aimos-ledger/v1","metadata":{"live_content_hash":"',
        "01" * 32,
        '","memory_id":"00000000-0000-4000-8000-000000000002","occurrence_ref":"',
        "05" * 32,
        '","outcome_id":"00000000-0000-4000-8000-000000000004",',
        '"receipt_id":"00000000-0000-4000-8000-000000000005","request_hash":"',
        "02" * 32,
        '","reward_sign":1,"target_scope":"principal_state"},"operation":"mutation_outcome_evidence_v2",',
        '"parent_event_id":"00000000-0000-4000-8000-000000000006","prev_mutation_hash":"',
        "04" * 32,
        '","signer_agent_id":"housekeeper","signer_valid_from":"2026-01-02T03:04:05.000Z",',
        '"subject_memory_id":"00000000-0000-4000-8000-000000000002","ts_signed":1767323047}',
    )
)
# deflate_event_text(OUTCOME_BODY, EVENT_DICTIONARY_V2) as the first writer stored it
OUTCOME_STORED = bytes.fromhex(
    "78bbb98b781cb5566d0a80200c3d91f09c53ab737481ea1cddbd0f0cc256ac467b30f087e8dedc7b0a044fab7089c412"
    "28397807ea113a7087781c24103e8c36e81a86126e4fbca5e65896089aa6b66fbb2a5a1fbc0d957e2a8a23c95e116da8"
    "0558710fae2d5cb1275e6d1e64c3dfdf84ebe42aea4c77d30db6e1a33a3cccb12418ca577812159f530e14c0795e000e"
    "9434f2"
)
OUTCOME_OPERATIONS = (
    "mutation_outcome_evidence_v2",
    "cognitive_weight_adjusted",
    "cognitive_weight_unchanged",
    "mutation_occurrence_observation_retained",
)


def test_the_second_dictionary_is_the_one_an_outcome_stream_names() -> None:
    assert hashlib.sha256(EVENT_DICTIONARY_V2).hexdigest() == DICTIONARY_V2_SHA256
    assert OUTCOME_STORED[2:6].hex() == "b98b781c" and OUTCOME_STORED[1] & 0x20
    assert {op: EVENT_DICTIONARY_OF[op] for op in OUTCOME_OPERATIONS} == dict.fromkeys(
        OUTCOME_OPERATIONS, EVENT_DICTIONARY_V2
    )
    assert EVENT_DICTIONARY_OF["memory_saved"] == EVENT_DICTIONARY_V1  # a save's stays the first


def test_an_outcome_stream_the_first_writer_stored_reads_as_the_same_body() -> None:
    assert canonical_json(json_loads(OUTCOME_BODY)).decode() == OUTCOME_BODY
    assert inflate_event_text(OUTCOME_STORED, EVENT_DICTIONARY_V2) == OUTCOME_BODY
    assert event_body("mutation_outcome_evidence_v2", "", OUTCOME_STORED) == OUTCOME_BODY
    # each operation reads only its own dictionary's streams: one stored form per operation
    assert event_body("memory_saved", "", OUTCOME_STORED) is None
    assert event_body("mutation_outcome_evidence_v2", "", STORED) is None
    assert inflate_event_text(OUTCOME_STORED) is None


def test_the_writer_today_stores_an_outcome_stream_that_reads_back_and_is_small() -> None:
    stored = deflate_event_text(OUTCOME_BODY, EVENT_DICTIONARY_V2)
    assert inflate_event_text(stored, EVENT_DICTIONARY_V2) == OUTCOME_BODY
    assert len(stored) < len(OUTCOME_BODY) // 5


# --- a REWEIGHT provenance node's body (migration 18) ------------------------------------------------
PROVENANCE_DICTIONARY_SHA256 = "bcaae1fdde252edc04545699b7c9e041dbe600eaf2b912315be41e481c8a58b2"
REWEIGHT_MEMORY = "00000000-0000-4000-8000-000000000002"
REWEIGHT_BODY = "".join(
    (
        '{"company_id":"personal","event_type":"REWEIGHT","governor_flag":"SIGNED_VALENCE_REFERENCE_POINT",',
        f'"judge_valence":0.761594,"memory_id":"{REWEIGHT_MEMORY}","new_weight":1.165,"new_weight_milli":1165,',
        '"old_weight":1,"old_weight_milli":1000,"outcome_id":"00000000-0000-4000-8000-000000000004",',
        '"reason":"outcome_evidence","ts_signed":1767323047,"valence_row_hash":"',
        "03" * 32,
        '","valence_rule":"aimos.valence-rule/v2"}',
    )
)
# compact_provenance_body(REWEIGHT_BODY, REWEIGHT_MEMORY) as the first writer stored it
REWEIGHT_STORED = bytes.fromhex(
    "78bb6ec26e58ab1e808034373334b53421109c8666a65843142c8e12a84486a90114e8820913106101e342810929e16e"
    "666e6c646c60823dfc0d8c298344c71f00c0328566"
)


def test_a_reweight_stream_the_first_writer_stored_reads_as_the_same_body() -> None:
    assert hashlib.sha256(PROVENANCE_DICTIONARY_V1).hexdigest() == PROVENANCE_DICTIONARY_SHA256
    assert canonical_json(json_loads(REWEIGHT_BODY)).decode() == REWEIGHT_BODY
    assert provenance_body("REWEIGHT", REWEIGHT_MEMORY, "", REWEIGHT_STORED) == REWEIGHT_BODY
    assert REWEIGHT_MEMORY.encode() not in zlib.decompressobj(zdict=PROVENANCE_DICTIONARY_V1).decompress(
        REWEIGHT_STORED
    )
    assert event_body("cognitive_weight_adjusted", "", REWEIGHT_STORED) is None  # its own dictionary
    stored = compact_provenance_body(REWEIGHT_BODY, REWEIGHT_MEMORY)  # the writer today
    assert provenance_body("REWEIGHT", REWEIGHT_MEMORY, "", stored) == REWEIGHT_BODY
    assert len(stored) < len(REWEIGHT_BODY) // 5
