"""A person's judgment of a memory: a signed label request, recorded as a housekeeper-signed
label transition."""

from __future__ import annotations

from aimos.actions.bodies import build_label_body
from aimos.actions.session import Brain, now
from aimos.crypto.ed25519 import KeyPair
from aimos.epistemic.chain import Transition, check_judgment, judge
from aimos.identity.requests import sign_request
from aimos.memory.versions import resolve_memory_id
from aimos.vocabulary import PATH_LABEL, TRUST_RAISING


def needs_master(judgment: str) -> bool:
    """Whether the judgment raises trust (refute, support), so the master must sign it too."""
    return judgment in TRUST_RAISING


def judge_memory(
    brain: Brain, agent: str, memory_ref: str, judgment: str, reason: str | None, *, master: KeyPair | None
) -> Transition:
    """``judgment`` of ``memory_ref`` signed by ``agent`` (and by the master when it raises trust)."""
    why = check_judgment(judgment, reason)
    mid = resolve_memory_id(brain.conn, memory_ref)
    signer = brain.signer(agent)
    body = build_label_body(company_id=brain.company_id, memory_id=mid, judgment=judgment, reason=why)
    t = now()
    return judge(brain.conn, brain.housekeeper(), sign_request(signer, body, PATH_LABEL, t), t, master=master)
