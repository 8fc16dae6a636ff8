"""The memories screen, driven with Pilot on real brains: the empty state, the list, opening a
memory, the filters (text, type, label, scope), sort cycling and reverse, the history toggle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.cli import run_aimos
from support.tui import (
    choose,
    cli_save,
    drive,
    focused_now,
    memory_field,
    save,
    screen_text,
    shown_ids,
    summary,
    text_of,
    type_text,
)
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from aimos.memory.versions import SORTS
from aimos.tui.detail import MemoryScreen
from aimos.tui.memories import MemoriesScreen
from aimos.tui.memory_table import MemoryTable


def test_empty_brain_says_what_to_run_then_reload_shows_the_first_memory(installed: Path) -> None:
    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, MemoriesScreen)
        assert screen.query_one("#empty-brain").display
        assert not screen.query_one(MemoryTable).display
        text = screen_text(app)
        assert "This brain has no memories yet." in text
        assert 'aimos save "' in text, "the empty state must say what to run"
        await pilot.press("enter")  # nothing to open: no crash, no screen
        await pilot.pause()
        assert app.screen is screen

        memory = cli_save("The boiler is serviced every October")  # from another shell
        await pilot.press("r")
        await pilot.pause()
        assert not screen.query_one("#empty-brain").display
        assert screen.query_one(MemoryTable).display
        assert shown_ids(pilot) == [memory]
        assert memory[:8] in screen_text(app)
        assert "no memories yet" not in screen_text(app)

    drive(scenario)


def test_the_list_shows_every_memory_and_enter_opens_the_one_under_the_cursor(installed: Path) -> None:
    made = [save(f"memory number {n} about gardening") for n in range(3)]

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert sorted(shown_ids(pilot)) == sorted(made)
        assert summary(pilot).startswith("3 memories")
        text = screen_text(app)
        for memory in made:
            assert memory[:8] in text
        table = app.screen.query_one(MemoryTable)
        assert app.focused is table
        await pilot.press("down")
        await pilot.pause()
        assert table.cursor == 1
        wanted = shown_ids(pilot)[1]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        assert app.screen.memory_id == wanted
        assert wanted in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MemoriesScreen)
        assert table.cursor == 1, "back from a memory, the cursor stays where it was"

    drive(scenario)


def test_text_filter_narrows_the_list_and_escape_clears_it(installed: Path) -> None:
    boiler = save("The boiler is serviced every October", "--key", "home:boiler")
    save("Alice prefers tea over coffee")
    save("The car needs new tyres before winter")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("slash")
        await pilot.pause()
        assert app.focused is app.screen.query_one("#filter-text", Input)
        await type_text(pilot, "boil")
        await pilot.press("enter")
        await pilot.pause()
        assert shown_ids(pilot) == [boiler]
        assert summary(pilot).startswith("1 of 3 memories")
        assert focused_now(app) is app.screen.query_one(MemoryTable), (
            "enter in the filter goes back to the list"
        )

        await pilot.press("slash")
        await type_text(pilot, " zebra")
        await pilot.press("enter")
        await pilot.pause()
        assert shown_ids(pilot) == []
        assert "nothing matches: escape clears the filter" in summary(pilot)
        assert not app.screen.query_one("#empty-brain").display, (
            "a filter with no match is not an empty brain"
        )

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one("#filter-text", Input).value == ""
        assert len(shown_ids(pilot)) == 3
        assert summary(pilot).startswith("3 memories")

    drive(scenario)


def test_the_text_filter_finds_any_part_of_a_word_in_any_script(installed: Path) -> None:
    boiler = save("The boiler is serviced every October", "--key", "home:boiler")
    tower = save("東京タワーは高さ333メートルです")
    cafe = save("Meet Zoë at the Café on Rue de la Paix")
    save("Alice prefers tea over coffee")

    async def scenario(pilot: Pilot[Any]) -> None:
        for typed, wanted in (
            ("oiler", [boiler]),  # inside a word
            ("OILER", [boiler]),
            ("東京", [tower]),  # text without spaces: any part of it
            ("タワー", [tower]),
            ("cafe", [cafe]),  # a word's start, accents folded by the index
            ("zoe caf", [cafe]),
            ("e:boi", [boiler]),  # across the key
            ("oiler zebra", []),
        ):
            await pilot.press("slash")
            box = pilot.app.screen.query_one("#filter-text", Input)
            box.value = ""
            await type_text(pilot, typed)
            await pilot.press("enter")
            await pilot.pause()
            assert sorted(shown_ids(pilot)) == sorted(wanted), typed

    drive(scenario)


def test_the_text_filter_applies_while_typing(installed: Path) -> None:
    tea = save("Alice prefers tea over coffee")
    save("The boiler is serviced every October")

    async def scenario(pilot: Pilot[Any]) -> None:
        await pilot.press("slash")
        await type_text(pilot, "tea")
        await pilot.pause(0.4)  # past the debounce, without pressing enter
        assert shown_ids(pilot) == [tea]

    drive(scenario)


def test_type_label_and_scope_filters(installed: Path) -> None:
    fact = save("Water boils at 100 degrees at sea level", "--type", "fact")
    team = save("The team standup is at nine", "--scope", "team")
    doubtful = save("The moon is made of cheese")
    plain = save("Buy milk on the way home")
    run_aimos("label", doubtful, "dispute", "--reason", "sounds wrong").ok()
    assert memory_field(installed, doubtful, "epistemic_label") == "disputed"

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = app.screen
        everything = sorted([fact, team, doubtful, plain])
        assert sorted(shown_ids(pilot)) == everything

        await choose(pilot, screen.query_one("#filter-type", Select), "fact")
        assert shown_ids(pilot) == [fact]
        assert summary(pilot).startswith("1 of 4 memories")

        await pilot.press("escape")  # clears every filter
        await pilot.pause()
        assert sorted(shown_ids(pilot)) == everything

        await choose(pilot, screen.query_one("#filter-label", Select), "disputed")
        assert shown_ids(pilot) == [doubtful]
        await pilot.press("escape")
        await pilot.pause()

        await choose(pilot, screen.query_one("#filter-scope", Select), "team")
        assert shown_ids(pilot) == [team]
        # filters add up: team scope and type fact match nothing
        await choose(pilot, screen.query_one("#filter-type", Select), "fact")
        assert shown_ids(pilot) == []
        await pilot.press("escape")
        await pilot.pause()
        assert sorted(shown_ids(pilot)) == everything

    drive(scenario)


def test_sort_cycles_through_every_column_and_reverses(installed: Path) -> None:
    by_key = {k: save(f"value for {k}", "--key", k) for k in ("bravo", "alpha", "charlie")}

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, MemoriesScreen)
        names = list(SORTS)
        assert screen.sort == names[0] and screen.descending
        seen = [screen.sort]
        for _ in names:
            await pilot.press("o")
            await pilot.pause()
            seen.append(screen.sort)
            assert f"sorted by {screen.sort} ▼" in summary(pilot)
        assert seen == [*names, names[0]], "o cycles through every sort and back"

        while screen.sort != "key":
            await pilot.press("o")
            await pilot.pause()
        assert shown_ids(pilot) == [by_key[k] for k in ("charlie", "bravo", "alpha")]
        await pilot.press("v")
        await pilot.pause()
        assert not screen.descending
        assert "sorted by key ▲" in summary(pilot)
        assert shown_ids(pilot) == [by_key[k] for k in ("alpha", "bravo", "charlie")]
        await pilot.press("v")
        await pilot.pause()
        assert shown_ids(pilot) == [by_key[k] for k in ("charlie", "bravo", "alpha")]

    drive(scenario, size=(120, 24))


def test_the_header_marks_the_sorted_column_for_every_sort(installed: Path) -> None:
    save("one memory", "--key", "k")

    async def scenario(pilot: Pilot[Any]) -> dict[str, str]:
        screen = pilot.app.screen
        assert isinstance(screen, MemoriesScreen)
        headers = {}
        for _ in SORTS:
            for arrow, reverse in (("▼", False), ("▲", True)):
                if reverse:
                    await pilot.press("v")
                    await pilot.pause()
                header = text_of(screen.query_one("#list-header", Static))
                titles = {c.name: c.title for c in screen.query_one(MemoryTable).columns()}
                assert screen.sort in titles, f"at 120 columns the {screen.sort} column is shown"
                headers[f"{screen.sort}{arrow}"] = header
            await pilot.press("v", "o")  # back to descending, next sort
            await pilot.pause()
        return headers

    headers = drive(scenario, size=(120, 24))
    assert len(headers) == 2 * len(SORTS)
    title = {"clearance": "clr"}
    unmarked = [
        f"{name}: {header!r}"
        for name, header in headers.items()
        if f"{title.get(name[:-1], name[:-1])}{name[-1]}" not in header
    ]
    assert not unmarked, "the header does not show which column is sorted:\n" + "\n".join(unmarked)


def test_history_toggle_shows_superseded_versions(installed: Path) -> None:
    old = save("The meeting is on Monday")
    other = save("Buy milk on the way home")
    new = run_aimos("correct", old, "The meeting is on Tuesday").ok().out.strip()
    assert new and new != old

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = pilot.app.screen
        assert sorted(shown_ids(pilot)) == sorted([new, other])
        assert summary(pilot).startswith("2 memories")
        await pilot.press("h")
        await pilot.pause()
        assert sorted(shown_ids(pilot)) == sorted([old, new, other])
        assert summary(pilot).startswith("3 memories and superseded versions")
        old_row = next(line for line in screen_text(pilot.app).splitlines() if line.startswith(old[:8]))
        assert "superseded" in old_row, f"the old version is not marked as superseded: {old_row!r}"
        assert isinstance(screen, MemoriesScreen) and screen.include_history
        await pilot.press("h")
        await pilot.pause()
        assert sorted(shown_ids(pilot)) == sorted([new, other])

    drive(scenario)


def test_the_list_scrolls_with_the_cursor(installed: Path) -> None:
    # thirty saves through the CLI would be slow: real signed saves, in process, in one go
    from aimos.actions.memory import NewMemory
    from aimos.actions.memory import save as signed_save
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        for n in range(30):
            signed_save(brain, "cli", NewMemory(value=f"shelf item {n}"))

    async def scenario(pilot: Pilot[Any]) -> None:
        table = pilot.app.screen.query_one(MemoryTable)
        assert len(table.rowids) == 30
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor == 29
        assert table.scroll_offset.y > 0, "the last row must be scrolled into view"
        last = shown_ids(pilot)[29]
        assert last[:8] in screen_text(pilot.app)
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor == 0 and table.scroll_offset.y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert table.cursor > 1

    drive(scenario)


def test_the_cursor_stays_on_its_memory_when_the_list_refreshes(installed: Path) -> None:
    """Coming back to the list (from help, a memory, a dialog) reloads it; a memory saved from
    elsewhere meanwhile moves every row down one. The cursor must stay on the memory it was on,
    not on the line, or enter opens a memory the person did not choose."""
    save("The boiler is serviced every October")
    chosen = save("Herons eat fish and frogs")
    save("Alice prefers tea over coffee")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = app.screen
        table = screen.query_one(MemoryTable)
        await pilot.press("down")
        await pilot.pause()
        assert table.current is not None and table.current["memory_id"] == chosen
        newer = save("The recycling goes out on Thursdays")  # as from another shell
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        assert shown_ids(pilot)[0] == newer, "the refresh shows the new memory"
        assert table.current is not None and table.current["memory_id"] == chosen, (
            f"the cursor moved to {table.current and table.current['memory_id']}"
        )
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen) and app.screen.memory_id == chosen

    drive(scenario)


def test_every_key_the_empty_state_names_reloads_the_list(installed: Path) -> None:
    """The empty state tells a person which key to press after saving from a shell: each key it
    names must bring the new memory in (1 does not: it is the screen already shown)."""
    import re

    from aimos.tui.memories import EMPTY_BRAIN

    line = next(x for x in EMPTY_BRAIN.splitlines() if "reload" in x)
    keys = re.findall(r"\b(?:press|or) (\w)\b", line)
    assert keys, line

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert "no memories yet" in screen_text(app)
        for n, key in enumerate(keys):
            memory = cli_save(f"Saved from another shell, number {n}")
            await pilot.press(key)
            await pilot.pause()
            assert memory in shown_ids(pilot), f"{key!r} (named in {line!r}) did not reload the list"

    drive(scenario)
