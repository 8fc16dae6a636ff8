"""Generate the committed vectors of recall by meaning: the stored form of a vector (meaning/vectors:
a little-endian float32 scale, then one signed byte per component) and what the pinned model gives
for fixed texts (so a model or engine whose output moved is noticed).

    python tests/vectors/generate_meaning_vectors.py          # rewrite the committed file
    python tests/vectors/generate_meaning_vectors.py --check  # exit 1 if it has drifted

``test_meaning_vectors.py`` fails when ``build()`` and the committed file differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SCHEMA = "aimos.meaning-vectors/v1"
OUTPUT = Path(__file__).resolve().parent / "aimos" / "meaning-vectors.json"

# stored forms: inputs chosen for the layout's edges (a zero vector, one hot, negative, ties at .5)
FORMS: dict[str, list[float]] = {
    "zero": [0.0, 0.0, 0.0, 0.0],
    "one_hot": [0.0, 1.0, 0.0, 0.0],
    "mixed": [0.5, -0.25, 0.125, -1.0],
    "halves": [127.0, 0.5, 1.5, -2.5],
    "small": [0.01, -0.02, 0.03, 0.04],
}
# texts the pinned model embeds: the first components of each vector (rounded) and the cosines of
# questions against memories (rounded): the model's behaviour, as recall depends on it
QUESTIONS = ["which dentist do I see", "what do I drink"]
MEMORIES = [
    "Dr. Okafor fills my cavities every spring",
    "I drink coffee every morning",
    "The boiler is serviced every October",
]
SHOWN = 8  # components kept per vector
PLACES = 2  # decimals of a cosine (the engine's float order may move the third)


def build() -> dict[str, Any]:
    import numpy as np

    from aimos.meaning.model import MODEL_NAME, load
    from aimos.meaning.vectors import pack, unpack

    forms = {}
    for name, values in FORMS.items():
        blob = pack(np.array(values, dtype=np.float32))
        forms[name] = {
            "input": values,
            "stored_hex": blob.hex(),
            "read_back": [round(float(x), 6) for x in unpack(blob)],
        }
    model = load()
    memories = model.passages(MEMORIES)
    cosines = {}
    for question in QUESTIONS:
        q = model.query(question)
        cosines[question] = {
            m: round(float(np.dot(v, q)), PLACES) for m, v in zip(MEMORIES, memories, strict=True)
        }
    return {
        "schema": SCHEMA,
        "forms": forms,
        "model": MODEL_NAME,
        "memory_components": {
            m: [round(float(x), 1) for x in (v[:SHOWN] * 10)] for m, v in zip(MEMORIES, memories, strict=True)
        },
        "cosines": cosines,
    }


def main() -> int:
    text = json.dumps(build(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if sys.argv[1:] == ["--check"]:
        return 0 if OUTPUT.read_text("utf-8") == text else 1
    OUTPUT.write_text(text, "utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
