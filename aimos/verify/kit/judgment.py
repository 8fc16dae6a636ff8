"""A person's judgment in a signed classification: the one check the writer's trigger, the
in-database verifier and the portable verifier all make (pure, no I/O).

The judgment's evidence carries the agent's signed label request. It must judge this memory with
the judgment that gives the label. Under the judgment rule it records (``authority_rule``,
:data:`~aimos.vocabulary.JUDGMENT_AUTHORITY_V2`), a judgment that raises the memory's trust from its
previous label carries the master's signature over the same request; a judgment recorded before
that rule (no ``authority_rule``) needed it for refute and support only. A master signature that is
present must verify either way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.vocabulary import JUDGED, JUDGMENT_AUTHORITY_V2, TRUST_RAISING_LABELS, raises_trust

EVIDENCE_INVALID: Final = "epistemic_evidence_invalid"


def master_required(previous_label: str, label: str, rule: object) -> bool | None:
    """Whether a judgment moving a memory from ``previous_label`` to ``label`` under ``rule`` needs
    the master's signature; None for a rule no aimos wrote."""
    if rule == JUDGMENT_AUTHORITY_V2:
        return raises_trust(previous_label, label)
    if rule is None:
        return label in TRUST_RAISING_LABELS
    return None


def judgment_reason(
    meta: Mapping[str, Any],
    memory_id: str,
    previous_label: str,
    master_public_key: str,
    *,
    current_rule_only: bool = False,
) -> str | None:
    """None when the judgment in a classification's signed ``meta`` is authorized, else
    :data:`EVIDENCE_INVALID`. ``current_rule_only`` (the writer's trigger): a new judgment must
    record the current rule."""
    evidence = meta.get("evidence")
    body = evidence.get("body") if isinstance(evidence, Mapping) else None
    label = meta.get("label")
    if not isinstance(evidence, Mapping) or not isinstance(body, Mapping) or not isinstance(label, str):
        return EVIDENCE_INVALID
    if body.get("memory_id") != memory_id or JUDGED.get(label) != body.get("judgment"):
        return EVIDENCE_INVALID
    rule = evidence.get("authority_rule")
    if current_rule_only and rule != JUDGMENT_AUTHORITY_V2:
        return EVIDENCE_INVALID
    needed = master_required(previous_label, label, rule)
    if needed is None:
        return EVIDENCE_INVALID
    signature_text = evidence.get("master_signature_b64u")
    if signature_text is None:
        return EVIDENCE_INVALID if needed else None
    ts = evidence.get("ts")
    if not isinstance(signature_text, str) or not isinstance(ts, int) or isinstance(ts, bool):
        return EVIDENCE_INVALID
    try:
        message = payload_message(dict(body), str(evidence.get("nonce")), ts)
        signature = b64u_decode(signature_text)
    except (AimosError, TypeError, ValueError):
        return EVIDENCE_INVALID
    return None if verify(master_public_key, message, signature) else EVIDENCE_INVALID
