"""`aimos eval perf`: the cost of a signed save against its bare parts, in one run.

Bare parts, measured in the same process on the same machine: one Ed25519 signature of a
request message, one verification of it, and one durable commit (an INSERT of a row of the
same size in its own transaction, WAL, synchronous=FULL) into a scratch SQLite file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aimos.eval.stats import summary_ms

WORDS = (
    "river lamp orbit cedar violet anchor meadow signal copper harbor tundra quill ember "
    "lattice pylon saffron glacier beacon prism willow"
).split()


@contextmanager
def scratch_home(prefix: str = "aimos-eval-") -> Iterator[Path]:
    """A temporary AIMOS_HOME for a scratch brain; removed afterwards."""
    old = os.environ.get("AIMOS_HOME")
    home = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["AIMOS_HOME"] = str(home)
    try:
        yield home
    finally:
        if old is None:
            os.environ.pop("AIMOS_HOME", None)
        else:
            os.environ["AIMOS_HOME"] = old
        shutil.rmtree(home, ignore_errors=True)


def _text(i: int, rng: secrets.SystemRandom) -> str:
    return f"perf memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(30))


def _timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def run_perf(saves: int = 1000, keystore: str = "file") -> dict[str, Any]:
    import apsw
    from nacl.signing import SigningKey, VerifyKey

    from aimos.crypto.messages import request_message
    from aimos.identity.epochs import HOUSEKEEPER, load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.identity.requests import PATH_SAVE, sign_request
    from aimos.memory.save import build_save_body, save
    from aimos.store.connection import open_writer
    from installer.setup import InstallOptions, install

    rng = secrets.SystemRandom()
    with scratch_home() as home:
        result = install(InstallOptions(keystore=keystore), secrets.token_urlsafe(24), int(time.time()))
        conn = open_writer()
        store = open_keystore(result.keystore_kind, result.brain_id)
        now = int(time.time())
        agent = load_signer(conn, store, "cli", now)
        housekeeper = load_signer(conn, store, HOUSEKEEPER, now)

        counter = iter(range(10**9))

        def one_save() -> None:
            i = next(counter)
            body = build_save_body(company_id="personal", value=_text(i, rng))
            t = int(time.time())
            save(conn, housekeeper, sign_request(agent, body, PATH_SAVE, t), t)

        for _ in range(min(20, saves)):  # warm-up (certificate cache, page cache)
            one_save()
        save_times = _timed(one_save, saves)

        # Bare parts use PyNaCl directly: no aimos wrapper, no verified-signature memory.
        sample_body = build_save_body(company_id="personal", value=_text(0, rng))
        message = request_message(sample_body, "POST", PATH_SAVE, "nonce-nonce-nonce", now)
        signing_key = SigningKey(agent.key.seed)
        verify_key = VerifyKey(agent.key.raw_public)
        signature = signing_key.sign(message).signature
        sign_times = _timed(lambda: signing_key.sign(message), saves)
        verify_times = _timed(lambda: verify_key.verify(message, signature), saves)

        scratch = apsw.Connection(str(home / "commit-baseline.sqlite3"))
        scratch.execute("PRAGMA journal_mode = WAL")
        scratch.execute("PRAGMA synchronous = FULL")
        scratch.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        payload = message.decode() * 3  # about the bytes a save writes across its rows

        def one_commit() -> None:
            scratch.execute("BEGIN IMMEDIATE")
            scratch.execute("INSERT INTO t (body) VALUES (?)", (payload,))
            scratch.execute("COMMIT")

        commit_times = _timed(one_commit, saves)
        scratch.close()
        conn.close()

    report: dict[str, Any] = {
        "saves": saves,
        "keystore": keystore,
        "signed_save": summary_ms(save_times),
        "bare_sign": summary_ms(sign_times),
        "bare_verify": summary_ms(verify_times),
        "bare_durable_commit": summary_ms(commit_times),
    }
    bare = sum(report[k]["median_ms"] for k in ("bare_sign", "bare_verify", "bare_durable_commit"))
    report["bare_parts_median_ms"] = round(bare, 4)
    report["ratio_save_to_bare_parts"] = round(report["signed_save"]["median_ms"] / bare, 3)
    report["target_ratio"] = 2.0
    return report
