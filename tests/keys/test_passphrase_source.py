"""Where the master passphrase came from, said the same way by every command that takes it
(issue 38, item 6), through the real CLI: with AIMOS_PASSPHRASE_FILE, purge, restore, redact and
a trust-raising label each say once, on stderr, "master passphrase read from FILE" (the path,
never the content); a descriptor is not a file and is not named; after `aimos passphrase change`
the old passphrase left in the file is refused naming the file, with nothing changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import BRAIN, PASSPHRASE_ENV, Result, assert_refused, run_aimos
from support.keys import change, with_fd

pytestmark = pytest.mark.timeout(180)

NEW = "the passphrase after the change"


def said(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if "master passphrase read from" in line]


def assert_said_once(result: Result, passphrase: str) -> None:
    file = os.environ[PASSPHRASE_ENV]
    assert said(result) == [f"master passphrase read from {file} ({PASSPHRASE_ENV})"], result.describe()
    assert passphrase not in result.both, "the passphrase itself was printed"


def save(text: str, key: str) -> str:
    return run_aimos("save", "--key", key, text).ok().out.strip()


def label_of(home: Path, mid: str) -> str:
    import apsw

    conn = apsw.Connection(str(home / BRAIN), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        ((label,),) = conn.execute(
            "SELECT epistemic_label FROM memories WHERE memory_id = ?", (mid,)
        ).fetchall()
    finally:
        conn.close()
    return str(label)


def test_each_command_that_takes_the_passphrase_says_once_where_it_came_from(
    installed: Path, passphrase: str
) -> None:
    backup = run_aimos("backup", "--json").json()["path"]
    judged = save("The tide table for March is pinned inside the boathouse door", "source:tide")
    hidden = save("The spare boathouse key hangs behind the red buoy", "source:key")

    label = run_aimos("label", judged[:8], "support", "--reason", "checked against the printed table").ok()
    assert_said_once(label, passphrase)
    assert label_of(installed, judged) == "supported"
    # a judgment that lowers trust takes no passphrase, and says nothing of one
    lowered = run_aimos("label", hidden[:8], "dispute", "--reason", "the key was moved").ok()
    assert said(lowered) == []

    assert_said_once(
        run_aimos("redact", hidden[:8], "--reason", "private", input=f"redact {hidden[:8]}\n").ok(),
        passphrase,
    )
    assert_said_once(run_aimos("restore", backup, "--yes").ok(), passphrase)
    assert_said_once(run_aimos("purge", "--live", input="PURGE AIMOS personal personal\n").ok(), passphrase)


def test_a_passphrase_from_a_descriptor_names_no_file(installed: Path, passphrase: str) -> None:
    mid = save("The ferry timetable changed on the first of May", "source:ferry")
    done = with_fd(
        passphrase, "label", mid[:8], "support", "--reason", "seen at the pier", fd_flags=("--passphrase-fd",)
    )
    assert done.code == 0, done.describe()
    assert said(done) == [] and label_of(installed, mid) == "supported"


def test_after_a_change_the_old_passphrase_in_the_file_is_refused_naming_the_file(
    installed: Path, passphrase: str
) -> None:
    mid = save("The dinghy's outboard takes two-stroke mix at 50:1", "source:outboard")
    change(passphrase, NEW).ok()
    file = os.environ[PASSPHRASE_ENV]
    assert Path(file).read_text().strip() == passphrase, "the file still holds the old passphrase"

    for refused in (
        run_aimos("label", mid[:8], "support", "--reason", "from the manual"),
        run_aimos("purge", "--live", input="PURGE AIMOS personal personal\n"),
    ):
        assert_refused(refused, 6, file, f"unset {PASSPHRASE_ENV}")
        assert f"the one in {file} ({PASSPHRASE_ENV}) does not open the master" in refused.err, (
            refused.describe()
        )
        assert "aimos passphrase change" in refused.err and passphrase not in refused.both
    assert label_of(installed, mid) == "unverified"
    assert (installed / BRAIN).exists() and not list((installed / "purge-receipts").glob("*.intent.json"))

    Path(file).write_text(NEW + "\n")  # the file updated: it opens the master again
    run_aimos("label", mid[:8], "support", "--reason", "from the manual").ok()
    assert label_of(installed, mid) == "supported"
    assert json.loads((installed / "config" / "anchors.json").read_text())["brains"]
