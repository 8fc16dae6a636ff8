"""A text stored deflated (migration 11: a recall's decision): the pure reading (store.cells), the
seals' reading of it in SQL (seals.STORED_FORMS, the same answers), and a writer that tries to store
one that is not the receipt's decision."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
import zlib
from typing import Any

import apsw
import pytest
from support.cells import the_row

from aimos.actions.bodies import build_recall_body
from aimos.crypto.canonical import canonical_sha256_hex
from aimos.errors import IntegrityError
from aimos.identity.requests import sign_request
from aimos.recall.pipeline import recall
from aimos.recall.receipts import receipt_document
from aimos.store import seals
from aimos.store.cells import (
    EVENT_DICTIONARY_V1,
    EVENT_DICTIONARY_V2,
    INFLATED_LIMIT,
    INFLATED_RATIO,
    PROVENANCE_DICTIONARY_V1,
    compact_provenance_body,
    deflate_event_text,
    deflate_text,
    event_body,
    inflate_bytes,
    inflate_event_text,
    provenance_body,
    stored_text,
)
from aimos.store.connection import one, register_functions, write_transaction
from aimos.vocabulary import PATH_RECALL

TEXT = '{"candidates":[{"memory_id":"a","decision":"selected"}],"note":"caf\u00e9 \u2603"}'


def test_a_deflated_text_inflates_to_its_exact_bytes() -> None:
    stored = deflate_text(TEXT)
    assert isinstance(stored, bytes) and stored != TEXT.encode()
    assert inflate_bytes(stored) == TEXT.encode("utf-8")
    assert stored_text("", stored) == TEXT
    big = TEXT * 500
    assert len(deflate_text(big)) < len(big.encode()) // 10


@pytest.mark.parametrize(
    "data",
    [
        b"not deflate at all",
        deflate_text(TEXT)[:-3],  # cut short
        deflate_text(TEXT) + b"more",  # something after the stream
        b"",
        "a text, not bytes",
        None,
        42,
    ],
    ids=["garbage", "truncated", "trailing", "empty", "text", "null", "integer"],
)
def test_what_is_not_one_whole_deflate_stream_reads_as_nothing(data: Any) -> None:
    assert inflate_bytes(data) is None
    # beside an empty text: nothing to read, unless nothing is stored deflated (then the text is it)
    assert stored_text("", data) == ("" if data is None else None)


def test_a_deflate_bomb_stops_at_the_limits() -> None:
    assert inflate_bytes(zlib.compress(b"\0" * (INFLATED_LIMIT + 1), 9)) is None  # past the size
    # past the ratio: a crafted stream inflating more than 64 times its size is refused, however
    # small, so a file full of them costs a verification at most 64 times its bytes
    for size in (1000, 10_000, INFLATED_LIMIT):
        packed = zlib.compress(b"a" * size, 9)
        assert (inflate_bytes(packed) is None) == (size > INFLATED_RATIO * len(packed)), size
    # a real decision is far from both: 200 candidates deflate about sixfold
    decision = json.dumps(
        {
            "candidates": [
                {"memory_id": str(uuid.uuid4()), "decision": "not_selected", "effective": i / 7}
                for i in range(200)
            ]
        }
    )
    assert inflate_bytes(deflate_text(decision)) == decision.encode()
    assert len(decision.encode()) < INFLATED_LIMIT


def test_the_pairs_a_row_may_hold() -> None:
    stored = deflate_text(TEXT)
    assert stored_text(TEXT, None) == TEXT  # a row from before migration 11
    assert stored_text("", stored) == TEXT  # a row since
    assert stored_text("anything", stored) is None  # text beside deflated bytes: an edit
    assert stored_text("", b"junk") is None
    assert stored_text(None, None) is None
    assert stored_text("", zlib.compress(b"\xff\xfe not utf-8")) is None


def _seal_reading(pairs: list[tuple[Any, Any]]) -> list[Any]:
    """What the seals hash for each (decision, decision_deflated) pair: STORED_FORMS's SQL."""
    ((storage, read),) = [v for k, v in seals.STORED_FORMS.items() if k == ("recall_receipts", "decision")]
    assert storage == "decision_deflated"
    conn = apsw.Connection(":memory:")
    register_functions(conn)
    conn.execute("CREATE TABLE t (decision TEXT, decision_deflated BLOB)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", pairs)
    return [r[0] for r in conn.execute(f"SELECT CAST(({read}) AS BLOB) FROM t ORDER BY rowid")]


def test_the_seals_read_a_stored_decision_as_the_python_reading_does() -> None:
    stored = deflate_text(TEXT)
    pairs: list[tuple[Any, Any]] = [
        (TEXT, None),
        ("", stored),
        ("x", stored),
        ("", b"junk"),
        ("", zlib.compress(b"\0" * (INFLATED_LIMIT + 1), 9)),
        ("", zlib.compress(b"\xff\xfe not utf-8")),
        ("", None),
    ]
    from_sql = _seal_reading(pairs)
    for (text, deflated), got in zip(pairs, from_sql, strict=True):
        python = stored_text(text, deflated)
        if python is None:
            assert got is None, (text, deflated)
        else:
            assert got == python.encode("utf-8"), (text, deflated)


def _recall(brain: Any, query: str) -> Any:
    now = int(time.time())
    body = build_recall_body(query=query, limit=5)
    return recall(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_RECALL, now), now)


def _save(brain: Any, text: str) -> None:
    from aimos.actions.bodies import build_save_body
    from aimos.memory.save import save
    from aimos.vocabulary import PATH_SAVE

    now = int(time.time())
    body = build_save_body(company_id="personal", value=text)
    save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now)


def test_a_recall_stores_its_decision_once_deflated_and_seals_it_as_the_text(brain: Any) -> None:
    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    receipt_id = got.receipt["receipt_id"]
    r = one(brain.conn, "SELECT * FROM recall_receipts WHERE receipt_id = ?", (receipt_id,))
    assert r is not None
    assert r["decision"] == ""
    text = stored_text(r["decision"], r["decision_deflated"])
    assert text is not None and len(r["decision_deflated"]) < len(text.encode())
    assert hashlib.sha256(text.encode()).hexdigest() == r["decision_sha256"]
    doc = receipt_document(brain.conn, receipt_id)
    assert canonical_sha256_hex(doc["decision"]) == r["decision_sha256"]
    assert doc["decision"]["selected_memory_ids"] == [x["memory_id"] for x in got.results]

    # the seal hashes the row as if the decision were stored as text (as before migration 11)
    shape = seals.sealed_tables(brain.conn)["recall_receipts"]
    assert "decision_deflated" not in [c for c, _ in shape.columns]
    (sealed,) = brain.conn.execute(shape.select() + " WHERE receipt_id = ?", (receipt_id,)).fetchall()
    as_text = tuple(
        text.encode() if c == "decision" else (v.encode() if isinstance(v, str) else v)
        for (c, _), v in zip(shape.columns, (r[c] for c, _ in shape.columns), strict=True)
    )
    assert shape.row_hash(sealed) == shape.row_hash((sealed[0], *as_text))


@pytest.mark.parametrize("forgery", ["another decision", "text beside it", "the text as before migration 11"])
def test_a_writer_cannot_store_a_decision_its_hash_does_not_name(brain: Any, forgery: str) -> None:
    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    r = one(brain.conn, "SELECT * FROM recall_receipts WHERE receipt_id = ?", (got.receipt["receipt_id"],))
    assert r is not None
    # the same row again, but for its stored decision: every other trigger's check passes (the event,
    # nonce and hashes are the receipt's own), and the UNIQUE constraints come after the triggers,
    # so the refusal is the stored form's alone
    row = dict(r)
    if forgery == "another decision":
        row["decision_deflated"] = deflate_text('{"candidates":[],"selected_memory_ids":[]}')
    elif forgery == "text beside it":
        row["decision"] = stored_text("", r["decision_deflated"])
    else:
        row["decision"], row["decision_deflated"] = stored_text("", r["decision_deflated"]), None
    cols = ", ".join(row)
    with pytest.raises(IntegrityError) as err:
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO recall_receipts ({cols}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    assert "stores its decision deflated" in err.value.message


def test_an_aimos_from_before_migration_11_still_running_cannot_insert_a_receipt(brain: Any) -> None:
    """A server started before an upgrade has every SQL function but aimos_inflate: its receipt (the
    decision as text, in the old shape its seals would hash) is refused, not sealed wrongly."""
    from aimos.store.functions import SQL_FUNCTIONS

    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    r = one(brain.conn, "SELECT * FROM recall_receipts WHERE receipt_id = ?", (got.receipt["receipt_id"],))
    assert r is not None
    row = {k: v for k, v in r.items() if k != "decision_deflated"}
    row["decision"] = stored_text("", r["decision_deflated"])
    old = apsw.Connection(str(brain.home / "brain.sqlite3"))
    try:
        for name, (fn, nargs) in SQL_FUNCTIONS.items():
            if name != "aimos_inflate":
                old.create_scalar_function(name, fn, nargs, deterministic=True)
        with pytest.raises(apsw.SQLError, match="no such function: aimos_inflate"):
            old.execute("BEGIN IMMEDIATE")
            try:
                old.execute(
                    f"INSERT INTO recall_receipts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
            finally:
                old.execute("ROLLBACK")
    finally:
        old.close()


# --- an event's signed body (migration 14) -----------------------------------------------------
BODY = '{"event_id":"e","metadata":{"evidence":[{"memory_id":"a"}],"note":"caf\u00e9"},"operation":"recall_receipt"}'


def test_the_triples_an_event_row_may_hold() -> None:
    stored = deflate_text(BODY)
    assert event_body("recall_receipt", BODY, None) == BODY  # before migration 14, or any text
    assert event_body("memory_saved", BODY, None) == BODY
    assert event_body("recall_receipt", "", stored) == BODY  # a recall's event since
    assert event_body("recall_receipt", b"", stored) == BODY
    assert event_body("memory_saved", "", stored) is None  # only a recall's event is stored deflated
    assert event_body("recall_receipt", BODY, stored) is None  # text beside the deflated bytes
    assert event_body("recall_receipt", "", b"junk") is None
    assert event_body("recall_receipt", "", zlib.compress(b"\xff\xfe not utf-8")) is None
    assert event_body("recall_receipt", None, None) is None
    # a save's event since migration 16: deflated against the dictionary, and only that
    packed = deflate_event_text(BODY)
    assert event_body("memory_saved", "", packed) == BODY
    assert event_body("memory_saved", b"", packed) == BODY
    assert event_body("memory_saved", BODY, packed) is None  # text beside the deflated bytes
    assert event_body("recall_receipt", "", packed) is None  # a recall's is plain deflate
    assert event_body("memory_occurrence_recorded", "", packed) is None  # any other stays text


def test_the_seals_read_an_event_body_as_the_python_reading_does() -> None:
    ((storage, read),) = [v for k, v in seals.STORED_FORMS.items() if k == ("events", "signed_body")]
    assert storage == "signed_body_deflated"
    stored = deflate_text(BODY)
    triples: list[tuple[Any, Any, Any]] = [
        ("recall_receipt", BODY, None),
        ("memory_saved", BODY, None),
        ("recall_receipt", "", stored),
        ("memory_saved", "", stored),
        ("recall_receipt", "x", stored),
        ("recall_receipt", "", b"junk"),
        ("recall_receipt", "", zlib.compress(b"\0" * (INFLATED_LIMIT + 1), 9)),
        ("recall_receipt", "", None),
        ("memory_saved", "", deflate_event_text(BODY)),
        ("memory_saved", "x", deflate_event_text(BODY)),
        ("recall_receipt", "", deflate_event_text(BODY)),
        ("memory_saved", "", deflate_event_text(BODY)[:-2]),
    ]
    conn = apsw.Connection(":memory:")
    register_functions(conn)
    conn.execute("CREATE TABLE t (operation TEXT, signed_body TEXT, signed_body_deflated BLOB)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", triples)
    # text that is not UTF-8 beside deflated bytes reads as nothing (never an error in the walk)
    conn.execute("INSERT INTO t VALUES ('recall_receipt', CAST(X'FF' AS TEXT), ?)", (stored,))
    from_sql = [r[0] for r in conn.execute(f"SELECT CAST(({read}) AS BLOB) FROM t ORDER BY rowid")]
    assert from_sql[-1] is None
    for triple, got in zip(triples, from_sql, strict=False):
        python = event_body(*triple)
        assert got == (None if python is None else str(python).encode("utf-8")), triple


def _recall_events(brain: Any, receipt_id: str) -> list[dict[str, Any]]:
    from aimos.store.connection import rows

    native = one(brain.conn, "SELECT event_id FROM recall_receipts WHERE receipt_id = ?", (receipt_id,))
    assert native is not None
    return rows(
        brain.conn,
        "SELECT * FROM events WHERE event_id = ? OR json_extract("
        "aimos_event_body(operation, signed_body, signed_body_deflated), '$.parent_event_id') = ?"
        " ORDER BY rowid",
        (native["event_id"], native["event_id"]),
    )


def _sealed_as_its_text(brain: Any, e: dict[str, Any], body: str) -> None:
    """The seals hash the events row ``e`` as the row holding its body ``body`` as text."""
    assert hashlib.sha256(body.encode()).hexdigest() == e["content_hash"]
    shape = seals.sealed_tables(brain.conn)["events"]
    (sealed,) = brain.conn.execute(shape.select() + " WHERE event_id = ?", (e["event_id"],)).fetchall()
    as_text = tuple(
        body.encode() if c == "signed_body" else (v.encode() if isinstance(v, str) else v)
        for (c, _), v in zip(shape.columns, (e[c] for c, _ in shape.columns), strict=True)
    )
    assert shape.row_hash(sealed) == shape.row_hash((sealed[0], *as_text))


def test_a_recall_stores_its_events_deflated_and_seals_them_as_the_text(brain: Any) -> None:
    from aimos.ledger.events import read_event

    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    events = _recall_events(brain, got.receipt["receipt_id"])
    assert len(events) == 2  # the native receipt's and its V2 child
    shape = seals.sealed_tables(brain.conn)["events"]
    assert "signed_body_deflated" not in [c for c, _ in shape.columns]
    for e in events:
        assert e["signed_body"] == "" and e["signed_body_deflated"] is not None
        body = read_event(e)["signed_body"]
        assert isinstance(body, str) and len(e["signed_body_deflated"]) < len(body.encode())
        _sealed_as_its_text(brain, e, body)
    # every other event is stored as text
    assert one(
        brain.conn,
        "SELECT COUNT(*) AS n FROM events WHERE operation NOT IN ('recall_receipt', 'memory_saved')"
        " AND signed_body_deflated IS NOT NULL",
    ) == {"n": 0}
    doc = receipt_document(brain.conn, got.receipt["receipt_id"])
    assert doc["event"]["signed_body"] == read_event(events[0])["signed_body"]


@pytest.mark.parametrize(
    "forgery",
    ["another body", "text beside it", "the text as before migration 14", "another operation deflated"],
)
def test_a_writer_cannot_store_an_event_body_in_another_form(brain: Any, forgery: str) -> None:
    from aimos.ledger.events import read_event

    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    if forgery == "another operation deflated":
        saved = one(
            brain.conn,
            "SELECT * FROM events WHERE operation NOT IN ('recall_receipt', 'memory_saved')"
            " ORDER BY rowid DESC LIMIT 1",
        )
        assert saved is not None and saved["signed_body_deflated"] is None
        row = dict(saved)
        row["signed_body"], row["signed_body_deflated"] = "", deflate_text(saved["signed_body"])
    else:
        (native, _) = _recall_events(brain, got.receipt["receipt_id"])
        row = dict(native)
        body = read_event(native)["signed_body"]
        if forgery == "another body":
            row["signed_body_deflated"] = deflate_text(body.replace('"abstained":false', '"abstained":true'))
        elif forgery == "text beside it":
            row["signed_body"] = body
        else:
            row["signed_body"], row["signed_body_deflated"] = body, None
    # the same row again but for its stored body: the form check is the newest trigger's first
    # statement (it fires before the chain's checks), and the body check follows it
    cols = ", ".join(row)
    with pytest.raises(IntegrityError) as err:
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO events ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
            )
    expected = "content hash does not match" if forgery == "another body" else "stores its body deflated"
    assert expected in err.value.message


# --- a save's event deflated against the dictionary (migration 16) ------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        zlib.compress(BODY.encode()),  # plain deflate: names no dictionary
        (lambda p: p.compress(BODY.encode()) + p.flush())(zlib.compressobj(zdict=b'"operation":"x"')),
        deflate_event_text(BODY)[:-3],
        deflate_event_text(BODY) + b"x",
        (lambda p: p.compress(b"\0" * (INFLATED_LIMIT + 1)) + p.flush())(
            zlib.compressobj(9, zdict=EVENT_DICTIONARY_V1)
        ),
        b"\x78\xbb",
        BODY,
    ],
    ids=["no-dictionary", "another-dictionary", "truncated", "trailing", "bomb", "header-only", "text"],
)
def test_only_a_whole_stream_against_the_dictionary_reads(data: Any) -> None:
    assert inflate_event_text(data) is None
    assert event_body("memory_saved", "", data) is None


def test_a_save_stores_its_event_once_against_the_dictionary_and_seals_it_as_the_text(brain: Any) -> None:
    from aimos.ledger.events import read_event

    _save(brain, "the boiler is serviced every october by dana")
    e = one(brain.conn, "SELECT * FROM events WHERE operation = 'memory_saved' ORDER BY rowid DESC LIMIT 1")
    assert e is not None and e["signed_body"] == "" and e["signed_body_deflated"] is not None
    body = read_event(e)["signed_body"]
    assert isinstance(body, str) and len(e["signed_body_deflated"]) * 2 < len(body.encode())
    _sealed_as_its_text(brain, e, body)
    # the memory's disclosure check reads the body it signed
    from aimos.recall.disclosure import verify_many

    memory = one(
        brain.conn,
        "SELECT * FROM memories WHERE save_mutation_hash = ?",
        (json.loads(body)["metadata"]["save_mutation_hash"],),
    )
    assert memory is not None
    assert [d.memory_id for d in verify_many(brain.conn, [memory], allow_superseded=False)] == [
        memory["memory_id"]
    ]


@pytest.mark.parametrize("forgery", ["as text", "plain deflate", "another body"])
def test_a_writer_cannot_store_a_save_event_in_another_form(brain: Any, forgery: str) -> None:
    from aimos.ledger.events import read_event

    _save(brain, "the boiler is serviced every october by dana")
    saved = one(
        brain.conn, "SELECT * FROM events WHERE operation = 'memory_saved' ORDER BY rowid DESC LIMIT 1"
    )
    assert saved is not None
    row, body = dict(saved), read_event(saved)["signed_body"]
    if forgery == "as text":
        row["signed_body"], row["signed_body_deflated"] = body, None
    elif forgery == "plain deflate":
        row["signed_body_deflated"] = deflate_text(body)
    else:
        row["signed_body_deflated"] = deflate_event_text(
            body.replace('"retained_quarantine":false', '"retained_quarantine":true')
        )
    with pytest.raises(IntegrityError) as err:
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO events ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    expected = "stores its body deflated" if forgery == "as text" else "not canonical JSON"
    if forgery == "another body":
        expected = "content hash does not match"
    assert expected in err.value.message


# --- an outcome's events deflated against the second dictionary (migration 17) ----------------------
OUTCOME_EVENTS = ("mutation_outcome_evidence_v2", "cognitive_weight_adjusted")


def _outcome(brain: Any) -> list[dict[str, Any]]:
    """A save, a recall disclosing it and a good outcome about it: the outcome's two events."""
    from aimos.actions.bodies import build_outcome_body
    from aimos.learning.outcomes import record_outcome
    from aimos.store.connection import rows
    from aimos.vocabulary import PATH_OUTCOME

    _save(brain, "the boiler is serviced every october by dana")
    got = _recall(brain, "boiler service")
    body = build_outcome_body(
        memory_id=got.results[0]["memory_id"], receipt_id=got.receipt["receipt_id"], outcome="good"
    )
    now = int(time.time())
    request = sign_request(brain.agent, body, PATH_OUTCOME, now)
    done = record_outcome(brain.conn, brain.housekeeper, request, now)
    assert done.terminal == "authorized_transition"
    return rows(brain.conn, f"SELECT * FROM events WHERE operation IN {OUTCOME_EVENTS} ORDER BY rowid")


def test_an_outcome_stores_its_events_against_the_second_dictionary_and_seals_them_as_the_text(
    brain: Any,
) -> None:
    from aimos.ledger.events import read_event

    events = _outcome(brain)
    assert [e["operation"] for e in events] == list(OUTCOME_EVENTS)
    for e in events:
        assert e["signed_body"] == "" and e["signed_body_deflated"][2:6] == zlib.adler32(
            EVENT_DICTIONARY_V2
        ).to_bytes(4, "big")
        body = read_event(e)["signed_body"]
        assert isinstance(body, str) and len(e["signed_body_deflated"]) * 2 < len(body.encode())
        _sealed_as_its_text(brain, e, body)
    # the outcome's export reads the bodies it signed
    from aimos.learning.outcome_export import build_outcome_export

    outcome_id = json.loads(read_event(events[0])["signed_body"])["metadata"]["outcome_id"]
    bundle, _, _ = build_outcome_export(brain.conn, outcome_id)
    terminal = json.loads(read_event(events[1])["signed_body"])["metadata"]
    assert terminal["valence_row_hash"] in json.dumps(bundle)


@pytest.mark.parametrize("forgery", ["as text", "the save's dictionary", "another body"])
def test_a_writer_cannot_store_an_outcome_event_in_another_form(brain: Any, forgery: str) -> None:
    from aimos.ledger.events import read_event

    evidence = _outcome(brain)[0]
    row, body = dict(evidence), read_event(evidence)["signed_body"]
    if forgery == "as text":
        row["signed_body"], row["signed_body_deflated"] = body, None
    elif forgery == "the save's dictionary":
        row["signed_body_deflated"] = deflate_event_text(body)
    else:
        row["signed_body_deflated"] = deflate_event_text(
            body.replace('"reward_sign":1', '"reward_sign":-1'), EVENT_DICTIONARY_V2
        )
    with pytest.raises(IntegrityError) as err:
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO events ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    expected = {
        "as text": "stores its body deflated",
        "the save's dictionary": "not canonical JSON",
        "another body": "content hash does not match",
    }[forgery]
    assert expected in err.value.message


# --- a REWEIGHT node's body stored compactly (migration 18) -----------------------------------------
MID = "8df5d824-7682-466a-982c-36e5037fc5fa"
REWEIGHT = (
    '{"company_id":"personal","event_type":"REWEIGHT","governor_flag":"SIGNED_VALENCE_REFERENCE_POINT",'
    f'"judge_valence":0.761594,"memory_id":"{MID}","new_weight":1.165,"new_weight_milli":1165,'
    '"old_weight":1,"old_weight_milli":1000,"outcome_id":"39f67cfc-7959-42d0-86b9-85208577065e",'
    '"reason":"outcome_evidence","ts_signed":1796560788,"valence_row_hash":"' + "ab" * 32 + '",'
    '"valence_rule":"aimos.valence-rule/v2"}'
)


def test_the_rows_a_provenance_node_may_hold() -> None:
    packed = compact_provenance_body(REWEIGHT, MID)
    assert MID.encode() not in zlib.decompressobj(zdict=PROVENANCE_DICTIONARY_V1).decompress(packed)
    assert len(packed) * 3 < len(REWEIGHT)
    assert provenance_body("REWEIGHT", MID, "", packed) == REWEIGHT  # since migration 18
    assert provenance_body("REWEIGHT", MID, b"", packed) == REWEIGHT
    assert provenance_body("REWEIGHT", MID, REWEIGHT, None) == REWEIGHT  # before it
    assert provenance_body("SAVE", MID, REWEIGHT, None) == REWEIGHT  # a save's body stays text
    other = "0" * 8 + MID[8:]
    assert provenance_body("REWEIGHT", other, "", packed) == REWEIGHT.replace(MID, other)  # the row's id
    assert provenance_body("SAVE", MID, "", packed) is None  # only a REWEIGHT node is compact
    assert provenance_body("REWEIGHT", MID, REWEIGHT, packed) is None  # text beside the bytes
    assert provenance_body("REWEIGHT", None, "", packed) is None
    assert provenance_body("REWEIGHT", MID, "", deflate_event_text(REWEIGHT, EVENT_DICTIONARY_V2)) is None
    assert (
        provenance_body("REWEIGHT", MID, "", deflate_event_text(REWEIGHT, PROVENANCE_DICTIONARY_V1)) is None
    )
    assert provenance_body("REWEIGHT", MID, "", packed[:-2]) is None
    assert provenance_body("REWEIGHT", MID, None, None) is None
    with pytest.raises(ValueError):
        compact_provenance_body(REWEIGHT, other)  # a body that does not name the row's memory


def test_the_seals_read_a_provenance_body_as_the_python_reading_does() -> None:
    ((storage, read),) = [v for k, v in seals.STORED_FORMS.items() if k == ("memory_provenance", "body_json")]
    assert storage == "body_deflated"
    packed = compact_provenance_body(REWEIGHT, MID)
    quads: list[tuple[Any, Any, Any, Any]] = [
        ("REWEIGHT", MID, REWEIGHT, None),
        ("SAVE", MID, REWEIGHT, None),
        ("REWEIGHT", MID, "", packed),
        ("REWEIGHT", "x", "", packed),
        ("SAVE", MID, "", packed),
        ("REWEIGHT", MID, "x", packed),
        ("REWEIGHT", MID, "", b"junk"),
        ("REWEIGHT", MID, "", deflate_event_text(REWEIGHT, PROVENANCE_DICTIONARY_V1)),
        ("REWEIGHT", MID, "", packed[:-2]),
    ]
    conn = apsw.Connection(":memory:")
    register_functions(conn)
    conn.execute("CREATE TABLE t (event_type TEXT, memory_id TEXT, body_json TEXT, body_deflated BLOB)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", quads)
    from_sql = [r[0] for r in conn.execute(f"SELECT CAST(({read}) AS BLOB) FROM t ORDER BY rowid")]
    for quad, got in zip(quads, from_sql, strict=True):
        python = provenance_body(*quad)
        assert got == (None if python is None else str(python).encode("utf-8")), quad


def _reweight(brain: Any) -> dict[str, Any]:
    _outcome(brain)
    node = one(brain.conn, "SELECT * FROM memory_provenance WHERE event_type = 'REWEIGHT'")
    assert node is not None
    return node


def test_a_transition_stores_its_reweight_body_compact_and_seals_it_as_the_text(brain: Any) -> None:
    from aimos.ledger.events import read_provenance

    node = _reweight(brain)
    body = read_provenance(node)["body_json"]
    assert node["body_json"] == "" and isinstance(body, str) and len(node["body_deflated"]) * 3 < len(body)
    assert json.loads(body)["memory_id"] == node["memory_id"]
    assert hashlib.sha256(body.encode()).hexdigest() == node["content_hash"]
    shape = seals.sealed_tables(brain.conn)["memory_provenance"]
    (sealed,) = brain.conn.execute(shape.select() + " WHERE provenance_id = ?", (node["provenance_id"],))
    as_text = tuple(
        body.encode() if c == "body_json" else (v.encode() if isinstance(v, str) else v)
        for c, v in ((c, node[c]) for c, _ in shape.columns)
    )
    assert shape.row_hash(sealed) == shape.row_hash((sealed[0], *as_text))
    # the weight chain and the outcome's export read the body it signed
    from aimos.verify.brain.evidence import export_cognitive
    from aimos.verify.chains.weights import chain_reasons

    memory = the_row(brain.conn, "SELECT * FROM memories WHERE memory_id = ?", (node["memory_id"],))
    assert chain_reasons(brain.conn, [memory])[node["memory_id"]] == (None, 1, 1)
    exported = export_cognitive(brain.conn, memory_id=node["memory_id"])
    assert json.dumps(json.loads(body), sort_keys=True) in json.dumps(exported, sort_keys=True)


@pytest.mark.parametrize("forgery", ["as text", "another dictionary", "another body", "another memory"])
def test_a_writer_cannot_store_a_reweight_body_in_another_form(brain: Any, forgery: str) -> None:
    from aimos.ledger.events import read_provenance

    node = _reweight(brain)
    row, body = dict(node), str(read_provenance(node)["body_json"])
    row["provenance_id"] = str(uuid.uuid4())
    if forgery == "as text":
        row["body_json"], row["body_deflated"] = body, None
    elif forgery == "another dictionary":
        row["body_deflated"] = deflate_event_text(body, EVENT_DICTIONARY_V2)
    elif forgery == "another body":
        row["body_deflated"] = compact_provenance_body(
            body.replace('"reason":"outcome', '"reason":"xoutcome'), row["memory_id"]
        )
    else:
        other = _save_id(brain)
        row["memory_id"] = other  # the same bytes read as a body naming another memory
    with pytest.raises(IntegrityError) as err:
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO memory_provenance ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    expected = "stores its body deflated" if forgery == "as text" else "REWEIGHT body is not canonical"
    assert expected in err.value.message


def _save_id(brain: Any) -> str:
    _save(brain, "the gutters are cleared every november")
    got = one(brain.conn, "SELECT memory_id FROM memories ORDER BY rowid DESC LIMIT 1")
    assert got is not None
    return str(got["memory_id"])
