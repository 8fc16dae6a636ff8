"""The preset dictionary a save's event body is deflated against (migration 16) is part of the
stored form: a stream names it by its Adler-32, and every brain written since holds streams only it
inflates. Its bytes are pinned here, with a stream written by the first writer that must keep
inflating to the same body; a different dictionary is a new version beside this one, never an edit."""

from __future__ import annotations

import hashlib

from aimos.crypto.canonical import canonical_json, json_loads
from aimos.store.cells import (
    EVENT_DICTIONARY_V1,
    EVENT_DICTIONARY_V1_ID,
    deflate_event_text,
    event_body,
    inflate_event_text,
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
