"""A person's judgment of a memory: a signed label request, recorded as a housekeeper-signed
label transition; and the words front ends use for judgments and labels.

The words a person types are not the protocol's: ``poison`` records the judgment ``confirm``
(label poison_confirmed) and ``not-poison`` records ``refute`` (label poison_refuted). The old
spellings are refused with the new ones named, since "confirm" read as "confirm it is right"."""

from __future__ import annotations

from typing import Final

from aimos.actions.bodies import build_label_body
from aimos.actions.session import Brain, now
from aimos.crypto.ed25519 import KeyPair
from aimos.epistemic.chain import Transition, check_judgment, current_label, judge, judge_in_transaction
from aimos.errors import UsageError
from aimos.identity.epochs import Signer
from aimos.identity.requests import SignedRequest, sign_request
from aimos.memory.gates import refuse_secret_fields
from aimos.memory.versions import resolve_memory_id
from aimos.vocabulary import (
    DISPUTED,
    JUDGMENTS,
    LABELS,
    PATH_LABEL,
    POISON_CONFIRMED,
    POISON_LIKELY,
    POISON_REFUTED,
    POISON_SUSPECT,
    SUPPORTED,
    UNVERIFIED,
    raises_trust,
)

# what a person types -> the judgment the signed request carries
JUDGMENT_WORDS: Final = {
    "poison": "confirm",
    "not-poison": "refute",
    "support": "support",
    "dispute": "dispute",
}
# what each word does, for --help, the TUI's choices and errors
JUDGMENT_MEANING: Final = {
    "poison": "it is poison; recall withholds it",
    "not-poison": "it is not poison; clears a suspicion",
    "support": "it is right; full trust",
    "dispute": "it is doubtful; lowers its trust",
}
_OLD_WORDS: Final = {"confirm": "poison", "refute": "not-poison"}
# each label in plain words (the stored protocol label is unchanged)
LABEL_WORDS: Final = {
    UNVERIFIED: "not judged",
    SUPPORTED: "supported by a person",
    DISPUTED: "doubted by a person",
    POISON_SUSPECT: "suspected poison; withheld",
    POISON_LIKELY: "likely poison; withheld",
    POISON_CONFIRMED: "poison, confirmed by a person; withheld",
    POISON_REFUTED: "not poison: a person cleared the suspicion",
}


def label_words(label: str) -> str:
    """The label in plain words (an unknown label as it is)."""
    return LABEL_WORDS.get(label, label)


# In a table's label column: the protocol's word, except the default one, which reads like a failed
# check ("unverified") and means only that nobody has judged the memory. Storage, receipts, exports
# and --json keep the protocol's word.
LABEL_SHORT: Final = {UNVERIFIED: "not judged"}


def label_short(label: str) -> str:
    """The label as a table column shows it."""
    return LABEL_SHORT.get(label, label)


def _spoken(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def label_named(word: str) -> str:
    """The protocol label a person names (a filter: `aimos list --label`): as --json shows it
    (``poison_refuted``), as a table shows it (label_short), in its plain words (label_words, whole
    or up to its ``;``), or as the judgment word that records it (``not-poison``); case, ``-``,
    ``_`` and spaces as typed. A usage error naming the words for anything else."""
    names: dict[str, set[str]] = {}
    for label in LABELS:
        plain = label_words(label)
        judged = [w for w, j in JUDGMENT_WORDS.items() if JUDGMENTS[j][0] == label]
        for name in (label, label_short(label), plain, plain.split(";")[0], *judged):
            names.setdefault(_spoken(name), set()).add(label)
    found = names.get(_spoken(word), set())
    if len(found) == 1:
        return found.pop()
    shown = dict.fromkeys(label_short(label) for label in LABELS)
    raise UsageError(
        f"unknown label {word!r}",
        f"Name a label as `aimos list` shows it ({', '.join(shown)}) or as its --json does, or by "
        f"the judgment that records it ({', '.join(JUDGMENT_WORDS)}).",
    )


def judgment_for(word: str) -> str:
    """The protocol judgment a person's word records; a usage error naming the words for anything
    else, and for the old spellings confirm and refute."""
    spoken = word.strip().lower()
    if spoken in JUDGMENT_WORDS:
        return JUDGMENT_WORDS[spoken]
    if spoken in _OLD_WORDS:
        new = _OLD_WORDS[spoken]
        raise UsageError(
            f"`{spoken}` is no longer a judgment word: it was easy to misread",
            f"Say `{new}` ({JUDGMENT_MEANING[new]}).",
        )
    raise UsageError(
        f"unknown judgment {word!r}",
        "Use one of: " + "; ".join(f"{w} ({m})" for w, m in JUDGMENT_MEANING.items()) + ".",
    )


def needs_master(brain: Brain, agent: str, memory_ref: str, judgment: str) -> bool:
    """Whether ``judgment`` (a protocol judgment) raises the memory's trust from its current label,
    so the master must sign it too (a memory outside ``agent``'s grant is not found)."""
    mid = resolve_memory_id(brain.conn, memory_ref, agent_id=agent)
    return raises_trust(current_label(brain.conn, mid), JUDGMENTS[judgment][0])


def check_reason(judgment: str, reason: str | None) -> str:
    """The judgment's reason, stripped; a usage error for a bad pair, and a refusal for a reason
    that holds a secret (it is kept in the signed label chain for good)."""
    why = check_judgment(judgment, reason)
    refuse_secret_fields({"reason": why}, outcome="no judgment was recorded")
    return why


def _label_request(brain: Brain, signer: Signer, memory_id: str, judgment: str, why: str) -> SignedRequest:
    body = build_label_body(company_id=brain.company_id, memory_id=memory_id, judgment=judgment, reason=why)
    return sign_request(signer, body, PATH_LABEL, now())


def judge_memory(
    brain: Brain, agent: str, memory_ref: str, judgment: str, reason: str | None, *, master: KeyPair | None
) -> Transition:
    """``judgment`` of ``memory_ref`` signed by ``agent`` (and by the master when it raises trust)."""
    why = check_reason(judgment, reason)
    mid = resolve_memory_id(brain.conn, memory_ref, agent_id=agent)
    request = _label_request(brain, brain.signer(agent), mid, judgment, why)
    return judge(brain.conn, brain.housekeeper(), request, request.ts, master=master)


def dispute_in_transaction(brain: Brain, signer: Signer, memory_id: str, reason: str) -> Transition | None:
    """``signer``'s dispute of ``memory_id`` inside the caller's write transaction (an import
    carries the doubt an export gave a memory so: a dispute lowers trust, which needs no master);
    None when the memory is already less trusted than disputed (its label stays)."""
    if raises_trust(current_label(brain.conn, memory_id), DISPUTED):
        return None
    request = _label_request(brain, signer, memory_id, "dispute", check_reason("dispute", reason))
    return judge_in_transaction(brain.conn, brain.housekeeper(), request, request.ts)
