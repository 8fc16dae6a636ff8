"""Expiry you see coming, through the real CLI with the clock moved (libfaketime): from 7 days
before an agent's epoch ends every command that reads identities or signs as the agent warns on
stderr, naming the agent, when it ends and the fix; `aimos agent rotate --expiring` renews every
agent due (the expired ones too) with one passphrase, and asks for none when nothing is due."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import PASSPHRASE_ENV, Result, clock_moved, parse_json, run_aimos

from aimos.vocabulary import DEFAULT_VALIDITY_DAYS, EXPIRY_WARNING_DAYS

pytestmark = pytest.mark.timeout(300)


def at(days: float, *args: str, **kwargs: object) -> Result:
    """`aimos ARGS` with the clock ``days`` after now."""
    env = {**clock_moved(days), **kwargs.pop("env", {})}  # type: ignore[dict-item]
    return run_aimos(*args, env=env, **kwargs)  # type: ignore[arg-type]


def warnings_in(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if line.startswith("warning: agent")]


def assert_warns_of(result: Result, agent: str, valid_until: str) -> None:
    lines = [w for w in warnings_in(result) if w.startswith(f"warning: agent {agent}'s epoch")]
    assert len(lines) == 1, result.describe()
    (line,) = lines
    assert valid_until in line, line  # when it ends
    assert f"`aimos agent rotate {agent}`" in line and "`aimos agent rotate --expiring`" in line, line
    if not result.out.startswith(("{", "[")):  # `status --json` carries the warnings as data too
        assert line not in result.out, "the warning is talk: stderr only"


def with_passphrase_fd(passphrase: str, days: float, *args: str) -> Result:
    """`aimos ARGS --passphrase-fd N` at ``days`` ahead, with the passphrase written once to N (a
    second prompt would read nothing and fail) and no other source of it."""
    read_end, write_end = os.pipe()
    os.write(write_end, (passphrase + "\n").encode())
    os.close(write_end)
    try:
        return at(
            days, *args, "--passphrase-fd", str(read_end), pass_fds=(read_end,), unset=(PASSPHRASE_ENV,)
        )
    finally:
        os.close(read_end)


def agents_by_id(days: float) -> dict[str, list[dict[str, object]]]:
    listed: dict[str, list[dict[str, object]]] = {}
    for epoch in parse_json(at(days, "agent", "list", "--json")):
        listed.setdefault(str(epoch["agent_id"]), []).append(epoch)
    return listed


def test_the_default_validity_is_the_one_constant(installed: Path) -> None:
    (cli,) = agents_by_id(0)["cli"]
    days = (_ts(str(cli["valid_until"])) - _ts(str(cli["valid_from"]))) / 86_400
    assert days == DEFAULT_VALIDITY_DAYS == 90
    assert f"[default: {DEFAULT_VALIDITY_DAYS}]" in run_aimos("agent", "enroll", "--help").ok().out
    assert f"[default: {DEFAULT_VALIDITY_DAYS}]" in run_aimos("install", "--help").ok().out


def _ts(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_six_days_before_the_end_every_command_warns(installed: Path) -> None:
    six_days_left = DEFAULT_VALIDITY_DAYS - 6
    run_aimos("agent", "enroll", "helper").ok()
    until_of = {agent: str(epochs[-1]["valid_until"]) for agent, epochs in agents_by_id(0).items()}
    until = until_of["cli"]
    readers = (
        ("status",),
        ("status", "--json"),
        ("agent", "list"),
        ("agent", "list", "--json"),
    )
    args: tuple[str, ...]
    for args in readers:  # every agent due is named, each once
        result = at(six_days_left, *args).ok()
        assert_warns_of(result, "cli", until)
        assert any(w.startswith("warning: agent helper's epoch") for w in warnings_in(result)), (
            result.describe()
        )
        assert "expires in 6 days" in result.err, result.describe()
    config = at(six_days_left, "mcp", "config", "--as", "cli", "--client", "cursor").ok()
    assert_warns_of(config, "cli", until)
    assert "helper" not in config.err, "mcp config speaks of its own agent"
    saved = at(six_days_left, "save", "The boiler is serviced every October").ok()
    assert_warns_of(saved, "cli", until)
    memory_id = saved.out.strip()
    for args in (
        ("recall", "boiler"),
        ("correct", memory_id, "The boiler is serviced every November"),
        ("save", "The helper keeps the garden diary", "--as", "helper"),
    ):
        signed = at(six_days_left, *args).ok()
        agent = "helper" if "helper" in args else "cli"
        assert_warns_of(signed, agent, until_of[agent])
        assert len(warnings_in(signed)) == 1, "a command warns of the agent that signs it"
    # commands that sign nothing and name no agent say nothing of it
    assert warnings_in(at(six_days_left, "list").ok()) == []


def test_eight_days_before_the_end_nothing_warns(installed: Path) -> None:
    eight_days_left = DEFAULT_VALIDITY_DAYS - (EXPIRY_WARNING_DAYS + 1)
    for args in (
        ("status",),
        ("agent", "list"),
        ("mcp", "config", "--as", "cli", "--client", "cursor"),
        ("save", "The gas meter is read in March"),
        ("recall", "gas meter"),
    ):
        result = at(eight_days_left, *args).ok()
        assert "warning" not in result.err, result.describe()


def test_an_expired_agent_is_refused_then_rotate_expiring_renews_exactly_the_due_agents(
    installed: Path, passphrase: str
) -> None:
    run_aimos("agent", "enroll", "soon", "--validity-days", "10").ok()  # 6 days left at +4
    run_aimos("agent", "enroll", "past", "--validity-days", "1").ok()  # expired at +4
    run_aimos("agent", "enroll", "later", "--validity-days", "30").ok()  # 26 days left: not due
    run_aimos("agent", "enroll", "stopped", "--validity-days", "1").ok()
    run_aimos("agent", "revoke", "stopped").ok()  # revoked on purpose: never rotated back to life
    before = agents_by_id(4)

    refused = at(4, "save", "written by an expired agent", "--as", "past")
    assert refused.code == 6, refused.describe()
    assert "expired" in refused.err and "aimos agent rotate --expiring" in refused.err

    rotated = with_passphrase_fd(passphrase, 4, "agent", "rotate", "--expiring", "--validity-days", "30")
    assert [line.split(":")[0] for line in rotated.ok().out.splitlines()] == ["rotated past", "rotated soon"]

    after = agents_by_id(4)
    for agent in ("past", "soon"):
        assert len(after[agent]) == len(before[agent]) + 1, after[agent]
        assert after[agent][-1]["state"] == "active"
        assert after[agent][-1]["grant"] == before[agent][-1]["grant"], "the grant's ceilings are kept"
    for agent in ("cli", "later", "stopped", "housekeeper"):
        assert after[agent] == before[agent], f"{agent} was not due and is unchanged"
    assert at(4, "save", "written after the rotation", "--as", "past").ok().out.strip()

    # nothing due: it says so and asks for no passphrase (there is no source of one)
    again = at(4, "agent", "rotate", "--expiring", unset=(PASSPHRASE_ENV,)).ok()
    assert again.out == "no agent's epoch ends within 7 days: nothing to rotate\n", again.describe()
    assert parse_json(at(4, "agent", "rotate", "--expiring", "--json", unset=(PASSPHRASE_ENV,))) == []
    # --within looks further ahead: every agent whose epoch ends within 40 days (cli has 86 left)
    wider = with_passphrase_fd(passphrase, 4, "agent", "rotate", "--expiring", "--within", "40", "--json")
    assert [r["agent_id"] for r in parse_json(wider)] == ["later", "past", "soon"]


def test_the_issues_scenario_35_days_on(installed: Path, passphrase: str) -> None:
    """A 30-day agent (the old default) 35 days on: refused with the fix; one rotate makes it work."""
    run_aimos("agent", "enroll", "monthly", "--validity-days", "30").ok()
    refused = at(35, "save", "after a month", "--as", "monthly")
    assert refused.code == 6 and "expired" in refused.err, refused.describe()
    status = at(35, "status").ok()
    assert any("monthly's epoch expired at" in w for w in warnings_in(status)), status.describe()
    rotated = with_passphrase_fd(passphrase, 35, "agent", "rotate", "--expiring").ok()
    assert rotated.out.startswith("rotated monthly: new epoch valid until"), rotated.describe()
    assert at(35, "save", "after a month", "--as", "monthly").ok()
    assert "monthly" not in at(35, "status").ok().err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("agent", "rotate"), "--expiring"),
        (("agent", "rotate", "cli", "--expiring"), "not both"),
        (("agent", "rotate", "--expiring", "--within", "400"), "--within 0..365"),
    ],
)
def test_rotate_refuses_unclear_requests_before_any_passphrase(
    installed: Path, args: tuple[str, ...], words: str
) -> None:
    result = run_aimos(*args, unset=(PASSPHRASE_ENV,))
    assert result.code == 2, result.describe()
    assert words in result.err and "passphrase" not in result.err, result.describe()
