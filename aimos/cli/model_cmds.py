"""`aimos model`: the models aimos may use. The sentence-embedding model recall by meaning uses
ships with aimos (meaning/model.py: pinned, loaded only when its files are the pinned ones);
`aimos model nli DIR` enables the NLI judge a person provides (epistemic/nli.py), `aimos model nli
--off` turns it off; `aimos model` shows both."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import json_option
from aimos.cli.output import emit_json, out, say

model_app = typer.Typer(
    help="Show and set up the models aimos uses.\n\nThe models aimos uses: its embedding model, an NLI judge"
    " you provide. Nothing is downloaded.",
    invoke_without_command=True,
    rich_markup_mode=None,
)

_NLI_HELP = """Enable the NLI judge from DIR, or turn it off.

Enable the NLI judge with the model in DIR, or turn it off with --off.

DIR holds model.onnx (an NLI model exported to ONNX: int64 inputs input_ids and attention_mask,
and token_type_ids when it has them; its first output the logits [batch, labels]), tokenizer.json
(its tokenizer) and config.json (its id2label: one label names entailment, one contradiction).
aimos never downloads a model: the files are yours to provide. The model is loaded and run once;
only then is it enabled, with each file's SHA-256 pinned: a file whose bytes change later is
refused until you enable it again. When on, the agreement detector asks it whether another
source's passage entails or contradicts a cluster's claim. Needs pip install 'aimos[nli]'.
Without DIR or --off: the judge's state."""


def _embedding() -> dict[str, Any]:
    from aimos.meaning import model

    why = model.why_unavailable()
    return {
        "enabled": why is None,
        "model": model.MODEL_NAME,
        "package": model.PACKAGE,
        "model_sha256": model.MODEL_SHA256,
        "unavailable": why,
    }


def _state() -> dict[str, Any]:
    from aimos.epistemic.nli import MODEL_FILE, changed, setting

    found = setting()
    embedding = _embedding()
    if found is None:
        return {"embedding": embedding, "nli": {"enabled": False}}
    return {
        "embedding": embedding,
        "nli": {
            **found.to_json(),
            "enabled": True,
            "model_sha256": found.digests[MODEL_FILE],
            "changed": changed(found),
        },
    }


def _print(state: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json(state)
        return
    embedding = state["embedding"]
    if embedding["enabled"]:
        wheel = f"the {embedding['package']} wheel, pinned"
        out(f"embedding  on: {embedding['model']} ({wheel}): recall by meaning")
    else:
        out(f"embedding  off: {embedding['unavailable']}: recall works on words alone")
    nli = state["nli"]
    if not nli["enabled"]:
        out("nli  off (the default): the agreement detector judges by words alone")
        say("aimos model nli DIR enables an NLI model you provide (model.onnx, tokenizer.json, config.json)")
        return
    out(f"nli  on: {nli['folder']} (model.onnx sha256 {nli['model_sha256'][:16]}...)")
    if nli["changed"]:
        say(
            f"changed since it was enabled: {', '.join(nli['changed'])}: aimos refuses to load it; "
            "aimos model nli DIR pins the new bytes, aimos model nli --off turns it off"
        )
    else:
        say("the pinned files match: the agreement detector asks it whether passages agree")


@model_app.callback(invoke_without_command=True)
def model_main(ctx: typer.Context, json_out: bool = json_option("the state")) -> None:
    """The models aimos may use, and their state."""
    if ctx.invoked_subcommand is None:
        _print(_state(), json_out)


@model_app.command("nli", help=_NLI_HELP)
def nli_cmd(
    folder: Path = typer.Argument(None, help="The folder holding model.onnx, tokenizer.json, config.json."),
    off: bool = typer.Option(False, "--off", help="Turn the NLI judge off."),
    json_out: bool = json_option("the state"),
) -> None:
    from aimos.epistemic import nli
    from aimos.errors import UsageError

    if folder is not None and off:
        raise UsageError("give a folder to enable the NLI judge, or --off, not both")
    if off:
        was = nli.disable()
        if not json_out:
            say("the NLI judge is off" if was else "the NLI judge was already off")
    elif folder is not None:
        done = nli.enable(folder, int(time.time()))
        if not json_out:
            say(f"enabled the NLI judge in {done.folder}; its files' SHA-256 are pinned")
    _print(_state(), json_out)
