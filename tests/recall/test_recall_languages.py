"""Recall in languages other than plain ASCII English: accents fold both ways (Greek too), any case
finds any case ("HAUPTSTRASSE" finds "Hauptstraße"), a word with vowel signs is one word (Hindi,
Thai), and text written without spaces (Chinese, Japanese, Thai, Korean particles) is found by any
part of it (aimos.store.words). The real pipeline on a real brain."""

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
    "tokyo": "東京タワーに行った",
    "beijing": "我们明天去北京天安门",
    "thai": "พรุ่งนี้ฉันจะไปเชียงใหม่",
    "korean": "서울에서 친구를 만났어요",
    "hindi": "मेरी बहन दिल्ली में रहती है",
    "halfwidth": "ﾊﾟｽﾜｰﾄﾞ is not here, the ＷｉＦｉ router is",
    "athens": "Η Αθήνα είναι όμορφη",
    "arabic": "كَتَبَ الوَلَدُ رِسالَةً",
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
    ("koln", "HAUPTSTRASSE"),
    ("koln", "hauptstrasse"),
    ("greek", "ΟΔΥΣΣΕΥΣ"),
    ("athens", "ΑΘΗΝΑ"),
    ("athens", "αθηνα"),
    ("tokyo", "東京"),
    ("tokyo", "タワー"),
    ("tokyo", "東京タワー"),
    ("tokyo", "ﾀﾜｰ"),
    ("beijing", "北京"),
    ("beijing", "天安门在哪里"),
    ("thai", "เชียงใหม่"),
    ("korean", "서울"),
    ("korean", "친구"),
    ("hindi", "दिल्ली"),
    ("hindi", "बहन"),
    ("halfwidth", "パスワード"),
    ("halfwidth", "wifi"),
    ("arabic", "رسالة"),
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
    assert _recall(brain, "大阪") == []  # no memory holds it, though each of its letters is common
    assert _recall(brain, "ムンバイ") == []


def test_a_run_without_spaces_finds_only_the_memories_holding_its_pairs(
    brain: Any, saved: dict[str, str]
) -> None:
    """ "京都" shares the letter "京" with "東京" and nothing else: it must not find Tokyo (a run is
    searched by its pairs of letters, a lone letter only when the query is one letter)."""
    assert _recall(brain, "京都") == []
    # the lone letter is in both 東京 and 北京: both found, in the order meaning puts them
    assert saved["tokyo"] in _recall(brain, "京")
