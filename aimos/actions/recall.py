"""Recall: a signed request as the CLI, the TUI and MCP run it."""

from __future__ import annotations

from aimos.actions.bodies import build_recall_body
from aimos.actions.session import Brain, now
from aimos.identity.requests import sign_request
from aimos.recall.pipeline import RecallResult, recall
from aimos.vocabulary import PATH_RECALL
from aimos.vocabulary import RECALL_DEFAULT_LIMIT as DEFAULT_LIMIT

# What every front end says when a recall returns nothing (recall.policy: nothing that matches the
# query, or only what is withheld as untrusted).
NOTHING_MATCHES = "No trusted memory matches the query: aimos abstains (the signed receipt records it)."


def recall_as(
    brain: Brain,
    agent: str,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    history: bool = False,
    guides: bool = False,
) -> RecallResult:
    """A recall signed by ``agent`` (POST /aimos/recall): the ranked, verified results, what was
    withheld and why, and the signed receipt. ``guides``: aimos's own guides are searched too
    (otherwise only for a question that names aimos)."""
    signer = brain.signer(agent)
    housekeeper = brain.housekeeper()
    body = build_recall_body(query=query, limit=limit, history=history, guides=guides)
    return recall(brain.conn, housekeeper, sign_request(signer, body, PATH_RECALL, now()), now())
