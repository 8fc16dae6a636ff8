"""`aimos list` past a few dozen memories (issue 38, item 7), through the real CLI: it says how many
more there are ("20 of 25 memories (--limit N, --all)"), shows each memory's key, and filters by
type, key, source, label (a person's words or the protocol's) and save time, composed. Bad filter
values are usage errors (exit 2) that name the fix and change nothing; --json keeps the protocol's
words and carries the total.

Found as a new user: past 20 memories `aimos list` stopped without a word, had no key column and
no way to narrow the list.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    Result,
    assert_refused,
    assert_unchanged,
    clock_moved,
    parse_json,
    run_aimos,
    snapshot,
    sqlite_value,
)

USAGE = 2
FOOTER = "(--limit N, --all)"


def saved(text: str, *options: str, env: dict[str, str] | None = None) -> str:
    return run_aimos("save", text, *options, env=env).ok().out.strip()


def rows_of(result: Result) -> list[list[str]]:
    """The table's rows (header first) as cells split on runs of two spaces."""
    import re

    result.ok()
    return [re.split(r"\s{2,}", line.strip()) for line in result.out.splitlines() if line.strip()]


def listed_ids(*args: str, env: dict[str, str] | None = None) -> list[str]:
    data = parse_json(run_aimos("list", "--json", "--all", *args, env=env))
    return [m["memory_id"] for m in data["memories"]]


@pytest.fixture
def many(installed: Path) -> list[str]:
    """25 memories, newest last: every third one keyed."""
    return [
        saved(f"memory number {n}", *(("--key", f"topic:{n % 3}") if n % 3 == 0 else ())) for n in range(25)
    ]


# --- the count, the limit, the key column ----------------------------------------------------------
def test_past_twenty_the_list_says_how_many_more_and_how_to_see_them(many: list[str]) -> None:
    plain = run_aimos("list").ok()
    rows = rows_of(plain)
    assert rows[0] == ["id", "key", "type", "weight", "label", "created", "text"], rows[0]
    assert [r[0] for r in rows[1:]] == [m[:8] for m in reversed(many)][:20]
    assert plain.err.strip().splitlines() == [f"20 of 25 memories {FOOTER}"], plain.describe()

    every = run_aimos("list", "--all").ok()
    assert len(rows_of(every)) == 26 and FOOTER not in every.err, every.describe()
    for flag in ("--limit", "-k", "-n"):  # -k: the short flag `aimos recall` uses for its count
        five = run_aimos("list", flag, "5").ok()
        assert [r[0] for r in rows_of(five)[1:]] == [m[:8] for m in reversed(many)][:5], flag
        assert f"5 of 25 memories {FOOTER}" in five.err, five.describe()
    exact = run_aimos("list", "--limit", "25").ok()
    assert len(rows_of(exact)) == 26 and exact.err == "", exact.describe()
    assert "-k, --limit" in run_aimos("recall", "--help").ok().out  # the flag list copies


def test_the_key_column_shows_each_memorys_key_or_a_dash(many: list[str]) -> None:
    rows = {r[0]: r for r in rows_of(run_aimos("list", "--all"))[1:]}
    for n, memory in enumerate(many):
        assert rows[memory[:8]][1] == (f"topic:{n % 3}" if n % 3 == 0 else "-"), rows[memory[:8]]
    long_key = "project:" + "x" * 60
    keyed = saved("a memory with a long key", "--key", long_key)
    row = next(r for r in rows_of(run_aimos("list", "-k", "1")) if r[0] == keyed[:8])
    assert row[1].startswith("project:xxx") and row[1].endswith("…") and len(row[1]) <= 24, row


def test_json_carries_the_total_and_the_protocols_words(many: list[str]) -> None:
    data = parse_json(run_aimos("list", "--json", "-k", "3", "--label", "not judged"))
    assert data["total"] == 25 and data["guides_hidden"] == 0, data
    assert [m["memory_id"] for m in data["memories"]] == list(reversed(many))[:3]
    assert data["filters"] == {"label": "unverified"}, data["filters"]
    assert {m["epistemic_label"] for m in data["memories"]} == {"unverified"}
    assert parse_json(run_aimos("list", "--json", "--all"))["total"] == 25


# --- the filters ----------------------------------------------------------------------------------
@pytest.fixture
def varied(installed: Path) -> dict[str, str]:
    run_aimos("agent", "enroll", "helper").ok()
    made = {
        "boiler": saved("The boiler is serviced in October", "--key", "home:boiler", "--type", "fact"),
        "wifi": saved("Reboot the router by holding reset", "--key", "home:wifi", "--type", "procedure"),
        "standup": saved("Standup is at 09:30", "--key", "work:standup", "--type", "fact"),
        "imported": saved("A line from my notes", "--source", "import:markdown:notes.md"),
        "helper": saved("The helper agent noticed this", "--as", "helper"),
        "plain": saved("A plain note"),
    }
    run_aimos("label", made["standup"], "dispute", "--reason", "it moved to 10:00").ok()
    return made


def test_each_filter_narrows_the_list(varied: dict[str, str]) -> None:
    m = varied
    assert set(listed_ids("--type", "fact")) == {m["boiler"], m["standup"]}
    assert set(listed_ids("--key", "home:")) == {m["boiler"], m["wifi"]}
    assert listed_ids("--key", "home:wifi") == [m["wifi"]]
    assert listed_ids("--source", "import") == [m["imported"]]
    assert listed_ids("--source", "cli:helper") == [m["helper"]]
    assert set(listed_ids("--source", "cli")) == set(m.values()) - {m["imported"]}
    for word in ("disputed", "dispute", "disputed: a person doubts it", "DISPUTED"):
        assert listed_ids("--label", word) == [m["standup"]], word
    for word in ("not judged", "not-judged", "unverified"):
        assert set(listed_ids("--label", word)) == set(m.values()) - {m["standup"]}, word
    assert listed_ids("--label", "poison") == []


def test_filters_compose(varied: dict[str, str]) -> None:
    m = varied
    assert listed_ids("--type", "fact", "--key", "home:") == [m["boiler"]]
    assert listed_ids("--type", "fact", "--label", "disputed", "--since", "1d") == [m["standup"]]
    assert listed_ids("--type", "procedure", "--label", "disputed") == []
    counted = run_aimos("list", "--type", "fact", "-k", "1").ok()
    assert "1 of 2 matching memories (--limit N, --all)" in counted.err, counted.describe()
    none = run_aimos("list", "--type", "fact", "--source", "import")
    assert none.ok().out == "" and "no memory matches these filters" in none.err, none.describe()


def test_a_type_the_brain_does_not_have_names_the_types_it_has(varied: dict[str, str]) -> None:
    result = run_aimos("list", "--type", "facts").ok()
    assert result.out == "", result.describe()
    assert "no memory has type 'facts'; the types in this brain: fact, note, procedure" in result.err


def test_since_takes_a_date_or_a_span(installed: Path) -> None:
    """Two memories saved now, one ten days on (the clock moved with libfaketime): --since keeps
    those saved at or after the moment it names, in UTC as aimos shows times."""
    old = [saved("saved on the first day"), saved("also saved on the first day")]
    later = clock_moved(10)
    new = saved("saved ten days later", env=later)
    assert listed_ids("--since", "2d", env=later) == [new]
    assert set(listed_ids("--since", "30d", env=later)) == {new, *old}
    assert listed_ids("--since", "today", env=later) == [new]
    assert set(listed_ids("--since", "yesterday")) == {new, *old}  # the later one is later still
    created = int(
        sqlite_value(installed / BRAIN, f"SELECT created_at FROM memories WHERE memory_id = '{new}'")
    )
    day = datetime.fromtimestamp(created, tz=UTC)
    assert listed_ids("--since", day.strftime("%Y-%m-%d"), env=later) == [new]
    first = int(
        sqlite_value(installed / BRAIN, f"SELECT created_at FROM memories WHERE memory_id = '{old[1]}'")
    )
    moment = datetime.fromtimestamp(first + 120, tz=UTC)
    assert listed_ids("--since", moment.strftime("%Y-%m-%dT%H:%M"), env=later) == [new]
    earliest = int(
        sqlite_value(installed / BRAIN, f"SELECT created_at FROM memories WHERE memory_id = '{old[0]}'")
    )
    first_day = datetime.fromtimestamp(earliest, tz=UTC)  # not moment's day: +120 s may cross midnight
    assert set(listed_ids("--since", first_day.strftime("%Y-%m-%d 00:00Z"), env=later)) == {new, *old}
    shown = run_aimos("list", "--since", "1w", env=later).ok()
    assert new[:8] in shown.out and old[0][:8] not in shown.out, shown.describe()


# --- bad values: a usage error that names the fix, and nothing changed -------------------------------
@pytest.mark.parametrize(
    ("args", "problem", "fix"),
    [
        (("--label", "bogus"), "unknown label 'bogus'", "not judged"),
        (("--label", "confirm"), "unknown label 'confirm'", "not-poison"),
        (("--since", "7x"), "is not a date or a span of time", "7d"),
        (("--since", "2025-02-30"), "is not a date or a span of time", "2025-03-01"),
        (("--since", "2025-03-01T25:00"), "is not a date or a span of time", "UTC"),
        (("--since", "9999-01-01"), "is in the future", "--since 7d"),
        (("--since", "-7d"), "is not a date or a span of time", "12h"),
        (("--type", ""), "--type is empty", "leave it out"),
        (("--key", "  "), "--key is empty", "leave it out"),
        (("--source", ""), "--source is empty", "leave it out"),
        (("--label", ""), "--label is empty", "leave it out"),
        (("--all", "--limit", "3"), "--all and --limit", "one of them"),
    ],
)
def test_a_bad_filter_is_a_usage_error_with_its_fix(
    installed: Path, args: tuple[str, ...], problem: str, fix: str
) -> None:
    saved("one memory to keep")
    before = snapshot(installed)
    for json_out in ((), ("--json",)):
        result = run_aimos("list", *args, *json_out)
        assert_refused(result, USAGE, fix)
        assert problem in result.err and result.out == "", result.describe()
    assert_unchanged(installed, before)


@pytest.mark.parametrize("limit", ["0", "-3", "100001", "many"])
def test_a_bad_limit_is_a_usage_error(installed: Path, limit: str) -> None:
    result = run_aimos("list", "--limit", limit)
    assert result.code == USAGE and result.out == "" and "Traceback" not in result.both, result.describe()


# --- the attacks ------------------------------------------------------------------------------------
def test_filter_text_is_matched_as_text_never_as_sql_or_a_pattern(
    varied: dict[str, str], installed: Path
) -> None:
    """A careless person (or a script fed someone else's text) passes LIKE wildcards, quotes and
    SQL: they are only ever the text a key or source must start with."""
    odd = saved("a key that starts with a percent sign", "--key", "%done")
    before = snapshot(installed)
    assert listed_ids("--key", "%") == [odd]
    assert listed_ids("--key", "_") == []
    assert listed_ids("--source", "%") == []
    for hostile in ("' OR 1=1 --", "home:' OR '1'='1", "x'); DROP TABLE memories; --"):
        assert listed_ids("--key", hostile) == [], hostile
        assert listed_ids("--type", hostile) == [], hostile
        assert listed_ids("--source", hostile) == [], hostile
    assert_unchanged(installed, before)
    assert len(listed_ids()) == len(varied) + 1


def _redact(mid: str) -> Any:
    return run_aimos("redact", mid[:8], "--reason", "not mine to keep", input=f"redact {mid[:8]}\n").ok()


def test_a_redacted_memory_is_listed_without_its_text_key_or_source(installed: Path) -> None:
    """After a redaction the list shows the notice and a dash for the key, and no filter finds the
    memory by what was taken out (the row no longer holds it)."""
    private = "my neighbour Ilsabet keeps the spare bicycle in shed seven"
    gone = saved(private, "--key", "home:side-door", "--source", "import:markdown:doors.md")
    kept = saved("the front door sticks in winter", "--key", "home:front-door")
    _redact(gone)
    rows = {r[0]: r for r in rows_of(run_aimos("list"))[1:]}
    assert rows[gone[:8]][1] == "-" and rows[gone[:8]][-1].startswith("[redacted by the master"), rows
    assert rows[kept[:8]][1] == "home:front-door"
    assert listed_ids("--key", "home:") == [kept]
    assert listed_ids("--key", "home:side-door") == []
    assert listed_ids("--source", "import") == []
    for args in ((), ("--json",), ("--history", "--json")):
        out = run_aimos("list", "--all", *args).ok().out
        assert "Ilsabet" not in out and "shed seven" not in out and "side-door" not in out, args
