"""Both verifiers replay the weight rules (aimos/verify/kit/valence.py): the in-database one over
the outcome rows, the portable one over the bundle's signed outcome and terminal events. A writer
that let a second outcome about one recall move the weight (here: the real writer with its ledger
forgetting which recalls already moved it, and migration 7's trigger out of the way) is named by both, with
the same reason, and parity holds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import apsw
import pytest
from support.learning import disclosing_receipt, give, put

pytestmark = pytest.mark.timeout(120)

TRIGGER = "outcomes_one_weight_bearing_per_disclosure"


@contextlib.contextmanager
def without(conn: apsw.Connection, trigger: str) -> Iterator[None]:
    from aimos.store.schema import expected_objects

    sql = expected_objects()[trigger][2]
    assert sql is not None
    conn.execute(f"DROP TRIGGER {trigger}")
    try:
        yield
    finally:
        conn.execute(sql)


def test_a_repeat_that_moved_the_weight_fails_both_verifiers(
    brain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos import errors
    from aimos.learning import outcomes
    from aimos.verify.brain.parity import verify_everything
    from aimos.verify.kit.valence import WeightLedger

    mid = put(brain, "the heron colony nests by the east lake every spring")
    other = put(brain, "the kingfisher fishes at the weir at dusk")
    receipt = disclosing_receipt(brain, "heron colony", mid)
    assert give(brain, mid, receipt, "bad").terminal == "authorized_transition"
    assert give(brain, other, disclosing_receipt(brain, "kingfisher weir", other), "good").weight_bearing
    kept = give(brain, mid, receipt, "bad")
    assert (kept.terminal, kept.weight_bearing) == ("signed_noop", False)
    real_ledger_of = outcomes.ledger_of

    def forgetful(conn: apsw.Connection, memory_id: str) -> WeightLedger:
        ledger = real_ledger_of(conn, memory_id)
        ledger._disclosures.clear()  # a writer that forgot which recalls already moved the weight
        return ledger

    with monkeypatch.context() as patched:
        patched.setattr(outcomes, "ledger_of", forgetful)
        with pytest.raises(errors.IntegrityError, match="no weight authority"):
            give(brain, mid, receipt, "bad")  # the store's trigger refuses it
        with without(brain.conn, TRIGGER):
            forged = give(brain, mid, receipt, "bad")
    assert forged.terminal == "authorized_transition"
    report = verify_everything(brain.conn, brain.master.fingerprint)
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert failures == {mid: "valence_replay_mismatch"}
    assert report["portable"]["verdict"] == "invalid"
    assert report["portable"]["primary_reason"] == "valence_replay_mismatch"
    assert report["parity"] is True
