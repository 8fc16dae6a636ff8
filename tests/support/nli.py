"""A stand-in NLI model the tests build themselves (no model is downloaded, none ships): a tiny
ONNX graph made with onnx's helper API, a WordLevel tokenizer.json made with tokenizers, and a
config.json naming the label of each output column, as `aimos model nli DIR` reads them.

The graph says contradiction when the pair holds the word "disputed", entailment when it holds
"confirmed", neutral otherwise: a test chooses the verdict by the words it writes. Its columns
are in roberta-large-mnli's order (contradiction, neutral, entailment), not aimos's, so the label
order is read from config.json, never assumed."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

VOCAB = {"[PAD]": 0, "[UNK]": 1, "disputed": 2, "confirmed": 3}
ID2LABEL = {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}
STRENGTH = 6.0


def _has(word: str, out: str) -> list[onnx.NodeProto]:
    """Nodes: ``out`` [batch, 1] float, 1 where the (unmasked) token ``word`` is in the row."""
    return [
        helper.make_node("Equal", ["input_ids", f"{out}_id"], [f"{out}_eq"]),
        helper.make_node("Cast", [f"{out}_eq"], [f"{out}_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", [f"{out}_f", "mask_f"], [f"{out}_m"]),
        helper.make_node("ReduceMax", [f"{out}_m"], [out], axes=[1], keepdims=1),
    ]


def nli_graph(
    *, inputs: tuple[str, ...] = ("input_ids", "attention_mask"), labels: int = 3, flipped: bool = False
) -> bytes:
    """The stand-in model's bytes. ``flipped``: entailment and contradiction swapped (another
    model with the same inputs: what a swapped file would be); ``labels``: its output columns."""
    contra, entail = ("confirmed", "disputed") if flipped else ("disputed", "confirmed")
    weights = [[0.0] * labels, [0.0] * labels]
    weights[0][0] = STRENGTH  # has(contra) -> column 0 (CONTRADICTION)
    weights[1][labels - 1] = STRENGTH  # has(entail) -> the last column (ENTAILMENT)
    bias = [0.0] * labels
    bias[min(1, labels - 1)] = 1.0  # neither word: NEUTRAL
    ids = inputs[0]
    nodes = [
        helper.make_node("Identity", [ids], ["input_ids"]) if ids != "input_ids" else None,
        helper.make_node("Cast", [inputs[1]], ["mask_f"], to=TensorProto.FLOAT),
        *_has(contra, "has_c"),
        *_has(entail, "has_e"),
        helper.make_node("Concat", ["has_c", "has_e"], ["feats"], axis=1),
        helper.make_node("MatMul", ["feats", "W"], ["scores"]),
        helper.make_node("Add", ["scores", "B"], ["logits"]),
    ]
    graph = helper.make_graph(
        [n for n in nodes if n is not None],
        "stand_in_nli",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in inputs],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])],
        initializer=[
            helper.make_tensor("has_c_id", TensorProto.INT64, [], [VOCAB[contra]]),
            helper.make_tensor("has_e_id", TensorProto.INT64, [], [VOCAB[entail]]),
            helper.make_tensor("W", TensorProto.FLOAT, [2, labels], [w for row in weights for w in row]),
            helper.make_tensor("B", TensorProto.FLOAT, [labels], bias),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    serialized: bytes = model.SerializeToString()
    return serialized


def tokenizer_json() -> str:
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok.to_str()


def model_folder(folder: Path, *, model: bytes | None = None, id2label: dict[str, str] | None = None) -> Path:
    """``folder`` holding model.onnx, tokenizer.json and config.json of the stand-in model."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(nli_graph() if model is None else model)
    (folder / "tokenizer.json").write_text(tokenizer_json(), "utf-8")
    config = {"model_type": "stand-in", "id2label": ID2LABEL if id2label is None else id2label}
    (folder / "config.json").write_text(json.dumps(config), "utf-8")
    return folder
