"""The service templates in packaging/: exactly the agreed placeholders, and they render to valid files.

The installer renders them; these tests pin the contract it relies on (placeholder names,
string.Template syntax) and that a rendering parses: the plist with plistlib, the unit line by line.
"""

from __future__ import annotations

import plistlib
import string
from pathlib import Path

from support.dist import _unit_settings

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "packaging/systemd/aimos-housekeeper.service.in"
PLIST = REPO / "packaging/launchd/org.aimos.housekeeper.plist.in"


def _template(path: Path) -> string.Template:
    template = string.Template(path.read_text("utf-8"))
    assert template.is_valid(), f"{path} has a stray '$' (write '$$' for a literal dollar sign)"
    return template


def test_unit_placeholders_are_exactly_the_agreed_ones() -> None:
    assert set(_template(UNIT).get_identifiers()) == {
        "description",
        "exec_start",
        "environment",
        "working_directory",
    }


def test_plist_placeholders_are_exactly_the_agreed_ones() -> None:
    assert set(_template(PLIST).get_identifiers()) == {
        "label",
        "program_arguments",
        "environment",
        "stdout_path",
        "stderr_path",
        "working_directory",
    }


def test_unit_renders_with_the_agreed_service_settings() -> None:
    rendered = _template(UNIT).substitute(
        description="aimos housekeeper",
        exec_start='"/opt/aimos venv/bin/aimos" housekeeper run',
        environment='Environment="AIMOS_HOME=/home/u/.local/share/aimos"\nEnvironment="A=b"',
        working_directory="/home/u",
    )
    settings = _unit_settings(rendered)
    assert set(settings) == {"Unit", "Service", "Install"}
    assert settings["Unit"]["Description"] == ["aimos housekeeper"]
    service = {key: values[-1] for key, values in settings["Service"].items()}
    assert service == {
        "Type": "simple",
        "WorkingDirectory": "/home/u",
        "Environment": '"A=b"',
        "ExecStart": '"/opt/aimos venv/bin/aimos" housekeeper run',
        "Restart": "on-failure",
        "RestartPreventExitStatus": "3 7",
        "RestartSec": "5",
        "KillSignal": "SIGTERM",
        "TimeoutStopSec": "120",
        "UMask": "0077",
    }
    assert settings["Service"]["Environment"] == ['"AIMOS_HOME=/home/u/.local/share/aimos"', '"A=b"']
    assert settings["Install"] == {"WantedBy": ["default.target"]}


def test_unit_renders_without_environment() -> None:
    rendered = _template(UNIT).substitute(
        description="d", exec_start="/bin/aimos housekeeper run", environment="", working_directory="/w"
    )
    assert "Environment" not in _unit_settings(rendered)["Service"]


def test_plist_renders_to_a_valid_launchd_agent() -> None:
    rendered = _template(PLIST).substitute(
        label="org.aimos.housekeeper",
        program_arguments="        <string>/opt/aimos/bin/aimos</string>\n        <string>housekeeper</string>",
        environment="        <key>AIMOS_HOME</key><string>/Users/u/aimos &amp; co</string>",
        stdout_path="/Users/u/Library/Logs/aimos/housekeeper.out.log",
        stderr_path="/Users/u/Library/Logs/aimos/housekeeper.err.log",
        working_directory="/Users/u",
    )
    agent = plistlib.loads(rendered.encode("utf-8"))
    assert agent == {
        "Label": "org.aimos.housekeeper",
        "ProgramArguments": ["/opt/aimos/bin/aimos", "housekeeper"],
        "EnvironmentVariables": {"AIMOS_HOME": "/Users/u/aimos & co"},
        "WorkingDirectory": "/Users/u",
        "StandardOutPath": "/Users/u/Library/Logs/aimos/housekeeper.out.log",
        "StandardErrorPath": "/Users/u/Library/Logs/aimos/housekeeper.err.log",
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "ExitTimeOut": 120,
        "Umask": 0o077,
    }


def test_plist_renders_without_environment() -> None:
    rendered = _template(PLIST).substitute(
        label="l",
        program_arguments="<string>/a</string>",
        environment="",
        stdout_path="/o",
        stderr_path="/e",
        working_directory="/w",
    )
    assert plistlib.loads(rendered.encode("utf-8"))["EnvironmentVariables"] == {}
