"""A relative AIMOS_HOME (or XDG dir) reaches the housekeeper and its service environment as an
absolute path, resolved once."""

from __future__ import annotations

import json
from pathlib import Path

from support.installer import run_aimos
from support.process import pid_alive, read_pid_file


def test_a_relative_aimos_home_reaches_the_housekeeper_as_an_absolute_path(aimos_home: Path) -> None:
    home = aimos_home / "relative-home"
    result = run_aimos(
        "install",
        "--yes",
        "--no-guides",
        "--keystore",
        "file",
        "--service",
        "process",
        "--json",
        env={"AIMOS_HOME": "relative-home"},
        cwd=aimos_home,
    )
    pid = read_pid_file(home)
    try:
        assert result.code == 0, result.describe()
        assert result.json()["service"]["manager"] == "process"
        assert pid is not None and pid_alive(pid)
        status = run_aimos("housekeeper", "status", "--json", env={"AIMOS_HOME": str(home)}).json()
        assert status["running"] and status["ready"] and status["jobs_registered"] == 5
    finally:
        run_aimos("housekeeper", "stop", env={"AIMOS_HOME": str(home)})
    assert not (home / "relative-home").exists()  # not resolved twice


def test_the_service_environment_is_absolute(aimos_home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from aimos.installer import service

    monkeypatch.chdir(aimos_home)
    monkeypatch.setenv("AIMOS_HOME", "rel")
    monkeypatch.setenv("XDG_STATE_HOME", "~/state")
    env = service._environment()
    assert env["AIMOS_HOME"] == str(aimos_home / "rel")
    assert env["XDG_STATE_HOME"] == str(Path("~/state").expanduser())
    assert json.dumps(env)  # plain strings
