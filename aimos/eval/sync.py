"""`aimos eval sync`: how fast a brain moves through a hub. A scratch brain of ``memories``
synthetic notes (the real signed save) is put on the hub (`hub init`: every row pushed,
encrypted), a second scratch home joins it (`hub join`: every record pulled, opened, checked
against its device's chain, inserted through the guards, verified and sealed), then a few more
saves go each way with `sync`. The hub is a PostgreSQL database the caller gives (an empty one:
the scratch brains are added to it and stay there, a few MB per thousand memories).

Figures: memories per second pushed and pulled, bytes on the hub per memory, and the join of a
10,000-memory brain against its target (60 s here)."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

from aimos.eval.perf import fill_synthetic
from aimos.eval.scratch import install_scratch, open_scratch, register, scratch_home
from aimos.eval.targets import Verdict, judge

JOIN_TARGET_SECONDS = 60.0  # 10,000 memories to a new device (issue 39)
JOIN_TARGET_MEMORIES = 10_000


def run_sync_eval(url: str, memories: int = 10_000, more: int = 100) -> dict[str, Any]:
    from aimos.epistemic.detect import settle
    from aimos.hub.device import init, run_sync
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import unlock_master
    from aimos.installer.join import join
    from aimos.installer.setup import InstallOptions
    from aimos.paths import using_home
    from aimos.store.meta import brain_meta

    rng = secrets.SystemRandom()
    passphrase = secrets.token_urlsafe(24)
    with scratch_home("aimos-eval-sync-a-") as home_a:
        install_scratch("sync", "file", passphrase)
        conn, agent, housekeeper = open_scratch()
        t0 = time.perf_counter()
        fill_synthetic(conn, agent, housekeeper, memories, rng)
        settle(conn, housekeeper, int(time.time()))  # the detector's queue, judged as saves do
        build = time.perf_counter() - t0
        meta = brain_meta(conn)
        keystore = open_keystore(meta["keystore"], meta["brain_id"])
        master = unlock_master(conn, keystore, passphrase)
        t0 = time.perf_counter()
        pushed = init(conn, keystore, master, housekeeper, url, int(time.time()))
        push_seconds = time.perf_counter() - t0
        with scratch_home("aimos-eval-sync-b-") as home_b:
            t0 = time.perf_counter()
            joined = join(
                url,
                passphrase,
                InstallOptions(keystore="file", guides=False, service="none"),
                int(time.time()),
            )
            join_seconds = time.perf_counter() - t0
            register(home_b, passphrase)
            with using_home(home_a):
                fill_synthetic(conn, agent, housekeeper, more, rng)
                settle(conn, housekeeper, int(time.time()))  # as each CLI save does after it answers
                t0 = time.perf_counter()
                sent = run_sync(conn, keystore, housekeeper)
                send_seconds = time.perf_counter() - t0
            conn.close()
            received, receive_seconds = _sync_b(home_b)
        size_a = (Path(home_a) / "brain.sqlite3").stat().st_size
    return {
        "memories": memories,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "build_seconds": round(build, 1),
        "push": {
            "records": pushed["records"],
            "bytes": pushed["bytes"],
            "seconds": round(push_seconds, 2),
            "memories_per_second": round(memories / push_seconds, 1),
            "bytes_per_memory": round(pushed["bytes"] / max(1, memories)),
        },
        "join": {
            "records": joined.records,
            "seconds": round(join_seconds, 2),
            "memories_per_second": round(joined.memories / join_seconds, 1),
        },
        "more": {
            "memories": more,
            "push_seconds": round(send_seconds, 2),
            "pushed": sent["pushed"],
            "pull_seconds": round(receive_seconds, 2),
            "pulled": received["pulled"],
        },
        "brain_bytes": size_a,
    }


def _sync_b(home: Path) -> tuple[dict[str, Any], float]:
    from aimos.actions.session import open_brain
    from aimos.hub.device import run_sync
    from aimos.paths import using_home

    with using_home(home), open_brain(write=True) as brain:
        t0 = time.perf_counter()
        done = run_sync(brain.conn, brain.keystore, brain.housekeeper)
        return done, time.perf_counter() - t0


def targets(report: dict[str, Any]) -> list[Verdict]:
    """The join of 10,000 memories in 60 s; measured at another size, the rate it needs."""
    seconds = report["join"]["seconds"]
    if report["memories"] == JOIN_TARGET_MEMORIES:
        return [judge("join of 10,000 memories", seconds, JOIN_TARGET_SECONDS, " s")]
    rate = JOIN_TARGET_MEMORIES / JOIN_TARGET_SECONDS
    return [
        judge(
            "memories pulled per second (10,000 in 60 s)",
            report["join"]["memories_per_second"],
            round(rate, 1),
            "/s",
            at_least=True,
        )
    ]
