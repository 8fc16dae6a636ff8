"""Shared by the tests (moved from tests/eval/test_locomo_eval.py)."""

from __future__ import annotations


def _conversation(i: int) -> dict[str, object]:
    filler = ["Hi, how are you?", "Good, thanks. Busy week.", "Same here, lots going on."]
    topic, said, question = TOPICS[i]
    turns = [
        {"speaker": "A" if n % 2 else "B", "dia_id": f"D1:{n + 1}", "text": t} for n, t in enumerate(filler)
    ]
    turns.append({"speaker": "A", "dia_id": "D1:4", "text": said})
    return {
        "sample_id": f"conv-{i}",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1": turns,
            "session_1_date_time": "8 May, 2023",
        },
        "qa": [
            {"question": question, "answer": "x", "evidence": ["D1:4"], "category": 4},
            {
                "question": f"Who talks about the {topic} in Paris?",
                "answer": "x",
                "evidence": ["D9:9"],
                "category": 1,
            },
        ],
    }


TOPICS = [
    ("boiler", "The boiler was serviced by Dana last Tuesday", "When was the boiler serviced?"),
    ("garden", "Sam planted tomatoes in the garden two weeks ago", "What did Sam plant in the garden?"),
    ("piano", "Priya practises the piano every evening", "What does Priya practise?"),
    ("bike", "Alex fixed the bike chain yesterday", "When did Alex fix the bike?"),
]
