"""The NLI judge: a plug-in a person enables with a model they provide. Off by default.

Embeddings cannot tell which of two answers a sentence affirms; a natural-language-inference
model can. No NLI model whose licence allows redistribution ships in a package aimos could
install, so aimos ships none and never downloads one: a person who has one enables it with
`aimos model nli DIR`, where DIR holds

- ``model.onnx``: the model exported to ONNX, with inputs ``input_ids`` and ``attention_mask``
  (and ``token_type_ids`` when it has them), int64 [batch, tokens], and its first output the
  logits, float [batch, labels];
- ``tokenizer.json``: its tokenizer, as the ``tokenizers`` package reads it;
- ``config.json``: its ``id2label`` (the label of each output column: one names entailment,
  one contradiction; any other is neutral).

Enabling loads the model and runs it once (nothing is recorded when that fails), then records the
folder and each file's SHA-256 in the config folder (paths.nli_setting_path). The judge is loaded
when the detector first asks it (not in every process): from the bytes read, which must be the
pinned ones, or it refuses (ModelChangedError, naming the file and the fix). onnxruntime and
tokenizers are the optional extra ``aimos[nli]``, imported only then.

When on, the agreement detector (agreement._relations) asks it whether another origin's passage
(the premise) entails or contradicts the cluster's passages (the hypotheses); off, the detector
is exactly the lexical one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.errors import (
    ModelChangedError,
    ModelFormatError,
    ModelNotFoundError,
    OptionalDependencyError,
)

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "config.json"
PINNED = (MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MODEL_BYTES = 2 << 30  # ONNX's own limit for one file (protobuf)
SIDE_FILE_BYTES = 64 << 20
MAX_TOKENS = 512  # a pair is truncated to this many tokens when its tokenizer sets no limit
BATCH = 16
CACHED_PAIRS = 4096
EXTRA = "pip install 'aimos[nli]'"
OFF_HINT = "aimos model nli --off turns the judge off"
_PROBE = ("The cat sleeps on the mat.", "A cat is sleeping.")


@dataclass(frozen=True)
class Setting:
    """What `aimos model nli DIR` recorded: the folder and each pinned file's SHA-256."""

    folder: Path
    digests: dict[str, str]
    enabled_at: int

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "files": dict(self.digests), "enabled_at": self.enabled_at}


def setting() -> Setting | None:
    """The enabled judge, or None (off)."""
    path = paths.nli_setting_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return _parse_setting(path, data)


def _parse_setting(path: Path, data: bytes) -> Setting:
    try:
        doc = json.loads(data)
        files = doc["files"]
        digests = {name: str(files[name]) for name in PINNED}
        return Setting(Path(str(doc["folder"])), digests, int(doc["enabled_at"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelChangedError(
            f"{path} is not the NLI setting aimos writes",
            "Enable the judge again (`aimos model nli DIR`) or turn it off (`aimos model nli --off`).",
        ) from exc


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(folder: Path, name: str) -> bytes:
    path = folder / name
    if not path.is_file():
        raise ModelNotFoundError(f"no {name} in {folder}")
    try:
        return paths.read_at_most(path, MODEL_BYTES if name == MODEL_FILE else SIDE_FILE_BYTES)
    except ValueError as exc:
        raise ModelFormatError(f"{path} is too large for a {name}") from exc
    except OSError as exc:
        raise ModelNotFoundError(f"{path} could not be read: {exc.strerror or exc}") from exc


def _labels(data: bytes, where: Path) -> tuple[int, int, int]:
    """The output columns of entailment and contradiction, and how many columns there are."""
    try:
        doc = json.loads(data)
        named = {int(k): str(v).lower() for k, v in doc["id2label"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelFormatError(f"{where} has no id2label (the label of each output column)") from exc
    count = len(named)
    entail = [i for i, label in named.items() if label.startswith("entail")]
    contra = [i for i, label in named.items() if label.startswith("contradict")]
    if sorted(named) != list(range(count)) or len(entail) != 1 or len(contra) != 1:
        raise ModelFormatError(
            f"{where}'s id2label must number its columns 0..N-1 and name one entailment and one "
            f"contradiction label (it names {sorted(named.values())})"
        )
    return entail[0], contra[0], count


def _runtime() -> tuple[Any, Any, Any]:
    """numpy, onnxruntime and tokenizers, imported now (the extra ``aimos[nli]``)."""
    try:
        import numpy
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise OptionalDependencyError(
            f"the NLI judge needs onnxruntime and tokenizers, and {exc.name or 'one of them'} is not "
            "installed",
            f"{EXTRA}, then run the command again; or {OFF_HINT}",
        ) from exc
    return numpy, onnxruntime, tokenizers


class OnnxJudge:
    """An NLI model loaded from its files' bytes: called with (premise, hypothesis) pairs, the
    probabilities of (entailment, neutral, contradiction) for each (agreement.Judge)."""

    def __init__(self, folder: Path, files: dict[str, bytes]) -> None:
        self.folder = folder
        self.digest = _digest(files[MODEL_FILE])
        self._np, ort, tokenizers = _runtime()
        self._entail, self._contra, self._count = _labels(files[CONFIG_FILE], folder / CONFIG_FILE)
        try:
            self._tokenizer = tokenizers.Tokenizer.from_str(files[TOKENIZER_FILE].decode("utf-8"))
        except Exception as exc:  # the library's own errors: not a tokenizer it reads
            raise ModelFormatError(
                f"{folder / TOKENIZER_FILE} is not a tokenizer.json tokenizers reads"
            ) from exc
        if self._tokenizer.truncation is None:
            self._tokenizer.enable_truncation(MAX_TOKENS)
        padding = self._tokenizer.padding
        self._pad = int(padding["pad_id"]) if padding else 0
        options = ort.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # its warnings are no finding of aimos's
        try:
            self._session = ort.InferenceSession(
                files[MODEL_FILE], sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's own errors (InvalidProtobuf, Fail, ...)
            raise ModelFormatError(
                f"{folder / MODEL_FILE} is not an ONNX model onnxruntime loads ({type(exc).__name__})"
            ) from exc
        self._inputs = [i.name for i in self._session.get_inputs()]
        wrong = [i for i in self._session.get_inputs() if i.name not in INPUTS or i.type != "tensor(int64)"]
        if wrong or "input_ids" not in self._inputs:
            takes = ", ".join(f"{i.name} {i.type}" for i in self._session.get_inputs())
            raise ModelFormatError(
                f"{folder / MODEL_FILE} takes {takes}: aimos gives int64 input_ids and attention_mask "
                "(and token_type_ids)"
            )
        self._cache: dict[tuple[str, str], tuple[float, float, float]] = {}

    def probe(self) -> None:
        """Run one pair: the output must be [1, labels] with finite numbers."""
        self._logits([_PROBE])

    def _logits(self, pairs: Sequence[tuple[str, str]]) -> Any:
        np = self._np
        encoded = self._tokenizer.encode_batch(list(pairs))
        width = max([1, *(len(e.ids) for e in encoded)])
        feeds = {name: np.zeros((len(encoded), width), dtype=np.int64) for name in self._inputs}
        if "input_ids" in feeds:
            feeds["input_ids"].fill(self._pad)
        for row, e in enumerate(encoded):
            size = len(e.ids)
            for name, values in (
                ("input_ids", e.ids),
                ("attention_mask", e.attention_mask),
                ("token_type_ids", e.type_ids),
            ):
                if name in feeds:
                    feeds[name][row, :size] = values
        try:
            logits = np.asarray(self._session.run(None, feeds)[0], dtype=np.float64)
        except Exception as exc:  # onnxruntime's own errors: a graph that does not run on its inputs
            raise ModelFormatError(f"{self.folder / MODEL_FILE} did not run ({type(exc).__name__})") from exc
        if logits.shape != (len(encoded), self._count) or not np.isfinite(logits).all():
            raise ModelFormatError(
                f"{self.folder / MODEL_FILE}'s first output is {list(logits.shape)}: aimos reads logits "
                f"[batch, {self._count}] (one column per label of {CONFIG_FILE})"
            )
        return logits

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        np = self._np
        todo = list(dict.fromkeys(p for p in pairs if p not in self._cache))
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            logits = self._logits(chunk)
            shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs = shifted / shifted.sum(axis=1, keepdims=True)
            if len(self._cache) + len(chunk) > CACHED_PAIRS:
                self._cache.clear()
            for pair, row in zip(chunk, probs, strict=True):
                entail, contra = float(row[self._entail]), float(row[self._contra])
                self._cache[pair] = (entail, max(0.0, 1.0 - entail - contra), contra)
        return [self._cache[p] for p in pairs]


def _files(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        raise ModelNotFoundError(f"{folder} is not a folder")
    return {name: _read(folder, name) for name in PINNED}


def enable(folder: Path, now: int) -> Setting:
    """Load the model in ``folder`` and run it once; then (only then) record it, pinned. Any
    problem raises with its fix and records nothing."""
    folder = folder.expanduser().absolute()
    files = _files(folder)
    OnnxJudge(folder, files).probe()
    done = Setting(folder, {name: _digest(data) for name, data in files.items()}, now)
    doc = json.dumps(done.to_json(), indent=2, sort_keys=True) + "\n"
    paths.write_private_file(paths.nli_setting_path(), doc.encode("utf-8"))
    return done


def disable() -> bool:
    """Turn the judge off (remove the setting, even one that does not parse); whether it was on."""
    path = paths.nli_setting_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    paths.fsync_dir(path.parent)
    return True


def changed(found: Setting) -> list[str]:
    """The pinned files whose bytes differ now (or that are gone or unreadable)."""
    out = []
    for name, pinned in found.digests.items():
        try:
            data = _read(found.folder, name)
        except (ModelNotFoundError, ModelFormatError):
            out.append(name)
            continue
        if _digest(data) != pinned:
            out.append(name)
    return out


def load(found: Setting) -> OnnxJudge:
    """The judge ``found`` names, from bytes that must be the pinned ones."""
    files: dict[str, bytes] = {}
    for name, pinned in found.digests.items():
        try:
            files[name] = _read(found.folder, name)
        except ModelNotFoundError as exc:
            raise ModelChangedError(
                f"the NLI judge's {name} is gone from {found.folder} ({exc.message})"
            ) from exc
        if _digest(files[name]) != pinned:
            raise ModelChangedError(
                f"{found.folder / name} changed since the NLI judge was enabled: its SHA-256 is "
                f"{_digest(files[name])[:16]}..., enabled as {pinned[:16]}...; aimos refuses to load it"
            )
    return OnnxJudge(found.folder, files)


class PluggedJudge:
    """The enabled judge, loaded (and its pins checked) when first asked."""

    def __init__(self, found: Setting) -> None:
        self.setting = found
        self.digest = found.digests[MODEL_FILE]
        self._judge: OnnxJudge | None = None

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        if self._judge is None:
            self._judge = load(self.setting)
        return self._judge(pairs)


_ACTIVE: dict[str, tuple[bytes, PluggedJudge]] = {}


def active_judge() -> PluggedJudge | None:
    """The judge this home enabled (loaded when first called, once per process and setting), or
    None when it is off: one read of a small file."""
    path = paths.nli_setting_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    kept = _ACTIVE.get(str(path))
    if kept is not None and kept[0] == data:
        return kept[1]
    judge = PluggedJudge(_parse_setting(path, data))
    _ACTIVE[str(path)] = (data, judge)
    return judge
