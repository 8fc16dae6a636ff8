"""`aimos model nli DIR` / `--off` / `aimos model` through the real CLI, with a stand-in NLI model
the test builds (tests/support/nli.py; aimos ships and downloads none). Enabling loads and
runs the model, then pins each file's SHA-256 in a 0600 setting; bad input (no folder, a missing
file, bytes that are not ONNX, other inputs, another output shape, no label order, the runtime not
installed) is refused with its fix and exit code, and changes nothing. A file whose bytes change
after it was enabled (a careless edit, or a model swapped for one that says the opposite) is
refused by the judge, shown by `aimos model`, and failed by `aimos doctor`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import Result, run_aimos, sha256_file
from support.nli import model_folder, nli_graph

from aimos.epistemic import nli
from aimos.errors import ModelChangedError

SETTING = "config/nli.json"


def setting_of(home: Path) -> bytes | None:
    path = home / SETTING
    return path.read_bytes() if path.exists() else None


def refused(result: Result, code: int, *words: str) -> None:
    assert result.code == code, result.describe()
    assert "Traceback" not in result.both, result.describe()
    assert "error:" in result.err and "hint:" in result.err, result.describe()
    for word in words:
        assert word in result.err, f"{word!r} not said\n{result.describe()}"


def test_enable_show_and_turn_off(isolated_home: Path, tmp_path: Path) -> None:
    off = run_aimos("model", "--json").json()
    assert off["nli"] == {"enabled": False}
    assert off["embedding"]["enabled"] is True and off["embedding"]["unavailable"] is None
    assert "off (the default)" in run_aimos("model").ok().out
    folder = model_folder(tmp_path / "nli")

    on = run_aimos("model", "nli", str(folder), "--json").json()["nli"]
    assert on["enabled"] is True and on["changed"] == []
    assert on["folder"] == str(folder)
    assert on["model_sha256"] == sha256_file(folder / "model.onnx")
    assert on["files"] == {
        n: sha256_file(folder / n) for n in ("model.onnx", "tokenizer.json", "config.json")
    }
    written = isolated_home / SETTING
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert stat.S_IMODE(written.parent.stat().st_mode) == 0o700
    shown = run_aimos("model", "nli").ok()
    assert f"on: {folder}" in shown.out and "pinned files match" in shown.err
    assert run_aimos("model", "--json").json()["nli"]["model_sha256"] == on["model_sha256"]

    done = run_aimos("model", "nli", "--off").ok()
    assert "the NLI judge is off" in done.err and not written.exists()
    assert "already off" in run_aimos("model", "nli", "--off").ok().err
    assert run_aimos("model", "--json").json()["nli"] == {"enabled": False}


def test_a_setting_aimos_did_not_write_is_refused_and_can_be_turned_off(isolated_home: Path) -> None:
    written = isolated_home / SETTING
    written.parent.mkdir(mode=0o700, parents=True)
    written.write_text('{"folder": "/tmp/x"}')  # no pinned digests: nothing to check a model against
    refused(run_aimos("model"), 4, "is not the NLI setting aimos writes", "aimos model nli --off")
    with pytest.raises(ModelChangedError):
        nli.active_judge()
    assert "the NLI judge is off" in run_aimos("model", "nli", "--off").ok().err
    assert not written.exists() and nli.active_judge() is None


@pytest.mark.parametrize(
    ("case", "code", "said"),
    [
        ("no folder", 3, "is not a folder"),
        ("no tokenizer", 3, "no tokenizer.json"),
        ("not onnx", 2, "is not an ONNX model"),
        ("other inputs", 2, "takes ids tensor(int64)"),
        ("two outputs for three labels", 2, "first output is [1, 2]"),
        ("no label order", 2, "has no id2label"),
        ("no contradiction label", 2, "name one entailment and one contradiction"),
        ("folder and --off", 2, "not both"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    isolated_home: Path, tmp_path: Path, case: str, code: int, said: str
) -> None:
    """Refused with its exit code and fix: the setting stays absent when the judge was off, and
    byte for byte what it was when another model was on."""
    folder = tmp_path / "bad"
    if case != "no folder":
        model_folder(folder)
    if case == "no tokenizer":
        (folder / "tokenizer.json").unlink()
    elif case == "not onnx":
        (folder / "model.onnx").write_bytes(b"PK\x03\x04 a zip, not a model" * 50)
    elif case == "other inputs":
        (folder / "model.onnx").write_bytes(nli_graph(inputs=("ids", "attention_mask")))
    elif case == "two outputs for three labels":
        (folder / "model.onnx").write_bytes(nli_graph(labels=2))
    elif case == "no label order":
        (folder / "config.json").write_text(json.dumps({"model_type": "x"}))
    elif case == "no contradiction label":
        (folder / "config.json").write_text(
            json.dumps({"id2label": {"0": "yes", "1": "maybe", "2": "entail"}})
        )
    extra = ("--off",) if case == "folder and --off" else ()
    refused(run_aimos("model", "nli", str(folder), *extra), code, said)
    assert setting_of(isolated_home) is None

    good = model_folder(tmp_path / "good")
    run_aimos("model", "nli", str(good)).ok()
    before = setting_of(isolated_home)
    refused(run_aimos("model", "nli", str(folder), *extra), code, said)
    assert setting_of(isolated_home) == before


def test_without_onnxruntime_enabling_says_which_extra_and_changes_nothing(
    isolated_home: Path, tmp_path: Path
) -> None:
    """A real process where onnxruntime cannot be imported (None in sys.modules: Python's own way
    to hide an installed module), as on a machine without the extra."""
    folder = model_folder(tmp_path / "nli")
    code = (
        "import sys\nsys.modules['onnxruntime'] = None\nfrom aimos.cli.app import main\nmain(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "model", "nli", str(folder)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    result = Result(("model", "nli", str(folder)), done.returncode, done.stdout, done.stderr)
    refused(result, 1, "onnxruntime is not installed", "pip install 'aimos[nli]'")
    assert setting_of(isolated_home) is None


def test_a_model_whose_bytes_changed_is_refused(isolated_home: Path, tmp_path: Path) -> None:
    """An attack on the judge: the enabled model.onnx swapped for one that says the opposite (it is
    still a valid model with the same inputs). The judge refuses to load it, naming the file and
    the fix; `aimos model` shows it; enabling it again pins the new bytes."""
    folder = model_folder(tmp_path / "nli")
    run_aimos("model", "nli", str(folder)).ok()
    pair = [("The answer is disputed.", "The answer is Paris.")]
    judge = nli.active_judge()
    assert judge is not None and judge(pair)[0][2] > 0.9  # contradiction

    (folder / "model.onnx").write_bytes(nli_graph(flipped=True))
    # a process that loaded the pinned bytes goes on judging with them; any load now refuses
    assert judge is nli.active_judge() and judge(pair)[0][2] > 0.9
    found = nli.setting()
    assert found is not None
    with pytest.raises(ModelChangedError) as refusal:
        nli.load(found)
    assert str(folder / "model.onnx") in refusal.value.message
    assert "aimos model nli DIR" in refusal.value.hint and "--off" in refusal.value.hint
    shown = run_aimos("model", "--json").json()["nli"]
    assert shown["changed"] == ["model.onnx"]
    assert "changed since it was enabled: model.onnx" in run_aimos("model").ok().err

    (folder / "config.json").write_text(json.dumps({"id2label": {"0": "x"}}))  # a side file too
    assert run_aimos("model", "--json").json()["nli"]["changed"] == ["model.onnx", "config.json"]
    model_folder(folder, model=nli_graph(flipped=True))
    run_aimos("model", "nli", str(folder)).ok()  # the person meant it: pinned anew
    again = nli.active_judge()
    assert again is not None and again(pair)[0][0] > 0.9  # the new model's entailment


def test_doctor_says_whether_the_judge_is_on(installed: Path, tmp_path: Path) -> None:
    lines = run_aimos("doctor").out
    assert "ok    nli" in lines and "the NLI judge is off (the default)" in lines
    folder = model_folder(tmp_path / "nli")
    run_aimos("model", "nli", str(folder)).ok()
    on = next(c for c in run_aimos("doctor", "--json").json()["checks"] if c["name"] == "nli")
    assert (
        on["status"] == "ok" and "the NLI judge is on" in on["found"] and "pinned files match" in on["found"]
    )

    (folder / "tokenizer.json").write_text("{}")
    result = run_aimos("doctor", "--json")
    check = next(c for c in json.loads(result.out)["checks"] if c["name"] == "nli")
    assert check["status"] == "fail" and "tokenizer.json" in check["found"], check
    assert check["exit_code"] == 4 and "aimos model nli" in check["fix"] and "--off" in check["fix"]
    run_aimos("model", "nli", "--off").ok()
    assert (
        next(c for c in run_aimos("doctor", "--json").json()["checks"] if c["name"] == "nli")["status"]
        == "ok"
    )


def test_the_embedding_model_is_shown_on_or_off_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    on = run_aimos("model").ok()
    assert "embedding  on: multilingual-e5-small" in on.out
    monkeypatch.setenv("AIMOS_MEANING", "off")
    off = run_aimos("model", "--json").json()["embedding"]
    assert off["enabled"] is False and "turned off" in off["unavailable"]
    assert "recall works on words alone" in run_aimos("model").ok().out
