"""The status screen, driven with Pilot on real brains: the brain, its keystore, identities and
housekeeper jobs (and what to run when the housekeeper is not running), Verify all in its worker
thread, refresh."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, run_aimos
from support.tui import cli_save, drive, lines_in, save, screen_text, settle, text_of, value
from textual.pilot import Pilot
from textual.widgets import ProgressBar, Static

from aimos.tui.status import StatusScreen
from aimos.vocabulary import DEFAULT_VALIDITY_DAYS, EXPIRY_WARNING_DAYS

DAY = 86_400


async def to_status(pilot: Pilot[Any]) -> StatusScreen:
    await pilot.press("3")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, StatusScreen)
    return screen


def test_status_shows_the_brain_identities_and_that_the_housekeeper_is_not_running(installed: Path) -> None:
    save("The boiler is serviced every October")
    brain_id = value(installed, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
    fingerprint = value(installed, "SELECT fingerprint FROM master_identity")

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        brain = text_of(screen.query_one("#status-brain", Static))
        assert brain_id in brain and fingerprint in brain
        assert str(installed / BRAIN) in brain
        assert "file keystore" in brain
        assert "memories 1" in brain
        housekeeper = screen.query_one("#status-housekeeper", Static)
        hk = text_of(housekeeper)
        assert "housekeeper NOT running" in hk
        assert "aimos housekeeper start" in hk, "it says what to run"
        for job in ("heartbeat", "nightly-dream", "weekly-audit"):
            assert job in hk
        assert any("NOT running" in line for line in lines_in(housekeeper, "yellow"))
        identities = text_of(screen.query_one("#status-identities", Static))
        assert "cli" in identities and "housekeeper" in identities and "active" in identities
        assert "none yet" in text_of(screen.query_one("#status-root", Static))
        assert "press v to verify everything" in screen_text(pilot.app)

    drive(scenario, size=(100, 40))


def test_verify_all_runs_in_a_worker_and_says_the_brain_verifies(installed: Path) -> None:
    save("The boiler is serviced every October")
    save("Alice prefers tea over coffee")

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        bar = screen.query_one("#verify-progress", ProgressBar)
        assert not bar.display
        await pilot.press("v")
        assert screen.verifying or screen.verdict is not None
        assert bar.display
        await settle(pilot)
        assert not screen.verifying
        assert screen.verdict is not None and screen.verdict["ok"]
        verdict = screen.query_one("#status-verify", Static)
        text = text_of(verdict)
        assert text.startswith("✓ the brain verifies: 2 memories"), text
        assert "parity                yes" in text
        assert screen.verdict["in_database"]["corpus_proof_root"] in text
        assert not lines_in(verdict, "red")
        assert not verdict.has_class("failed")
        assert bar.progress == bar.total
        assert "the brain verifies" in screen_text(pilot.app)

    drive(scenario, size=(100, 40))


def test_verify_all_without_a_trust_anchor_says_what_to_give(installed: Path) -> None:
    anchors = installed / "config" / "anchors.json"
    assert json.loads(anchors.read_text("utf-8")), "install writes the trust anchor"

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await to_status(pilot)
        anchors.rename(anchors.with_name("anchors.json.away"))  # lost while the TUI is open
        await pilot.press("v")
        await settle(pilot)
        assert type(app.screen).__name__ == "MessageDialog"
        text = screen_text(app)
        assert "Could not find the trust anchor" in text
        assert "--master-fingerprint" in text or "anchors.json" in text
        assert not screen.verifying, "a refused verify can be started again"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen

    drive(scenario, size=(100, 30))


def test_the_tui_does_not_open_a_brain_this_home_holds_no_anchor_for(installed: Path) -> None:
    (installed / "config" / "anchors.json").unlink()
    refused = run_aimos("tui")
    assert refused.code == 5 and "aimos anchor" in refused.err, refused.describe()


def test_refresh_shows_what_changed_outside(installed: Path) -> None:
    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        assert "memories 0" in text_of(screen.query_one("#status-brain", Static))
        cli_save("Saved from another shell while the TUI is open")
        await pilot.press("r")
        await pilot.pause()
        assert "memories 1" in text_of(screen.query_one("#status-brain", Static))

    drive(scenario, size=(100, 30))


def test_coming_back_to_status_shows_what_a_signed_action_changed(installed: Path) -> None:
    """A correction made on the memories screen adds a memory and a supersession: switching back
    to the status screen (3) shows the new counts, without having to know about r."""
    old = save("The meeting is on Monday")

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        brain = screen.query_one("#status-brain", Static)
        assert "memories 1" in text_of(brain) and "supersessions 0" in text_of(brain)
        await pilot.press("1")
        await pilot.pause()
        run_aimos("correct", old, "The meeting is on Tuesday").ok()
        assert await to_status(pilot) is screen
        await pilot.pause()
        assert "memories 2" in text_of(brain) and "supersessions 1" in text_of(brain), text_of(brain)

    drive(scenario, size=(100, 30))


def test_quitting_while_verify_all_runs_does_not_wait_for_it(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verify all on a big brain takes a minute (100,000 memories: about 80 s). q during it must
    end the app at once, not leave the terminal blank until the verifier finishes."""
    import asyncio
    import threading
    import time

    from aimos.tui.app import AimosApp

    started, release = threading.Event(), threading.Event()

    def long_verification(conn: Any, fingerprint: str, memory_id: str | None = None, **kw: Any) -> Any:
        kw["progress"](0, "in-database verifier")
        started.set()
        release.wait(60)  # a verifier still walking a big brain
        return None

    monkeypatch.setattr("aimos.tui.status.verify_everything", long_verification)

    async def main() -> float:
        app = AimosApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await to_status(pilot)
            await pilot.press("v")
            for _ in range(200):
                if started.is_set():
                    break
                await asyncio.sleep(0.05)
            assert started.is_set(), "the verification did not start"
            await pilot.pause()
            assert "verifying: in-database verifier (1 of 5)" in screen_text(app)
            await asyncio.sleep(2.5)  # a phase of a big brain takes many seconds: the time so far moves
            await pilot.pause()
            assert re.search(r"\(1 of 5\), [1-9][0-9]* s so far", screen_text(app)), screen_text(app)
            t0 = time.monotonic()
            await pilot.press("q")
        return t0

    try:
        t0 = asyncio.run(main())  # returns once the app and its worker threads have ended
        waited = time.monotonic() - t0
    finally:
        release.set()
    assert waited < 30, f"q waited {waited:.0f} s for the verification to finish"


def test_status_warns_of_an_agent_whose_epoch_ends_within_seven_days(installed: Path) -> None:
    """The app's clock 6 days before the cli agent's epoch ends: the status screen opens with the
    warning the CLI prints (the agent, when, the fix), in the warning colour; 8 days before, none."""
    started = int(time.time())

    async def six_days_left(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        expiry = screen.query_one("#status-expiry", Static)
        assert expiry.display
        text = text_of(expiry)
        assert text.startswith("warning: agent cli's epoch expires in 6 days ("), text
        assert "run `aimos agent rotate cli` or `aimos agent rotate --expiring`" in text
        assert "housekeeper" not in text
        assert lines_in(expiry, "yellow") == text.splitlines()
        assert "aimos agent rotate --expiring" in screen_text(pilot.app), "it is on screen"

    drive(six_days_left, size=(140, 40), clock=lambda: started + (DEFAULT_VALIDITY_DAYS - 6) * DAY)

    async def eight_days_left(pilot: Pilot[Any]) -> None:
        screen = await to_status(pilot)
        assert not screen.query_one("#status-expiry", Static).display
        assert "aimos agent rotate" not in screen_text(pilot.app)

    late = DEFAULT_VALIDITY_DAYS - (EXPIRY_WARNING_DAYS + 1)
    drive(eight_days_left, size=(140, 40), clock=lambda: started + late * DAY)
