"""The agreement detector after the save (migration 15, aimos/epistemic/detect.py): a save only
queues its memory; the queue is judged in save order, each memory as it stood at its save, before
any recall or show reads, before a correction carries its predecessor's label, and after the
command that saved. The saves here that leave memories waiting are made in-process with the real
signed writer (as an MCP server's save answers before its detector runs); everything else is the
real CLI on the real brain file, and the attacks edit that file from outside."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from support.agreement_texts import POISON, QUESTION, REFERENCE
from support.cli import run_aimos, sqlite_value

from aimos.epistemic.detect import UNCHECKED_TYPES
from aimos.vocabulary import SYSTEM_SCOPE

pytestmark = pytest.mark.timeout(120)
INTEGRITY = 5
BRAIN = "brain.sqlite3"


def saved_waiting(home: Path, texts: list[tuple[str, str, str]]) -> list[str]:
    """Signed saves (agent, source, text) through the real writer, in-process, left for the
    detector (save_and_classify commits the save; nothing judges it): their memory ids."""
    from aimos.actions.bodies import build_save_body
    from aimos.actions.memory import save_and_classify
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.identity.requests import sign_request
    from aimos.store.connection import open_writer, seal_with
    from aimos.store.meta import brain_meta
    from aimos.vocabulary import HOUSEKEEPER, PATH_SAVE

    conn = open_writer(home / BRAIN)
    try:
        now = int(time.time())
        store = open_keystore(brain_meta(conn)["keystore"], brain_meta(conn)["brain_id"])
        housekeeper = load_signer(conn, store, HOUSEKEEPER, now)
        seal_with(conn, housekeeper)
        ids = []
        for agent, source, text in texts:
            signer = load_signer(conn, store, agent, now)
            body = build_save_body(company_id="personal", value=text, source=source)
            t = int(time.time())
            ids.append(
                save_and_classify(conn, housekeeper, sign_request(signer, body, PATH_SAVE, t), t).memory_id
            )
        return ids
    finally:
        conn.close()


def waiting(home: Path) -> int:
    return int(
        sqlite_value(
            home / BRAIN,
            "SELECT COALESCE((SELECT MAX(seq) FROM detection_queue), 0)"
            " - COALESCE((SELECT MAX(through_seq) FROM detection_runs), 0)",
        )
    )


def label_of(home: Path, memory_id: str) -> str:
    return sqlite_value(home / BRAIN, f"SELECT epistemic_label FROM memories WHERE memory_id = '{memory_id}'")


def campaign() -> list[tuple[str, str, str]]:
    return [("reader", f"web:site{i}.example", text) for i, text in enumerate(POISON[:4])]


def test_a_recall_judges_what_waits_before_it_decides(installed: Path) -> None:
    ref = run_aimos("save", "--source", "corpus:reference", REFERENCE).ok().out.strip()
    run_aimos("agent", "enroll", "reader").ok()
    poison = saved_waiting(installed, campaign())
    assert waiting(installed) == 4 and {label_of(installed, p) for p in poison} == {"unverified"}
    held = run_aimos("recall", QUESTION, "--json").ok().json()
    found = {r["memory_id"] for r in held["results"]}
    assert ref in found and not set(poison) & found, held
    assert waiting(installed) == 0 and {label_of(installed, p) for p in poison} == {"poison_likely"}
    # the recall's own signed decision names them withheld: they were judged inside its transaction
    listed = run_aimos("recall", QUESTION, "--json", "--show-withheld").ok().json()
    assert set(poison) <= {w["memory_id"] for w in listed["withheld"]}
    report = run_aimos("verify", "--json").json()
    assert report["ok"] and report["parity"], report


def test_show_judges_what_waits_before_it_shows(installed: Path) -> None:
    run_aimos("save", "--source", "corpus:reference", REFERENCE).ok()
    run_aimos("agent", "enroll", "reader").ok()
    poison = saved_waiting(installed, campaign())
    from aimos.actions.memory import show
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        shown = show(brain, "cli", poison[0])
    assert waiting(installed) == 0
    assert shown["withheld"], shown  # withheld as a recall would, never its text
    assert POISON[0] not in str(shown)


def classifications(home: Path, ids: list[str]) -> list[tuple[int, str, int, str, str]]:
    """Every classification of these memories as (index of the memory, label, confidence, basis,
    signals without ids and times), in order."""
    db = apsw.Connection(str(home / BRAIN))
    try:
        out = []
        for mid, label, confidence, basis, signals in db.execute(
            "SELECT c.memory_id, c.label, c.confidence_milli, c.basis,"
            " json_extract(e.signed_body, '$.metadata.signals') FROM memory_classifications c"
            " JOIN events e ON e.event_id = c.authority_event_id ORDER BY c.rowid"
        ):
            text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", str(signals))
            out.append((ids.index(str(mid)), str(label), int(confidence), str(basis), text))
        return out
    finally:
        db.close()


def test_judged_later_is_judged_as_at_its_save(
    installed: Path, brain_template: Any, passphrase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same saves, judged one by one after each (the CLI) and all at once before a recall: the
    same labels, confidences and signals on the same memories (truth saved after the poison judges
    the poison again in both)."""
    run_aimos("agent", "enroll", "reader").ok()
    steps = [*campaign(), ("cli", "corpus:reference", REFERENCE)]
    one_by_one = [
        run_aimos("save", *(["--as", a] if a != "cli" else []), "--source", s, t).ok().out.strip()
        for a, s, t in steps
    ]
    later = tmp_path / "later"
    shutil.copytree(brain_template(passphrase), later)
    env = {"AIMOS_HOME": str(later)}
    run_aimos("agent", "enroll", "reader", env=env).ok()
    with monkeypatch.context() as there:
        there.setenv("AIMOS_HOME", str(later))
        at_once = saved_waiting(later, steps)
    assert waiting(later) == len(steps)
    run_aimos("recall", QUESTION, env=env).ok()
    assert waiting(later) == 0
    first, second = classifications(installed, one_by_one), classifications(later, at_once)
    assert first and {c[1] for c in first} >= {"poison_likely"}, first
    # (a cluster's members may be recorded in another order: the index ranks neighbours by its
    # statistics when the detector runs)
    assert sorted(first) == sorted(second)


def test_a_correction_carries_the_label_the_detector_owes_its_predecessor(installed: Path) -> None:
    run_aimos("agent", "enroll", "reader").ok()
    poison = saved_waiting(installed, [*campaign(), ("cli", "corpus:reference", REFERENCE)])[:4]
    assert label_of(installed, poison[0]) == "unverified"  # not judged yet
    fixed = (
        run_aimos(
            "correct", "--as", "reader", poison[0], "Frank Sinatra recorded it, as everyone knows.", "--json"
        )
        .ok()
        .json()
    )
    assert label_of(installed, poison[0]) == "poison_likely"
    assert label_of(installed, fixed["memory_id"]) == "poison_likely"
    assert fixed.get("carried_label") == "poison_likely", fixed


def _edit(home: Path, sql: str, *tables: str) -> None:
    """``sql`` on the brain file from outside (plain apsw, no aimos functions), the guard triggers
    of ``tables`` dropped first and re-created exactly after."""
    db = apsw.Connection(str(home / BRAIN))
    try:
        marks = ",".join(f"'{t}'" for t in tables)
        found = db.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({marks})"
        ).fetchall()
        drops = "".join(f'DROP TRIGGER "{name}";\n' for name, _ in found)
        creates = "".join(f"{text};\n" for _, text in found)
        db.execute(f"BEGIN;\n{drops}{sql};\n{creates}COMMIT;").fetchall()
    finally:
        db.close()


@pytest.mark.parametrize(
    "edit",
    [
        "INSERT INTO detection_runs (through_seq, ran_at) VALUES ((SELECT MAX(seq) FROM detection_queue), 1)",
        "DELETE FROM detection_queue",
    ],
    ids=["marked-judged", "queue-emptied"],
)
def test_skipping_the_detector_by_editing_the_file_is_refused(installed: Path, edit: str) -> None:
    """An attacker with the brain file (no housekeeper key) marks the waiting poison judged, or
    empties the queue: the next recall refuses (exit 5, the table named), discloses nothing."""
    run_aimos("save", "--source", "corpus:reference", REFERENCE).ok()
    run_aimos("agent", "enroll", "reader").ok()
    poison = saved_waiting(installed, campaign())
    _edit(installed, edit, "detection_runs", "detection_queue")
    result = run_aimos("recall", QUESTION, "--json")
    assert result.code == INTEGRITY, result.describe()
    table = "detection_runs" if "INSERT" in edit else "detection_queue"
    assert table in result.err and "Traceback" not in result.both, result.describe()
    assert not any(p in result.out for p in poison)
    assert {label_of(installed, p) for p in poison} == {"unverified"}


def test_the_guards_refuse_a_run_past_the_queue_and_any_change(installed: Path) -> None:
    run_aimos("agent", "enroll", "reader").ok()
    saved_waiting(installed, campaign())
    db = apsw.Connection(str(installed / BRAIN))
    try:
        for sql in (
            "INSERT INTO detection_runs (through_seq, ran_at) VALUES (99, 1)",  # past the queue's end
            "INSERT INTO detection_runs (through_seq, ran_at) VALUES (0, 1)",  # not forward
            "UPDATE detection_queue SET memory_id = memory_id",
            "DELETE FROM detection_queue",
            # an older memory queued again: only the save of the newest queues it
            "INSERT INTO detection_queue (memory_id) VALUES ((SELECT memory_id FROM memories ORDER BY rowid LIMIT 1))",
        ):
            with pytest.raises(apsw.ConstraintError, match="aimos: "):
                db.execute(sql)
    finally:
        db.close()
    assert waiting(installed) == 4


def test_the_queue_trigger_skips_exactly_what_the_detector_never_looks_at(installed: Path) -> None:
    sql = sqlite_value(
        installed / BRAIN, "SELECT sql FROM sqlite_master WHERE name = 'memories_queue_detection'"
    )
    skipped = re.search(r"NOT IN \(([^)]*)\)", sql)
    assert skipped is not None, sql
    assert {t.strip().strip("'") for t in skipped.group(1).split(",")} == set(UNCHECKED_TYPES)
    assert f"NEW.scope IS NOT '{SYSTEM_SCOPE}'" in sql


def test_the_hourly_scan_judges_what_a_stopped_process_left(installed: Path) -> None:
    """A save whose process stopped before its detector ran: the housekeeper's bottleneck scan
    judges it (and says how many in its signed result)."""
    run_aimos("save", "--source", "corpus:reference", REFERENCE).ok()
    run_aimos("agent", "enroll", "reader").ok()
    poison = saved_waiting(installed, campaign())
    ran = run_aimos("housekeeper", "run-job", "bottleneck-scan", "--json").ok().json()
    assert waiting(installed) == 0 and {label_of(installed, p) for p in poison} == {"poison_likely"}
    assert '"detector_judged": 4' in str(ran).replace("'", '"'), ran
