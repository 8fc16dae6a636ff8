"""A person's judgment of a memory: a signed label request, recorded as a housekeeper-signed
label transition; and people's words for the protocol's, the one home of them.

The words a person types are not the protocol's: ``poison`` records the judgment ``confirm``
(label poison_confirmed) and ``not-poison`` records ``refute`` (label poison_refuted). The old
spellings are refused with the new ones named, since "confirm" read as "confirm it is right".

Every surface a person reads (the CLI's tables and messages, the TUI's screens, MCP's result text
and tool descriptions) says a label, a judgment, a withholding reason or a weight's verification
in the words below; the protocol's words (aimos/vocabulary.py) stay in --json, MCP's structured
results, receipts and exports. tests/cli/test_people_words.py drives the CLI, the TUI and the MCP
server through a session and fails on a protocol word in what a person reads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from aimos.errors import UsageError
from aimos.plural import plural
from aimos.vocabulary import (
    BASIS_CLASSIFIER,
    BASIS_EXPLICIT,
    CANARY_QUARANTINED_OPERATION,
    DISPUTED,
    EPISTEMIC_CLASSIFIED_OPERATION,
    GUIDE_CORPUS_INGESTED_OPERATION,
    INITIAL_WEIGHT_ATTESTED_OPERATION,
    JUDGED,
    JUDGMENTS,
    LABELS,
    MEMORY_REDACTED_OPERATION,
    MEMORY_SAVED_OPERATION,
    MUTATION_OUTCOME_OPERATION,
    OBSERVATION_RETAINED_OPERATION,
    OCCURRENCE_RECORDED_OPERATION,
    PATH_LABEL,
    POISON_CONFIRMED,
    POISON_LIKELY,
    POISON_REFUTED,
    POISON_SUSPECT,
    REWEIGHT_EVENT,
    SUPPORTED,
    TERMINAL_AUTHORIZED_TRANSITION,
    TERMINAL_SIGNED_NOOP,
    UNVERIFIED,
    VALENCE_EVENT,
    WEIGHT_ADJUSTED_OPERATION,
    WEIGHT_UNCHANGED_OPERATION,
    raises_trust,
)

if TYPE_CHECKING:  # the words below are read by every front end: the signing parts load when used
    from aimos.actions.session import Brain
    from aimos.crypto.ed25519 import KeyPair
    from aimos.epistemic.chain import Transition
    from aimos.identity.requests import SignedRequest
    from aimos.identity.signer import Signer

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
    "not-poison": "it is not poison; clears a suspicion and gives it full trust (needs the master)",
    "support": "it is right; full trust (needs the master)",
    "dispute": "it is doubtful; recall shows it with low trust (on a suspected one that lifts the"
    " suspicion: needs the master)",
}
_OLD_WORDS: Final = {"confirm": "poison", "refute": "not-poison"}


def judgment_list() -> str:
    """The words a person judges with, as a sentence lists them: "poison, not-poison, support or
    dispute"."""
    *first, last = JUDGMENT_WORDS
    return f"{', '.join(first)} or {last}"


# each label in plain words (the stored protocol label is unchanged), then in a table's label column
# (at most 16 characters): the words a person judges with (where the protocol's word is plain
# English, as "supported" and "disputed" are, it is theirs too). Storage, receipts, exports and
# --json keep the protocol's word.
_LABELS: Final = {
    UNVERIFIED: ("not judged", "not judged"),
    SUPPORTED: ("supported by a person", SUPPORTED),
    DISPUTED: ("disputed: a person doubts it", DISPUTED),
    POISON_SUSPECT: ("suspected poison; withheld", "suspected poison"),
    POISON_LIKELY: ("likely poison; withheld", "likely poison"),
    POISON_CONFIRMED: ("poison, confirmed by a person; withheld", "poison"),
    POISON_REFUTED: ("not poison: a person cleared the suspicion", "not poison"),
}
LABEL_WORDS: Final = {label: words for label, (words, _) in _LABELS.items()}
LABEL_SHORT: Final = {label: short for label, (_, short) in _LABELS.items()}


def label_words(label: str) -> str:
    """The label in plain words (an unknown label as it is)."""
    return LABEL_WORDS.get(label, label)


def label_short(label: str) -> str:
    """The label as a table column shows it (an unknown label as it is)."""
    return LABEL_SHORT.get(label, label)


# --- a memory's ledger events and outcomes, in people's words (`show`, the TUI's memory screen) ---

# the housekeeper's events about one memory, by the operation the ledger records (any other: its
# operation with spaces for underscores)
EVENT_WORDS: Final = {
    MEMORY_SAVED_OPERATION: "saved",
    OCCURRENCE_RECORDED_OPERATION: "saved again (an occurrence)",
    EPISTEMIC_CLASSIFIED_OPERATION: "labelled",
    MUTATION_OUTCOME_OPERATION: "outcome recorded",
    WEIGHT_ADJUSTED_OPERATION: "weight changed",
    WEIGHT_UNCHANGED_OPERATION: "weight kept (at a bound)",
    OBSERVATION_RETAINED_OPERATION: "outcome kept as an observation",
    INITIAL_WEIGHT_ATTESTED_OPERATION: "starting weight signed",
    CANARY_QUARANTINED_OPERATION: "kept in quarantine (a canary marker)",
    MEMORY_REDACTED_OPERATION: "text redacted",
    GUIDE_CORPUS_INGESTED_OPERATION: "guides saved",
}
# a provenance node's kind: what the signed mutation did
PROVENANCE_WORDS: Final = {"SAVE": "saved", REWEIGHT_EVENT: "weight change", VALENCE_EVENT: "label"}
# what an outcome came to (a weight transition's terminal)
OUTCOME_RESULT_WORDS: Final = {
    TERMINAL_AUTHORIZED_TRANSITION: "weight moved",
    TERMINAL_SIGNED_NOOP: "no move (at a bound)",
}


def event_words(operation: str) -> str:
    return EVENT_WORDS.get(operation, operation.replace("_", " "))


def provenance_words(event_type: str) -> str:
    return PROVENANCE_WORDS.get(event_type, event_type.lower())


def outcome_result_words(terminal: str | None) -> str:
    return "-" if terminal is None else OUTCOME_RESULT_WORDS.get(terminal, terminal.replace("_", " "))


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


def label_change(previous: str, label: str) -> str:
    """A label transition in plain words: "not judged -> poison, confirmed by a person; withheld"."""
    return f"{label_words(previous)} -> {label_words(label)}"


# who gave a label (a classification's basis): a person's judgment, or aimos's own detectors (a
# classifier's label, or one a correction carried from the version it corrects)
BASIS_WORDS: Final = {BASIS_EXPLICIT: "a person's judgment", BASIS_CLASSIFIER: "aimos's detector"}


def basis_words(basis: str) -> str:
    return BASIS_WORDS.get(basis, basis)


def judgment_word(judgment: str) -> str:
    """The word a person types for a protocol judgment (confirm -> poison); the label's plain
    words for a protocol label."""
    spoken = {j: w for w, j in JUDGMENT_WORDS.items()}
    if judgment in spoken:
        return spoken[judgment]
    return spoken.get(JUDGED.get(judgment, ""), judgment)


def withheld_words(label: str, reason: str) -> str:
    """Why recall withheld a memory (its label and aimos.recall.policy's reason), in plain words."""
    from aimos.recall import policy

    said = {
        policy.RETAINED_QUARANTINE: "kept in quarantine: it carries a canary marker",
        policy.WEIGHT_AT_FLOOR: "its weight fell to the floor after bad outcomes",
        policy.QUERY_LURE: "its text echoes the question, as planted text does",
        policy.AGREEMENT_CONTESTED: "another source contradicts it and none supports it",
    }
    if reason.startswith(policy.LABEL_REASON):
        return label_words(reason.removeprefix(policy.LABEL_REASON) or label)
    return said.get(reason, reason.replace("_", " "))


def weight_history(status: str, changes: int) -> str:
    """A memory's verified weight history (a verifier's certification status and its chain's
    length) in plain words: "no outcomes yet", "2 signed weight changes", "a signed starting
    weight, no outcomes yet"."""
    from aimos.verify.cognitive.reasons import CERTIFIED_CHAIN, DEFAULT_EMPTY_CHAIN, SIGNED_INITIAL_WEIGHT

    if status == CERTIFIED_CHAIN:
        return plural(changes, "signed weight change")
    if status == SIGNED_INITIAL_WEIGHT:
        return "a signed starting weight, no outcomes yet"
    if status == DEFAULT_EMPTY_CHAIN:
        return "no outcomes yet"
    return "a weight no signature attests"


def withheld_count(count: int) -> str:
    """How many memories a recall withheld, in words: "1 untrusted memory withheld"."""
    return f"{plural(count, 'untrusted memory')} withheld"


# A recall receipt's evidence entries as a person reads them: the columns recall shows its results
# in, numbered from 1 as recall numbers them (the receipt's own ordinals count from 0).
RECEIPT_COLUMNS: Final = ("#", "memory", "match", "trust", "weight", "label", "version")


def _recorded(value: object, scale: int = 1, places: int = 3) -> str:
    """A number as the receipt records it, anything else as written, "?" for nothing (a receipt
    edited outside aimos may hold anything; `aimos receipt verify` says what is wrong with it)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value / scale:.{places}f}"
    return "?" if value is None else str(value)


def receipt_entry(entry: dict[str, Any], id_width: int | None = None) -> list[str]:
    """One evidence entry of a recall receipt, in the columns of RECEIPT_COLUMNS; ``id_width``:
    the memory id cut to that many characters."""
    ordinal = entry.get("ordinal")
    number = str(ordinal + 1) if isinstance(ordinal, int) and not isinstance(ordinal, bool) else "?"
    label = entry.get("label")
    return [
        number,
        str(entry.get("memory_id", "?"))[:id_width],
        _recorded(entry.get("relevance"), places=2),
        _recorded(entry.get("trust"), places=2),
        _recorded(entry.get("weight_milli"), scale=1000),
        label_short(label) if isinstance(label, str) else "?",
        str(entry.get("version_state", "?")),
    ]


def verified_words(verification: dict[str, Any]) -> str:
    """What verifying one memory found, in words (its weight history and the signatures checked):
    "no outcomes yet, 2 signatures checked"."""
    history = weight_history(str(verification["status"]), int(verification["chain_length"]))
    signatures = int(verification["sigs_verified"])
    return f"{history}, {plural(signatures, 'signature')} checked" if signatures else history


def judged_by(entry: dict[str, Any]) -> str:
    """Who gave a label of a memory's label history (a row of verify.chains.labels.label_history):
    "judged by cli" (and "+ master" when the master signed the judgment too), or "given by aimos's
    detector, confidence 0.80"."""
    evidence = entry.get("evidence")
    if isinstance(evidence, dict) and evidence:  # signed JSON, as recorded
        master = " + master" if evidence.get("master_fingerprint") else ""
        return f"judged by {evidence.get('agent_id')}{master}"
    confidence = entry.get("confidence_milli")
    sure = f", confidence {confidence / 1000:.2f}" if isinstance(confidence, int) else ""
    return f"given by {basis_words(str(entry.get('basis')))}{sure}"


# --- a person's signed judgment ---------------------------------------------------------------


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


def check_reason(judgment: str, reason: str | None) -> str:
    """The judgment's reason, stripped; a usage error for a bad pair (its hint in the words the
    person typed), and a refusal for a reason that holds a secret (it is kept in the signed label
    chain for good)."""
    from aimos.epistemic.chain import check_judgment
    from aimos.memory.gates import refuse_secret_fields

    word = judgment_word(judgment)
    if word in JUDGMENT_MEANING and (reason is None or not reason.strip()):
        claim = JUDGMENT_MEANING[word].split(";")[0]
        raise UsageError("a judgment needs a reason", f'Add --reason "why you think {claim}".')
    why = check_judgment(judgment, reason)
    refuse_secret_fields({"reason": why}, outcome="no judgment was recorded")
    return why


def _label_request(brain: Brain, signer: Signer, memory_id: str, judgment: str, why: str) -> SignedRequest:
    from aimos.actions.bodies import build_label_body
    from aimos.actions.session import now
    from aimos.identity.requests import sign_request

    body = build_label_body(company_id=brain.company_id, memory_id=memory_id, judgment=judgment, reason=why)
    return sign_request(signer, body, PATH_LABEL, now())


def needs_master(brain: Brain, agent: str, memory_ref: str, judgment: str) -> bool:
    """Whether ``judgment`` (a protocol judgment) raises the memory's trust from its current label,
    so the master must sign it too (a memory outside ``agent``'s grant is not found)."""
    from aimos.epistemic.chain import current_label
    from aimos.memory.versions import resolve_memory_id

    mid = resolve_memory_id(brain.conn, memory_ref, agent_id=agent)
    return raises_trust(current_label(brain.conn, mid), JUDGMENTS[judgment][0])


def judge_memory(
    brain: Brain, agent: str, memory_ref: str, judgment: str, reason: str | None, *, master: KeyPair | None
) -> Transition:
    """``judgment`` of ``memory_ref`` signed by ``agent`` (and by the master when it raises trust)."""
    from aimos.epistemic.chain import judge
    from aimos.identity.devices import is_home
    from aimos.memory.versions import resolve_memory_id

    why = check_reason(judgment, reason)
    mid = resolve_memory_id(brain.conn, memory_ref, agent_id=agent)
    request = _label_request(brain, brain.signer(agent), mid, judgment, why)
    if not is_home(brain.conn):  # the home alone appends to label chains: it records this judgment
        return _keep_judgment_for_home(brain, request, master)
    return judge(brain.conn, brain.housekeeper(), request, request.ts, master=master)


def _keep_judgment_for_home(brain: Brain, request: SignedRequest, master: KeyPair | None) -> Transition:
    """A judgment on a device that is not the home: tried as the home will try it (then rolled
    back: what it would do is the answer, marked provisional) and kept, with the master's
    signature when one was given, for the home (hub_requests), one write transaction."""
    from dataclasses import replace

    from aimos.epistemic.chain import check_judgment_body, judge_in_transaction, master_signature
    from aimos.identity.devices import keep_for_home
    from aimos.identity.requests import verify_request
    from aimos.store.connection import write_transaction
    from aimos.store.engine import rolled_back

    check_judgment_body(request.body)
    signature = None if master is None else master_signature(brain.conn, master, request)
    conn, housekeeper = brain.conn, brain.housekeeper()
    with write_transaction(conn, housekeeper):
        with rolled_back(conn, "aimos_judgment_trial"):
            trial = judge_in_transaction(conn, housekeeper, request, request.ts, master_signature=signature)
        verified = verify_request(conn, request, path=PATH_LABEL, now=request.ts, record=False)
        keep_for_home(conn, verified, request.ts, signature)
    return replace(trial, classification_hash="", event_id="", provisional=True)
