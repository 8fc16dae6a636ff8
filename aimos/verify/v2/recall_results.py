"""V2 recall checks 21-32: the seven decision hashes and their bindings, the return projection,
and every result's five objects (including the occurrence v3 commitment)."""

from __future__ import annotations

from typing import Any

from aimos.crypto import commitments
from aimos.errors import AimosError
from aimos.verify import kit
from aimos.verify.v2.recall_profile import (
    CONTENT_STATE_BINDING_INVALID,
    DECISION_HASH_MALFORMED,
    EPISTEMIC_BINDING_INVALID,
    EPISTEMIC_PROJECTION_BINDING_INVALID,
    OBJECT_SCHEMA_INVALID,
    OCCURRENCE_BINDING_INVALID,
    OCCURRENCE_NATIVE_BODY_INVALID,
    PROVENANCE_BINDING_INVALID,
    RECEIPT_EVIDENCE_BINDING_INVALID,
    RESULT_CARDINALITY_INVALID,
    RESULT_IDENTITY_BINDING_INVALID,
    RETURN_PATHS,
    RETURN_PROJECTION_BINDING_INVALID,
    SECURITY_CLOSURE_BINDING_INVALID,
    result_object_ordinal,
    singleton_where,
)
from aimos.verify.v2.recall_run import RecallRun
from aimos.vocabulary import OCCURRENCE_LEGACY_SCHEMA as OCCURRENCE_LEGACY_SCHEMA
from aimos.vocabulary import OCCURRENCE_V3_SCHEMA as OCCURRENCE_V3_SCHEMA
from aimos.vocabulary import V2_CONTENT_KERNEL_SCHEMA as CONTENT_KERNEL_SCHEMA
from aimos.vocabulary import V2_NATIVE_RECALL_RECEIPT_SCHEMA as NATIVE_RECEIPT_SCHEMA
from aimos.vocabulary import V2_SECURITY_CLOSURE_SCHEMA as SECURITY_CLOSURE_SCHEMA


# -- 21..25: decisions and the return projection --
def check_decisions(run: RecallRun) -> None:
    content, epistemic, security, projection, native = run.bodies(
        "content_state_projection epistemic_recall_decision final_security_closure "
        "return_projection native_recall_receipt"
    )
    selection, state_root, occurrence_root = _decision_hashes(run, content, epistemic, security, projection)
    _bind_decisions(run, selection, state_root, occurrence_root)
    _check_return_projection(run, epistemic, security, projection, native)


def _decision_hashes(
    run: RecallRun,
    content: dict[str, Any],
    epistemic: dict[str, Any],
    security: dict[str, Any],
    projection: dict[str, Any],
) -> tuple[str, str, str]:
    """The seven decision hashes, each 64 lowercase hex; the run keeps the epistemic and security
    ones. The return-selection hash and the state and occurrence view roots."""
    run.at(DECISION_HASH_MALFORMED)
    hashes: dict[str, str] = {}
    for kind, body, field in (
        ("content_state_projection", content, "admission_decision_sha256"),
        ("content_state_projection", content, "return_selection_decision_sha256"),
        ("content_state_projection", content, "state_view_root_sha256"),
        ("content_state_projection", content, "occurrence_view_root_sha256"),
        ("epistemic_recall_decision", epistemic, "decision_sha256"),
        ("final_security_closure", security, "decision_sha256"),
        ("return_projection", projection, "decision_sha256"),
    ):
        run.where = singleton_where(kind)
        hashes[f"{kind}.{field}"] = run.hex64(body.get(field), f"{kind} {field}")
    selection = hashes["content_state_projection.return_selection_decision_sha256"]
    state_root = hashes["content_state_projection.state_view_root_sha256"]
    occurrence_root = hashes["content_state_projection.occurrence_view_root_sha256"]
    run.epistemic_hash = hashes["epistemic_recall_decision.decision_sha256"]
    run.security_hash = hashes["final_security_closure.decision_sha256"]
    return selection, state_root, occurrence_root


def _bind_decisions(run: RecallRun, selection: str, state_root: str, occurrence_root: str) -> None:
    """The decisions bound to each other: their schemas, the content state's selection and view
    roots, the epistemic and the security decision hashes where the other objects name them."""
    views = "security closure state/occurrence view roots differ from the content projection's"
    epistemic_differs = "epistemic_decision_sha256 differs from the epistemic decision"
    security_differs = "final_security_closure_sha256 differs from the security decision"
    run.bind(
        (
            (
                OBJECT_SCHEMA_INVALID,
                "content_state_projection",
                "native_decision_schema",
                CONTENT_KERNEL_SCHEMA,
                f"content_state_projection native_decision_schema must be {CONTENT_KERNEL_SCHEMA}",
            ),
            (
                OBJECT_SCHEMA_INVALID,
                "final_security_closure",
                "native_decision_schema",
                SECURITY_CLOSURE_SCHEMA,
                f"final_security_closure native_decision_schema must be {SECURITY_CLOSURE_SCHEMA}",
            ),
            (
                CONTENT_STATE_BINDING_INVALID,
                "return_projection",
                "content_state_selection_sha256",
                selection,
                "return projection content_state_selection_sha256 differs from the return-selection decision",
            ),
            (
                CONTENT_STATE_BINDING_INVALID,
                "final_security_closure",
                "state_view_root_sha256",
                state_root,
                views,
            ),
            (
                CONTENT_STATE_BINDING_INVALID,
                "final_security_closure",
                "occurrence_view_root_sha256",
                occurrence_root,
                views,
            ),
            (
                EPISTEMIC_BINDING_INVALID,
                "final_security_closure",
                "epistemic_decision_sha256",
                run.epistemic_hash,
                f"security closure {epistemic_differs}",
            ),
            (
                EPISTEMIC_BINDING_INVALID,
                "native_recall_receipt",
                "epistemic_decision_sha256",
                run.epistemic_hash,
                f"native receipt {epistemic_differs}",
            ),
            (
                SECURITY_CLOSURE_BINDING_INVALID,
                "return_projection",
                "final_security_closure_sha256",
                run.security_hash,
                f"return projection {security_differs}",
            ),
            (
                SECURITY_CLOSURE_BINDING_INVALID,
                "native_recall_receipt",
                "canary_final_security_closure_sha256",
                run.security_hash,
                f"native receipt canary_{security_differs}",
            ),
        )
    )


def _check_return_projection(
    run: RecallRun,
    epistemic: dict[str, Any],
    security: dict[str, Any],
    projection: dict[str, Any],
    native: dict[str, Any],
) -> None:
    """The return projection: its memory lists, return path and flags, and the native receipt's copy."""
    run.at(RETURN_PROJECTION_BINDING_INVALID, singleton_where("return_projection"))
    run.need(
        isinstance(epistemic.get("selected_memory_ids"), list)
        and isinstance(security.get("selected_clean_memory_ids"), list)
        and isinstance(projection.get("projected_memory_ids"), list)
        and isinstance(projection.get("projected_live_content_hashes"), list),
        "selected / projected memory lists must be arrays",
    )
    return_path = projection.get("return_path")
    run.need(
        isinstance(return_path, str) and return_path in RETURN_PATHS,
        "return_path is not an allowed return path",
    )
    run.need(security.get("return_path") == return_path, "security closure return_path differs")
    run.need(
        projection.get("ordered_unique_subset_of_final_clean_security_closure") is True
        and projection.get("output_content_commitments_unchanged") is True
        and projection.get("canonical_memory_mutated") is False
        and projection.get("retention_changed") is False,
        "return projection flags are not (true, true, false, false)",
    )
    run.where = singleton_where("native_recall_receipt")
    run.need(
        native.get("return_projection_event_body_bound") is True,
        "native receipt return_projection_event_body_bound is not true",
    )
    run.need(
        kit.same(native.get("return_projection"), projection),
        "native receipt return_projection differs from the return projection object",
    )


# -- 26..32: results --
def check_result_objects(run: RecallRun) -> None:
    native, projection, epistemic, security, content = run.bodies(
        "native_recall_receipt return_projection epistemic_recall_decision final_security_closure "
        "content_state_projection"
    )
    count = run.count

    run.at(RESULT_CARDINALITY_INVALID, singleton_where("native_recall_receipt"))
    run.need(native.get("merkle_schema") == NATIVE_RECEIPT_SCHEMA, "native receipt merkle_schema is wrong")
    run.need(
        kit.is_int(native.get("result_count"), count, count),
        "native receipt result_count differs from the bundle's",
    )
    evidence = native.get("evidence")
    run.need(
        isinstance(evidence, list) and len(evidence) == count,
        "native receipt evidence does not hold result_count entries",
    )
    assert isinstance(evidence, list)
    run.where = singleton_where("return_projection")
    projected_ids: list[Any] = projection["projected_memory_ids"]
    projected_hashes: list[Any] = projection["projected_live_content_hashes"]
    selected_clean: list[Any] = security["selected_clean_memory_ids"]
    selected: list[Any] = epistemic["selected_memory_ids"]
    run.need(
        kit.is_int(projection.get("projected_output_count"), count, count)
        and len(projected_ids) == count
        and len(projected_hashes) == count,
        "return projection does not project result_count memories",
    )

    refs = content.get("selected_occurrence_refs")
    for r, group in enumerate(run.results):
        memory_obj = group["memory_state"]
        memory = memory_obj["body"]
        provenance = group["provenance_chain"]["body"]
        occurrence = group["occurrence"]["body"]
        projected = group["epistemic_projection"]["body"]
        entry = group["receipt_evidence"]["body"]
        where = f"result {r}"
        first = result_object_ordinal(r, "memory_state")

        run.at(RESULT_IDENTITY_BINDING_INVALID, where)
        memory_id = memory.get("memory_id")
        live = run.hex64(memory.get("live_content_hash"), f"result {r} memory_state live_content_hash")
        run.need(
            kit.is_uuid(memory_id, rfc4122=True), f"objects[{first}] memory_id is not a lowercase memory UUID"
        )
        run.need(memory_obj["subject_id"] == memory_id, f"objects[{first}] memory_id differs from subject_id")
        for kind, body, hash_field in (
            ("provenance_chain", provenance, "live_content_hash"),
            ("occurrence", occurrence, "live_content_hash_hex"),
            ("epistemic_projection", projected, "live_content_hash"),
            ("receipt_evidence", entry, "live_content_hash"),
        ):
            ordinal = result_object_ordinal(r, kind)
            run.need(body.get("memory_id") == memory_id, f"objects[{ordinal}] {kind} memory_id differs")
            run.need(body.get(hash_field) == live, f"objects[{ordinal}] {kind} {hash_field} differs")

        run.at(PROVENANCE_BINDING_INVALID, where)
        for field in ("save_mutation_hash", "binding_mutation_hash"):
            value = run.hex64(provenance.get(field), f"provenance {field}")
            run.need(entry.get(field) == value, f"receipt evidence {field} differs from the provenance's")

        run.at(OCCURRENCE_BINDING_INVALID, where)
        occurrence_ref = run.hex64(occurrence.get("occurrence_ref"), "occurrence_ref")
        run.need(
            entry.get("occurrence_ref") == occurrence_ref,
            "receipt evidence occurrence_ref differs from the occurrence's",
        )

        run.at(OCCURRENCE_NATIVE_BODY_INVALID, where)
        check_occurrence(run, occurrence, memory_id, live, occurrence_ref)

        run.at(EPISTEMIC_PROJECTION_BINDING_INVALID, where)
        run.need(
            projected.get("decision_sha256") == run.epistemic_hash,
            "epistemic projection decision_sha256 differs from the epistemic decision",
        )
        run.need(memory_id in selected, "the memory is not in the epistemic selected_memory_ids")

        run.at(RECEIPT_EVIDENCE_BINDING_INVALID, where)
        run.need(kit.is_int(entry.get("ordinal"), r, r), f"receipt evidence ordinal must be {r}")
        stripped = {k: v for k, v in entry.items() if k != "schema"}
        run.need(kit.same(stripped, evidence[r]), f"receipt evidence differs from native evidence[{r}]")

        run.at(RETURN_PROJECTION_BINDING_INVALID, where)
        run.need(
            projected_ids[r] == memory_id and projected_hashes[r] == live,
            f"projected_memory_ids[{r}] / projected_live_content_hashes[{r}] differ from the result",
        )
        run.need(
            r < len(selected_clean) and selected_clean[r] == memory_id,
            f"selected_clean_memory_ids[{r}] differs from the result",
        )

        run.at(CONTENT_STATE_BINDING_INVALID, where)
        run.need(
            isinstance(refs, list) and occurrence_ref in refs,
            "the occurrence_ref is not in selected_occurrence_refs",
        )
        run.evidence.append(stripped)

    run.at(RETURN_PROJECTION_BINDING_INVALID, singleton_where("return_projection"))
    run.need(
        kit.same(selected, projected_ids) and kit.same(selected_clean, projected_ids),
        "epistemic selected / security selected-clean lists differ from projected_memory_ids",
    )


def check_occurrence(
    run: RecallRun, occurrence: dict[str, Any], memory_id: str, live: str, occurrence_ref: str
) -> None:
    form = occurrence.get("occurrence_form")
    native = occurrence.get("native_body")
    if form == "v3":
        run.need(occurrence.get("native_schema") == OCCURRENCE_V3_SCHEMA, "v3 native_schema is wrong")
        run.need(kit.is_dict(native), "native_body is not an object")
        assert isinstance(native, dict)
        commitment = check_occurrence_commitment(run, native)
        run.need(
            native.get("schema") == OCCURRENCE_V3_SCHEMA
            and native.get("memory_id") == memory_id
            and native.get("live_content_hash_hex") == live,
            "native_body schema, memory or live hash differs from the result",
        )
        run.need(
            native.get("occurrence_commitment") == occurrence_ref and commitment.hex() == occurrence_ref,
            "the occurrence v3 commitment does not recompute to occurrence_ref",
        )
        run.need(
            kit.is_text(occurrence.get("signature_b64u"))
            and kit.is_text(occurrence.get("signer_certificate")),
            "a v3 occurrence needs a signature and a signer certificate",
        )
        run.commitments.append(commitment)
    elif form == "legacy_v1":
        run.need(
            occurrence.get("native_schema") == OCCURRENCE_LEGACY_SCHEMA,
            "legacy_v1 native_schema is wrong",
        )
        run.need(
            kit.is_dict(native) and native.get("memory_id") == memory_id,
            "legacy native_body memory_id differs from the result",
        )
        run.commitments.append(b"")
    else:
        run.fail("occurrence_form is neither v3 nor legacy_v1")


def check_occurrence_commitment(run: RecallRun, native: dict[str, Any]) -> bytes:
    """Recompute `hom.aimos.memory-occurrence/v3` from native_body, after checking every field."""

    def flag(name: str, value_name: str, valid: bool) -> bool:
        present = native.get(name)
        run.need(kit.is_int(present) and present in (0, 1), f"native_body {name} must be 0 or 1")
        if present == 0:
            run.need(native.get(value_name) in (None, ""), f"native_body {value_name} must be empty")
            return False
        run.need(valid, f"native_body {value_name} is malformed")
        return True

    def upper(name: str, *, empty: bool = False) -> str:
        value = native.get(name)
        run.need(
            isinstance(value, str) and (empty or value != "") and value == value.upper(),
            f"native_body {name} must be an upper-case string",
        )
        assert isinstance(value, str)
        return value

    for name in ("company_id", "agent_id"):
        run.need(kit.is_text(native.get(name)), f"native_body {name} must be a non-empty string")
    for name in ("occurrence_event_id", "memory_id"):
        value = native.get(name)
        run.need(
            kit.is_uuid(value),
            f"native_body {name} is not a lowercase UUID",
        )
    for name in ("live_content_hash_hex", "cert_fingerprint_hex", "request_body_hash_hex"):
        run.hex64(native.get(name), f"native_body {name}")
    event_type = upper("event_type")
    identity_tier = upper("identity_tier")
    method = upper("signed_method", empty=True)
    path = native.get("signed_path")
    run.need(isinstance(path, str), "native_body signed_path must be a string")
    assert isinstance(path, str)
    run.need(
        (method != "" and path != "") or (method == "" and path == "" and event_type.startswith("INTERNAL_")),
        "native_body signed method and path may be empty only for INTERNAL_* events",
    )
    run.need(kit.is_int(native.get("sig_form_version"), 3, 3), "native_body sig_form_version must be 3")
    nonce_hex = native.get("nonce_hex")
    run.need(
        kit.is_hex(nonce_hex) and 32 <= len(nonce_hex) <= 64,
        "native_body nonce_hex must be 16..32 bytes of lowercase hex",
    )
    assert isinstance(nonce_hex, str)
    valid_from_ms, ts = native.get("signer_valid_from_unix_ms"), native.get("ts_signed_unix_seconds")
    run.need(kit.is_int(valid_from_ms), "native_body signer_valid_from_unix_ms must be a safe integer")
    run.need(kit.is_int(ts) and ts >= 0, "native_body ts_signed_unix_seconds must be a non-negative integer")
    assert isinstance(valid_from_ms, int) and isinstance(ts, int)
    has_predecessor = flag(
        "predecessor_present",
        "predecessor_commitment_hex",
        kit.is_hex64(native.get("predecessor_commitment_hex")),
    )
    has_receipt = flag(
        "request_receipt_present",
        "request_receipt_mutation_hash_hex",
        kit.is_hex64(native.get("request_receipt_mutation_hash_hex")),
    )
    has_authorization = flag(
        "authorization_event_present",
        "authorization_event_id",
        kit.is_uuid(native.get("authorization_event_id")),
    )
    try:
        return commitments.occurrence_v3_commitment(
            company_id=native["company_id"],
            occurrence_event_id=native["occurrence_event_id"],
            memory_id=native["memory_id"],
            event_type=event_type,
            live_hash=bytes.fromhex(native["live_content_hash_hex"]),
            predecessor=bytes.fromhex(native["predecessor_commitment_hex"]) if has_predecessor else None,
            agent_id=native["agent_id"],
            signer_valid_from_ms=valid_from_ms,
            cert_fingerprint=bytes.fromhex(native["cert_fingerprint_hex"]),
            identity_tier=identity_tier,
            sig_form_version=3,
            nonce=bytes.fromhex(nonce_hex),
            ts_signed=ts,
            signed_method=method,
            signed_path=path,
            request_body_hash=bytes.fromhex(native["request_body_hash_hex"]),
            request_receipt_mutation_hash=(
                bytes.fromhex(native["request_receipt_mutation_hash_hex"]) if has_receipt else None
            ),
            authorization_event_id=native["authorization_event_id"] if has_authorization else None,
        )
    except (AimosError, ValueError) as exc:
        run.fail(f"the occurrence v3 commitment cannot be encoded ({exc})")
