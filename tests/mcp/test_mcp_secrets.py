"""The secret gate over MCP: a save or a recall carrying a secret is refused as a tool error that
names the kind and never quotes the secret, and nothing reaches the brain; a schema error that
would quote an argument (the SDK's validation text) says the kind instead."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import BRAIN, run_aimos, table_counts
from support.mcp import call, connect, refused

from aimos.eval.secret_corpus import shapes

pytestmark = pytest.mark.timeout(240)

SHAPES = shapes()
PROBES = [
    s
    for s in SHAPES
    if s.kind
    in {
        "GitHub token",
        "password in a sentence",
        "card number with CVV",
        "PEM body without its header",
        "AWS access key id, full-width letters",
        "seed phrase: 12 words",
        "IBAN grouped in fours",
    }
]


def pieces(text: str) -> set[str]:
    found = {w.strip(".,;:\"'") for w in text.split() if len(w) >= 7 and any(c.isdigit() for c in w)}
    for word in text.split():
        found |= {word[i : i + 8] for i in range(len(word) - 7)}
    return {p for p in found if p and not p.isalpha()}


@pytest.fixture
def installed(aimos_home: Path) -> Path:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    return aimos_home


def test_a_secret_is_refused_over_mcp_and_never_echoed(installed: Path) -> None:
    brain = installed / BRAIN
    tables = ("memories", "events", "request_nonces", "recall_receipts")

    async def scenario() -> None:
        async with connect("cli") as session:
            await call(session, "save_memory", {"text": "the cat is called Miso"})
            before = table_counts(brain, tables)
            for shape in PROBES:
                said = await refused(
                    session, "save_memory", {"text": shape.text}, "secret", "nothing was saved"
                )
                assert "the value holds what looks like a secret" in said
                assert not [p for p in pieces(shape.text) if p in said], said
                said = await refused(session, "save_memory", {"text": "fine", "key": shape.text}, "secret")
                assert "the key holds" in said and not [p for p in pieces(shape.text) if p in said], said
                said = await refused(
                    session, "recall", {"query": shape.text}, "secret", "nothing was recalled"
                )
                assert "the query holds" in said and not [p for p in pieces(shape.text) if p in said], said
            assert table_counts(brain, tables) == before
            # the SDK's own argument errors quote the value given: screened
            token = next(s for s in SHAPES if s.kind == "GitHub token").text.split()[1]
            said = await refused(
                session, "save_memory", {"text": "fine", "data_class": token}, "looks like a secret"
            )
            assert token not in said and not [p for p in pieces(token) if p in said], said
            said = await refused(
                session, "report_outcome", {"memory_id": "x", "outcome": token}, "looks like a secret"
            )
            assert token not in said, said
            # ordinary text about passwords still saves and recalls
            await call(session, "save_memory", {"text": "I keep my passwords in a password manager"})
            got = await call(session, "recall", {"query": "password manager"})
            assert got["results"]

    asyncio.run(scenario())
    data = b"".join(p.read_bytes() for p in installed.glob(BRAIN + "*"))
    for shape in PROBES:
        assert not [p for p in pieces(shape.text) if len(p) >= 8 and p.encode() in data], shape.kind
