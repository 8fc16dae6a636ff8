"""V2 recall checks 1-2: the envelope commitment (fields, format, object order and ordinals,
the object root and the bundle hash) and every object's schema."""

from __future__ import annotations

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.merkle import merkle_root
from aimos.errors import AimosError
from aimos.verify.kit import (
    is_dict,
    is_int,
    is_text,
    is_uuid,
    same,
    utf16_units,
)
from aimos.verify.v2.recall_profile import (
    ENVELOPE_COMMITMENT_INVALID,
    ENVELOPE_FIELDS,
    FORMAT,
    MAX_BODY_BYTES,
    MAX_RESULTS,
    MAX_TEXT_UNITS,
    OBJECT_FIELDS,
    OBJECT_ROOT_FIELDS,
    OBJECT_SCHEMA_INVALID,
    OBJECT_SCHEMAS,
    RESULT_KINDS,
    RESULT_OBJECT_COUNT,
    SINGLETON_COUNT,
    SINGLETON_KINDS,
    object_where,
)
from aimos.verify.v2.recall_run import RecallRun


# -- 1. ENVELOPE_COMMITMENT_INVALID --
def check_envelope(run: RecallRun, bundle: object) -> None:
    run.at(ENVELOPE_COMMITMENT_INVALID)
    if not is_dict(bundle):
        run.fail(f"the bundle is a {type(bundle).__name__}, not a JSON object")
    keys = set(bundle)
    if keys != ENVELOPE_FIELDS:
        missing = sorted(ENVELOPE_FIELDS - keys)
        extra = sorted(repr(k) for k in keys - ENVELOPE_FIELDS)
        run.fail(f"envelope fields differ: missing {missing}, unexpected {extra}")
    run.bundle = bundle
    run.need(same(bundle["format"], FORMAT), "format is not the recall_disclosure v2 format object")
    for field in ("bundle_id", "company_id"):
        value = bundle[field]
        run.need(
            is_text(value) and utf16_units(value) <= MAX_TEXT_UNITS,
            f"{field} must be a string of 1..{MAX_TEXT_UNITS} characters",
        )
    run.company = bundle["company_id"]
    run.fingerprint = run.hex64(bundle["expected_master_fingerprint"], "expected_master_fingerprint")
    count = bundle["result_count"]
    run.need(is_int(count) and 0 <= count <= MAX_RESULTS, f"result_count must be an integer 0..{MAX_RESULTS}")
    run.count = count
    expected_objects = SINGLETON_COUNT + RESULT_OBJECT_COUNT * count
    object_count = bundle["object_count"]
    run.need(
        is_int(object_count) and object_count == expected_objects,
        f"object_count must be 13 + 5 * result_count = {expected_objects}",
    )
    objects = bundle["objects"]
    run.need(isinstance(objects, list), "objects is not an array")
    run.need(
        len(objects) == expected_objects,
        f"objects holds {len(objects)} objects, 13 + 5 * result_count = {expected_objects} expected",
    )
    seen: dict[tuple[str, int | None], int] = {}
    subjects: dict[int, str] = {}
    for position, obj in enumerate(objects):
        run.where = object_where(position)
        key = check_envelope_object(run, obj, position, subjects)
        if key in seen:
            run.fail(f"duplicate object: {key[0]} already at objects[{seen[key]}]")
        seen[key] = position
    run.where = None
    canonical = [(kind, None) for kind in SINGLETON_KINDS] + [
        (kind, r) for r in range(count) for kind in RESULT_KINDS
    ]
    absent = [k for k in canonical if k not in seen]
    if absent:
        kind, result = absent[0]
        run.fail(f"object {kind}" + ("" if result is None else f" of result {result}") + " is missing")
    run.results = [{} for _ in range(count)]
    for position, (obj, (kind, result)) in enumerate(zip(objects, canonical, strict=True)):
        run.where = object_where(position)
        run.need(
            obj["kind"] == kind and obj["result_ordinal"] == result,
            f"objects are not in canonical order: {kind} expected at position {position}",
        )
        run.need(is_int(obj["ordinal"]) and obj["ordinal"] == position, f"ordinal must be {position}")
        if result is None:
            run.singletons[kind] = obj["body"]
        else:
            run.results[result][kind] = obj
    run.where = None
    root = merkle_root([{f: obj[f] for f in OBJECT_ROOT_FIELDS} for obj in objects])
    run.need(bundle["object_root_sha256"] == root.hex(), "object_root_sha256 does not recompute")
    bundle_hash = commitments.v2_bundle_hash(
        bundle["bundle_id"], run.company, bytes.fromhex(run.fingerprint), count, root
    )
    run.need(bundle["bundle_sha256"] == bundle_hash.hex(), "bundle_sha256 does not recompute")


def check_envelope_object(
    run: RecallRun, obj: object, position: int, subjects: dict[int, str]
) -> tuple[str, int | None]:
    run.need(is_dict(obj), "object is not a JSON object")
    assert isinstance(obj, dict)
    keys = set(obj)
    if keys != OBJECT_FIELDS:
        missing = sorted(OBJECT_FIELDS - keys)
        extra = sorted(repr(k) for k in keys - OBJECT_FIELDS)
        run.fail(f"object fields differ: missing {missing}, unexpected {extra}")
    kind = obj["kind"]
    run.need(isinstance(kind, str) and kind in OBJECT_SCHEMAS, f"unknown object kind {kind!r:.60}")
    schema = obj["schema"]
    run.need(
        is_text(schema) and utf16_units(schema) <= MAX_TEXT_UNITS,
        f"{kind}: schema must be a string of 1..{MAX_TEXT_UNITS} characters",
    )
    body = obj["body"]
    run.need(is_dict(body), f"{kind}: body is not a JSON object")
    run.need(same(body.get("schema"), schema), f"{kind}: body.schema differs from the object schema")
    result: int | None
    if kind in SINGLETON_KINDS:
        run.need(
            obj["subject_id"] is None and obj["result_ordinal"] is None,
            f"{kind} is a singleton: subject_id and result_ordinal must be null",
        )
        result = None
    else:
        result = obj["result_ordinal"]
        run.need(
            is_int(result) and 0 <= result < run.count,
            f"{kind}: result_ordinal must be an integer 0..result_count-1",
        )
        assert isinstance(result, int)
        subject = obj["subject_id"]
        run.need(is_uuid(subject, rfc4122=True), f"{kind}: subject_id is not a lowercase memory UUID")
        prior = subjects.setdefault(result, subject)
        run.need(prior == subject, f"{kind}: subject_id differs from result {result}'s other objects")
    try:
        body_bytes = canonical_json(body)
    except AimosError as exc:
        run.fail(f"{kind}: body is not canonical JSON ({exc.reason or exc.message})")
    run.need(
        len(body_bytes) <= MAX_BODY_BYTES,
        f"{kind}: body is {len(body_bytes)} canonical bytes, more than {MAX_BODY_BYTES}",
    )
    digest = commitments.v2_object_hash(kind, schema, body)
    run.need(obj["body_sha256"] == digest.hex(), f"{kind}: body_sha256 does not recompute")
    return kind, result


# -- 2. OBJECT_SCHEMA_INVALID --
def check_schemas(run: RecallRun) -> None:
    for position, obj in enumerate(run.bundle["objects"]):
        run.at(OBJECT_SCHEMA_INVALID, object_where(position))
        kind = obj["kind"]
        run.need(
            obj["schema"] == OBJECT_SCHEMAS[kind] and same(obj["body"].get("schema"), obj["schema"]),
            f"{kind}: schema must be {OBJECT_SCHEMAS[kind]}",
        )


# -- 3..20: trust anchor, identities, revocations, grant, request, receipt --
