"""One set of words for people, everywhere (issue 38 item 4), through the real CLI.

A new user's session, from `aimos install` (the file keystore, in an empty home) through saves,
recalls, a judgment of each kind, list, show, a correction, feedback, receipts, status, verify,
doctor, exports and their verification, and the --help of every command: nothing a person reads
says a protocol label or judgment word (poison_refuted, unverified, confirm, ...; derived from
aimos/vocabulary.py in tests/support/people_words.py), and no count leaves its noun's number open
("memory(s)"). The same session's --json keeps the protocol's words, as receipts and exports do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from support.cli import Result, run_aimos
from support.people_words import PROTOCOL_WORDS, either_number_in, protocol_words_in

from aimos import vocabulary


def _command_paths() -> list[tuple[str, ...]]:
    """Every command and group of the command line, as the words that run it."""
    from aimos.cli.app import _command_tree

    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            found.append((*path, name))
            walk(sub, (*path, name))

    walk(_command_tree(None), ())
    return found


class Session:
    """Runs `aimos` and keeps everything it said to a person (stdout and stderr)."""

    def __init__(self) -> None:
        self.said: list[Result] = []

    def __call__(self, *args: str, ok: bool = True, input: str | None = None) -> Result:
        done = run_aimos(*args, input=input)
        if ok:
            done.ok()
        self.said.append(done)
        return done

    def problems(self) -> list[str]:
        found = []
        for done in self.said:
            where = f"aimos {' '.join(done.args)[:80]}"
            found += [f"{where}: {p}" for p in protocol_words_in(done.both)]
            found += [f"{where}: number left open: {p}" for p in either_number_in(done.both)]
        return found


def test_the_words_looked_for_are_the_protocols() -> None:
    """The derivation finds the words a person tripped on, and none of people's own."""
    assert {"unverified", "poison_refuted", "poison_confirmed", "poison_suspect", "confirm", "refute"} <= set(
        PROTOCOL_WORDS
    ), PROTOCOL_WORDS
    assert not {"poison", "not-poison", "support", "dispute", "supported", "disputed"} & set(PROTOCOL_WORDS)
    assert protocol_words_in("1  c2afc4ae  poison_refuted  x")
    assert protocol_words_in('hint: Add --reason "why you confirm it".')
    assert not protocol_words_in("not poison: a person cleared the suspicion")


def test_a_new_users_session_reads_in_peoples_words(aimos_home: Path, tmp_path: Path) -> None:
    aimos = Session()
    aimos("install", "--yes", "--no-guides", "--keystore", "file")
    texts = {
        "cat": "The cat's name is Tom",
        "meeting": "The team meeting moved to Friday at 10",
        "dentist": "The dentist appointment is on the 3rd of May",
        "boiler": "The boiler is serviced every October",
        "wifi": "The guest wifi is called Tangerine",
    }
    cat, meeting, dentist, boiler, wifi = (aimos("save", text).out.strip() for text in texts.values())

    aimos("recall", "what is the cat called")
    # a judgment of each kind, and a judgment without its reason (the hint names the fix)
    for word in ("poison", "not-poison", "support", "dispute"):
        refused = aimos("label", cat[:8], word, ok=False)
        assert refused.code == 2 and "--reason" in refused.err, refused.describe()
    aimos("label", cat[:8], "poison", "--reason", "we never had a cat")
    aimos("label", cat[:8], "not-poison", "--reason", "we did, in 2019")
    aimos("label", meeting[:8], "dispute", "--reason", "it may have moved again")
    aimos("label", dentist[:8], "support", "--reason", "the letter says so")
    aimos("label", wifi[:8], "poison", "--reason", "planted by a web page")

    # recalls: results with every kind of label, one withheld, and its reason shown
    aimos("recall", "what is the cat called")
    aimos("recall", "when is the team meeting")
    aimos("recall", "when is the dentist appointment")
    withheld = aimos("recall", "what is the guest wifi called")
    assert "1 untrusted memory withheld" in withheld.err, withheld.describe()
    shown = aimos("recall", "what is the guest wifi called", "--show-withheld")
    assert "poison, confirmed by a person" in shown.out, shown.describe()

    listed = aimos("list")
    assert re.search(r"not poison\s", listed.out) and "poison " in listed.out, listed.describe()
    aimos("list", "--history")
    shown_cat = aimos("show", cat[:8])
    assert "label history:" in shown_cat.out and "judged by cli + master: we did, in 2019" in shown_cat.out, (
        shown_cat.describe()
    )
    for memory in (meeting, dentist, wifi, boiler):
        aimos("show", memory[:8])
    # a correction of a poison memory keeps its label, and says so
    corrected = aimos("correct", wifi[:8], "The guest wifi is called Clementine")
    assert "poison" in corrected.err, corrected.describe()

    recalled = run_aimos("recall", "when is the dentist appointment", "--json").json()
    receipt = recalled["receipt"]["receipt_id"]
    aimos("feedback", dentist[:8], "--good", "--receipt", receipt)
    aimos("show", dentist[:8])
    aimos("receipt", "list")
    receipt_shown = aimos("receipt", "show", receipt)
    assert re.search(r"^1\s+" + dentist, receipt_shown.out, re.M), receipt_shown.describe()
    aimos("receipt", "verify", receipt)

    for command in (("status",), ("verify",), ("doctor",), ("housekeeper", "status"), ("agent", "list")):
        aimos(*command, ok=command != ("doctor",))  # doctor exits 1 here: no housekeeper runs
    audit = aimos("housekeeper", "run-job", "weekly-audit")
    assert re.search(r"labels: .*not poison 1", audit.out), audit.describe()
    aimos("export", "--cognitive", str(tmp_path / "cognitive.json"))
    aimos("verify-bundle", str(tmp_path / "cognitive.json"))
    aimos("export-recall", receipt, "--output", str(tmp_path / "recall.json"))
    (anchored,) = json.loads((aimos_home / "config" / "anchors.json").read_text())["brains"].values()
    fingerprint = anchored["master_fingerprint"]
    aimos("verify-bundle", str(tmp_path / "recall.json"), "--master-fingerprint", fingerprint)
    aimos("export", "--text", str(tmp_path / "memories.jsonl"))

    for path in _command_paths():
        aimos(*path, "--help")
    aimos("--help")

    problems = aimos.problems()
    assert not problems, "a person reads the protocol's words:\n" + "\n".join(problems)

    # --json, receipts and exports keep the protocol's words
    as_json = {m: run_aimos("show", m, "--json").json()["epistemic_label"] for m in (cat, boiler)}
    assert as_json == {cat: vocabulary.POISON_REFUTED, boiler: vocabulary.UNVERIFIED}, as_json
    labels_in_receipt = {
        e["label"] for e in run_aimos("receipt", "show", receipt, "--json").json()["evidence"]
    }
    assert labels_in_receipt == {vocabulary.SUPPORTED}, labels_in_receipt
    exported = (tmp_path / "memories.jsonl").read_text()
    assert vocabulary.POISON_REFUTED in exported and vocabulary.UNVERIFIED in exported
