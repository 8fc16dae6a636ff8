"""`aimos verify` says how far it has got: a progress line on stderr, drawn in place when stderr is
a terminal (a real pseudo-terminal here) and wiped when the work is done; nothing of it in a pipe
or a log. The helper itself: phases, escaping, and silence off a terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path

from support.cli import run_aimos, run_on_a_terminal

from aimos.cli.output import phase_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_shows_each_phase_and_goes_at_the_end() -> None:
    screen = Terminal()
    tell = phase_progress(4, "verifying", screen)
    tell(0, "in-database verifier")
    tell(2, "portable \x1b[2J verifier")  # a phase name is shown escaped, never obeyed
    tell(4, "done")
    drawn = screen.getvalue()
    assert "\rverifying [....................] 0/4 in-database verifier" in drawn
    assert "\rverifying [##########..........] 2/4 portable \\x1b[2J verifier" in drawn
    assert drawn.endswith("\r\x1b[K")  # wiped: what the command prints next starts clean
    quiet = io.StringIO()
    phase_progress(4, "verifying", quiet)(1, "x")
    assert quiet.getvalue() == ""


def test_the_line_counts_a_phase_s_items() -> None:
    screen = Terminal()
    shown = phase_progress(4, "verifying", screen)
    shown(0, "in-database verifier")
    shown.count(1500, 100_000)
    shown(2, "portable verifier")
    shown.count(100_000, 100_000)
    drawn = screen.getvalue()
    assert "\rverifying [....................] 0/4 in-database verifier 1,500/100,000\x1b[K" in drawn
    assert "\rverifying [##########..........] 2/4 portable verifier 100,000/100,000\x1b[K" in drawn
    quiet = io.StringIO()
    phase_progress(4, "verifying", quiet).count(1, 2)
    assert quiet.getvalue() == ""


def test_verify_draws_progress_on_a_terminal_and_not_in_a_pipe(installed: Path) -> None:
    run_aimos("save", "The spare key is with the neighbour").ok()
    piped = run_aimos("verify").ok()
    assert "verifying [" not in piped.err and "verifying [" not in piped.out

    proc, drawn = run_on_a_terminal("verify")
    assert proc.returncode == 0, drawn
    text = drawn
    phases = (
        "0/5 in-database verifier",
        "1/5 cognitive export",
        "2/5 portable verifier",
        "3/5 vectors",
        "4/5 parity",
    )
    for phase in phases:
        assert phase in text, text
    # each verifier's memories counted as it goes (here one batch: all of them at once)
    for phase in ("0/5 in-database verifier", "2/5 portable verifier"):
        counted = re.search(re.escape(phase) + r" ([\d,]+)/([\d,]+)", text)
        assert counted is not None and counted[1] == counted[2] != "0", text
    assert text.rstrip("\n").endswith("\r\x1b[K"), repr(text[-40:])
    assert b"verifying" not in proc.stdout  # the report on stdout is untouched
    assert b"parity                yes" in proc.stdout
