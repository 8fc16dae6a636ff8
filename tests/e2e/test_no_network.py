"""SPEC section 1.6: aimos opens no network connection of its own.

Every command runs as a real subprocess with a `sitecustomize.py` on PYTHONPATH that wraps
socket.socket.connect / connect_ex / sendto, socket.create_connection, socket.getaddrinfo and the
gethostby* lookups: any AF_INET / AF_INET6 attempt (and any name lookup) is written to a log file
and refused. AF_UNIX stays allowed (the D-Bus session of the OS keychain uses it). A positive
control shows the hook does catch an attempt.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.e2e import Result, require_keychain, run_aimos

pytestmark = pytest.mark.timeout(180)

HOOK = '''
"""Test hook (tests/e2e/test_no_network.py): record and refuse every IPv4/IPv6 network attempt."""
import os
import socket

_LOG = os.environ.get("AIMOS_TEST_NETLOG")
_LOADED = os.environ.get("AIMOS_TEST_NETHOOK_LOADED")
_INET = (socket.AF_INET, socket.AF_INET6)


def _record(what, detail):
    with open(_LOG, "a", encoding="utf-8") as f:
        f.write(f"pid {os.getpid()} {what} {detail!r}\\n")


def _refuse(what, detail):
    _record(what, detail)
    raise PermissionError(f"network access blocked by the aimos test hook: {what} {detail!r}")


if _LOG:
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex
    _sendto = socket.socket.sendto

    def connect(self, address):
        if self.family in _INET:
            _refuse("connect", address)
        return _connect(self, address)

    def connect_ex(self, address):
        if self.family in _INET:
            _refuse("connect_ex", address)
        return _connect_ex(self, address)

    def sendto(self, *args):
        if self.family in _INET:
            _refuse("sendto", args[-1])
        return _sendto(self, *args)

    def create_connection(address, *args, **kwargs):
        _refuse("create_connection", address)

    def getaddrinfo(host, port, *args, **kwargs):
        _refuse("getaddrinfo", (host, port))

    def gethostbyname(host):
        _refuse("gethostbyname", host)

    def gethostbyname_ex(host):
        _refuse("gethostbyname_ex", host)

    def gethostbyaddr(host):
        _refuse("gethostbyaddr", host)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.socket.sendto = sendto
    socket.create_connection = create_connection
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.gethostbyaddr = gethostbyaddr
    if _LOADED:
        with open(_LOADED, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\\n")
'''


class Hook:
    def __init__(self, root: Path):
        self.dir = root / "nethook"
        self.dir.mkdir()
        (self.dir / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
        self.log = root / "network-attempts.log"
        self.loaded = root / "hook-loaded.log"
        path = [str(self.dir), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
        self.env = {
            "PYTHONPATH": os.pathsep.join(path),
            "AIMOS_TEST_NETLOG": str(self.log),
            "AIMOS_TEST_NETHOOK_LOADED": str(self.loaded),
        }

    def attempts(self) -> str:
        return self.log.read_text("utf-8") if self.log.exists() else ""

    def loads(self) -> int:
        return len(self.loaded.read_text("utf-8").splitlines()) if self.loaded.exists() else 0

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    return Hook(tmp_path)


def test_main_commands_open_no_network_connection(aimos_home: Path, keystore: str, hook: Hook) -> None:
    if keystore == "os":
        require_keychain()
    results: list[Result] = []

    def run(*args: str, input: str | None = None) -> Result:
        result = run_aimos(*args, input=input, env=hook.env)
        results.append(result)
        assert not hook.attempts(), f"network attempt during aimos {' '.join(args)}:\n{hook.attempts()}"
        return result.ok()

    run("install", "--yes", "--no-guides", "--keystore", keystore)
    memory_id = run("save", "aimos stays on this machine").out.strip()
    run("save", input="and so does this memory from stdin")
    run("show", memory_id)
    run("show", memory_id[:8], "--json")
    run("list")
    run("list", "--json", "--history")
    run("correct", memory_id, "aimos stays on this machine, always")
    run("status")
    run("status", "--json")
    run("agent", "enroll", "bob")
    run("agent", "list")
    run("agent", "list", "--json")
    run("eval", "perf", "--saves", "5")
    # a text with a token-sized word loads detect-secrets' plugins: still no connection (their
    # verify(), which would ask the provider whether a token is live, is never called)
    run("save", "the build is 20240601T120000-nightly-linux-x86_64-release")
    webhook = "https://hooks.slack.com/services/T" + "0ABCDEF12/B0ABCDEF12/" + "a1B2c3D4" * 3
    for refused in (("save", "--", f"alerts go to {webhook}"), ("recall", "--", f"token {webhook}")):
        result = run_aimos(*refused, env=hook.env)
        results.append(result)
        assert result.code == 2 and "looks like a secret" in result.err, result.describe()
    assert hook.attempts() == ""

    assert hook.attempts() == ""
    assert hook.loads() >= len(results), "the hook was not loaded in every aimos process"


def test_positive_control_the_hook_records_an_attempt(hook: Hook) -> None:
    proc = hook.python("import socket; socket.create_connection(('127.0.0.1', 9))")
    assert proc.returncode != 0
    assert "blocked by the aimos test hook" in proc.stderr
    assert "create_connection" in hook.attempts() and "127.0.0.1" in hook.attempts()
    assert hook.loads() == 1


def test_positive_control_raw_connect_and_lookup(hook: Hook) -> None:
    proc = hook.python(
        "import socket\n"
        "for attempt in (lambda: socket.socket().connect(('127.0.0.1', 9)),\n"
        "                lambda: socket.socket(socket.AF_INET6).connect_ex(('::1', 9)),\n"
        "                lambda: socket.getaddrinfo('example.org', 443)):\n"
        "    try:\n"
        "        attempt()\n"
        "    except PermissionError:\n"
        "        pass\n"
    )
    assert proc.returncode == 0, proc.stderr
    attempts = hook.attempts()
    assert "connect ('127.0.0.1', 9)" in attempts
    assert "connect_ex ('::1', 9)" in attempts
    assert "getaddrinfo ('example.org', 443)" in attempts


def test_unix_sockets_are_not_recorded(hook: Hook, tmp_path: Path) -> None:
    proc = hook.python(
        "import socket\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    s.connect({str(tmp_path / 'no-such-socket')!r})\n"
        "except FileNotFoundError:\n"
        "    print('unix connect reached the OS')\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "unix connect reached the OS" in proc.stdout
    assert hook.attempts() == ""
