"""Bad input to `aimos install`: each is refused with its exit code, an `error:` naming the problem
and a `hint:` naming the fix, no traceback, and nothing created in AIMOS_HOME (but the CLI's own
one-line command log)."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import pytest
from support.installer import BRAIN, CLI_LOG, GUIDES, PASSPHRASE_ENV, Result, run_aimos, tree

BASE = ("install", "--yes", "--keystore", "file", "--service", "none")


def assert_clean_refusal(result: Result, code: int, problem: str, fix: str) -> None:
    assert result.code == code, result.describe()
    assert "Traceback" not in result.both, result.describe()
    assert result.out == "", f"a refused install printed data\n{result.describe()}"
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    hints = [line for line in result.err.splitlines() if line.startswith("hint:")]
    assert errors and problem.lower() in errors[0].lower(), (
        f"error does not name {problem!r}\n{result.describe()}"
    )
    assert hints and fix.lower() in hints[0].lower(), f"hint does not name {fix!r}\n{result.describe()}"


def assert_nothing_created(home: Path) -> None:
    left = tree(home, ignore=CLI_LOG)
    assert left == {}, f"a refused install left {sorted(left)} in AIMOS_HOME"


BAD_FLAGS = [
    (("--agent-id", "bad id!"), "agent id", "letters, digits"),
    (("--agent-id", "housekeeper"), "'housekeeper' is reserved", "another agent id"),
    (("--agent-id", "aimos_flag_signer"), "is reserved", "another agent id"),
    (("--agent-id", "a" * 65), "agent id", "1-64"),
    (("--clearance", "11"), "clearance 11", "0 to 10"),
    (("--clearance", "-1"), "clearance -1", "0 to 10"),
    (("--validity-days", "0"), "validity of 0 days", "1..365"),
    (("--validity-days", "366"), "validity of 366 days", "1..365"),
    (("--data-class", "secret"), "data class", "confidential"),
    (("--brain-name", ""), "brain name", "letters, digits"),
    (("--company", "acme corp"), "company", "letters, digits"),
    (("--model", "has space"), "model 'has space'", "letters, digits"),
    (("--model-provider", "bad/provider!"), "model provider", "letters, digits"),
    (("--service", "bogus"), "'bogus'", "--service"),
    (("--keystore", "vault"), "'vault'", "--keystore"),
]


@pytest.mark.parametrize(
    ("flags", "problem", "fix"), BAD_FLAGS, ids=[" ".join(flags)[:40] for flags, _, _ in BAD_FLAGS]
)
def test_bad_flag_is_usage(aimos_home: Path, flags: tuple[str, ...], problem: str, fix: str) -> None:
    result = run_aimos(*BASE, *flags)
    assert_clean_refusal(result, 2, problem, fix)
    assert_nothing_created(aimos_home)


def test_short_passphrase_is_an_identity_error(aimos_home: Path, tmp_path: Path) -> None:
    short = tmp_path / "short-passphrase"
    short.write_text("abcde\n")
    short.chmod(0o600)
    result = run_aimos(*BASE, env={PASSPHRASE_ENV: str(short)})
    assert_clean_refusal(result, 6, "shorter than 8 characters", "at least 8 characters")
    assert "abcde" not in result.both, "the passphrase was echoed"
    assert_nothing_created(aimos_home)


def test_readable_passphrase_file_is_refused(aimos_home: Path, tmp_path: Path) -> None:
    loose = tmp_path / "loose-passphrase"
    loose.write_text("a long enough passphrase\n")
    loose.chmod(0o644)
    result = run_aimos(*BASE, env={PASSPHRASE_ENV: str(loose)})
    assert_clean_refusal(result, 2, "readable by other users", "chmod 600")
    assert_nothing_created(aimos_home)


def test_no_passphrase_source_without_a_terminal(aimos_home: Path) -> None:
    result = run_aimos(*BASE, unset=(PASSPHRASE_ENV,))
    assert_clean_refusal(result, 2, "no terminal", "AIMOS_PASSPHRASE_FILE")
    assert_nothing_created(aimos_home)


def test_home_under_a_regular_file(aimos_home: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_bytes(b"not a folder\n")
    home = blocker / "home"
    result = run_aimos(*BASE, env={"AIMOS_HOME": str(home)})
    assert result.code == 1, result.describe()
    assert "Traceback" not in result.both and result.out == "", result.describe()
    assert f"cannot write to {home}" in result.err, result.describe()
    assert "hint:" in result.err and "AIMOS_HOME" in result.err, result.describe()
    assert blocker.read_bytes() == b"not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "home", "passphrase"]
    assert_nothing_created(aimos_home)


def test_home_under_proc(aimos_home: Path) -> None:
    home = Path("/proc") / f"aimos-home-{time.monotonic_ns()}"
    result = run_aimos(*BASE, env={"AIMOS_HOME": str(home)})
    assert result.code == 1, result.describe()
    assert "Traceback" not in result.both and result.out == "", result.describe()
    assert "cannot write to" in result.err and str(home) in result.err, result.describe()
    assert "hint:" in result.err and "AIMOS_HOME" in result.err, result.describe()
    assert not home.exists()
    assert_nothing_created(aimos_home)


# --- a guide whose bytes do not match the manifest -----------------------------------------------
def _tampered_copy(tmp_path: Path, how: str) -> tuple[Path, str]:
    folder = tmp_path / "guides"
    shutil.copytree(GUIDES, folder)
    victim = folder / "recall-and-receipts.md"
    data = bytearray(victim.read_bytes())
    if how == "flip-a-byte":
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
    elif how == "append-a-byte":
        victim.write_bytes(bytes(data) + b"\n")
    elif how == "remove-a-file":
        victim.unlink()
        return folder, "the guide folder holds"
    elif how == "add-a-file":
        (folder / "extra.md").write_text("# Extra\n\nnot in the manifest\n")
        return folder, "extra.md"
    return folder, "recall-and-receipts.md"


@pytest.mark.parametrize("how", ["flip-a-byte", "append-a-byte", "remove-a-file", "add-a-file"])
def test_tampered_guide_stops_install_before_anything(
    how: str, aimos_home: Path, tmp_path: Path, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aimos.installer.guide_corpus as guide_corpus
    import aimos.installer.setup as setup
    from aimos.errors import IntegrityError

    folder, named = _tampered_copy(tmp_path, how)
    monkeypatch.setattr(guide_corpus, "GUIDES_DIR", folder)
    # the corpus functions read the folder at call time (not a default bound at import)
    manifest = guide_corpus.build_manifest()
    on_disk = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.md")}
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == on_disk
    with pytest.raises(IntegrityError) as direct:
        guide_corpus.load_verified()
    assert named in direct.value.message, direct.value.message

    with pytest.raises(IntegrityError) as caught:
        setup.install(setup.InstallOptions(keystore="file"), passphrase, int(time.time()))
    assert named in caught.value.message, caught.value.message
    assert "step check_guides" in caught.value.message, caught.value.message
    assert "python -m aimos.installer.guide_corpus --write" in caught.value.hint
    assert tree(aimos_home) == {}, f"a refused install left {sorted(tree(aimos_home))}"


def test_tampered_guide_through_the_cli_is_integrity(aimos_home: Path, tmp_path: Path) -> None:
    folder, named = _tampered_copy(tmp_path, "flip-a-byte")
    script = (
        "import sys, pathlib\n"
        "import aimos.installer.guide_corpus as g\n"
        "g.GUIDES_DIR = pathlib.Path(sys.argv[1])\n"
        "from aimos.cli.app import main\n"
        "main(sys.argv[2:])\n"
    )
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", script, str(folder), *BASE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    result = Result(BASE, done.returncode, done.stdout, done.stderr)
    assert_clean_refusal(result, 5, named, "guide_corpus --write")
    assert_nothing_created(aimos_home)
    assert not (aimos_home / BRAIN).exists()
