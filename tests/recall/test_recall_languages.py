"""Recall in languages other than plain ASCII English: accents fold both ways, any case finds any case,
and a word is found as it is written whatever letters it holds (the query is lowercased as the index
lowercases: "ß" and a final "ς" stay as they are). The real pipeline on a real brain."""

from __future__ import annotations

import time
from typing import Any

import pytest

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

MEMORIES = {
    "cafe": "Meet Zoë at the café on Rue de la Paix",
    "koln": "The office is at Hauptstraße 5 in Köln",
    "greek": "Οδυσσεύς sailed home to Ithaca",
    "greek_caps": "ΤΗΛΕΜΑΧΟΣ waited at home",
    "naive": "A naïve approach to the façade repair",
    "spanish": "El niño comió piña en Málaga",
}

FOUND_BY = [
    ("cafe", "café"),
    ("cafe", "cafe"),
    ("cafe", "CAFÉ"),
    ("cafe", "Zoe"),
    ("cafe", "zoë"),
    ("koln", "Köln"),
    ("koln", "koln"),
    ("koln", "KÖLN"),
    ("koln", "Hauptstraße"),
    ("koln", "hauptstraße"),
    ("greek", "Οδυσσεύς"),
    ("greek", "ΟΔΥΣΣΕΎΣ sailed"),
    ("greek_caps", "τηλεμαχοσ"),
    ("greek_caps", "Τηλεμαχοσ"),
    ("naive", "naive facade"),
    ("naive", "NAÏVE"),
    ("spanish", "nino pina malaga"),
    ("spanish", "Niño"),
]


@pytest.fixture
def saved(brain: Any) -> dict[str, str]:
    ids = {}
    for name, text in MEMORIES.items():
        now = int(time.time())
        body = build_save_body(company_id="personal", value=text)
        ids[name] = save(
            brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now
        ).memory_id
    return ids


def _recall(brain: Any, query: str) -> list[str]:
    now = int(time.time())
    got = recall(
        brain.conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query=query, limit=5), PATH_RECALL, now),
        now,
    )
    return [r["memory_id"] for r in got.results]


def test_every_written_form_finds_its_memory_first(brain: Any, saved: dict[str, str]) -> None:
    missed = [(query, name) for name, query in FOUND_BY if _recall(brain, query)[:1] != [saved[name]]]
    assert not missed, missed


def test_a_word_no_memory_holds_finds_nothing(brain: Any, saved: dict[str, str]) -> None:
    assert saved
    assert _recall(brain, "Zürich") == []
