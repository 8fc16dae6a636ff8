"""aimos.installer.service renders the templates with this installation's paths and environment."""

from __future__ import annotations

import plistlib
import shlex
import sys
from pathlib import Path

import pytest
from support.dist import _unit_settings


def test_systemd_unit_runs_this_python_with_this_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos.installer import service

    home = tmp_path / "odd home %h"
    monkeypatch.setenv("AIMOS_HOME", str(home))
    monkeypatch.setenv("AIMOS_KEYSTORE", 'file"quoted')
    unit = service.render_systemd_unit("0123456789abcdef")
    settings = _unit_settings(unit)
    service_section = settings["Service"]
    # systemd expands %-specifiers: every % the renderer inserts is doubled
    exec_start = service_section["ExecStart"][0].replace("%%", "%")
    assert shlex.split(exec_start) == [sys.executable, "-m", "aimos", "housekeeper", "run"]
    assert service_section["WorkingDirectory"] == [str(home).replace("%", "%%")]
    envs = service_section["Environment"]
    assert f'"AIMOS_HOME={str(home).replace("%", "%%")}"' in envs
    assert '"AIMOS_KEYSTORE=file\\"quoted"' in envs
    assert service_section["Restart"] == ["on-failure"]
    assert "0123456789abcdef" in settings["Unit"]["Description"][0]
    assert "${" not in unit


def test_systemd_unit_without_aimos_home_sets_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from aimos.installer import service

    for name in ("AIMOS_HOME", "AIMOS_KEYSTORE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert "Environment" not in _unit_settings(service.render_systemd_unit("0123456789abcdef"))["Service"]


def test_launchd_plist_parses_with_the_arguments_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos.housekeeper import state
    from aimos.installer import service

    home = tmp_path / "home <&>"
    monkeypatch.setenv("AIMOS_HOME", str(home))
    for name in ("AIMOS_KEYSTORE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    plist = plistlib.loads(service.render_launchd_plist("0123456789abcdef").encode())
    assert plist["Label"] == "org.aimos.housekeeper.01234567"
    assert plist["ProgramArguments"] == [sys.executable, "-m", "aimos", "housekeeper", "run"]
    assert plist["EnvironmentVariables"] == {"AIMOS_HOME": str(home)}
    assert plist["WorkingDirectory"] == str(home)
    assert plist["StandardErrorPath"] == str(state.log_path())
    assert plist["KeepAlive"] == {"SuccessfulExit": False}


def test_service_choice_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from aimos.errors import UsageError
    from aimos.installer import service

    with pytest.raises(UsageError, match="unknown service choice"):
        service.choose_manager("cron")
    assert service.choose_manager("none") is None
    assert service.choose_manager("process") == "process"
    if not service.systemd_user_available():
        with pytest.raises(UsageError, match="no systemd user session"):
            service.choose_manager("systemd")
    else:
        assert service.choose_manager("systemd") == "systemd"
