"""`aimos eval perf`: the cost of a signed save against its bare parts, in one run.

Bare parts (``bare_parts``, also the baseline of `aimos eval age`), measured in the same process
on the same machine: one Ed25519 signature of a request message, one verification of it, and one
durable commit (an INSERT of a row of the same size in its own transaction, WAL,
synchronous=FULL) into a scratch SQLite file.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aimos.eval.profiling import profile_calls
from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
from aimos.eval.stats import median, sealing_report, summary_ms, time_calls

if TYPE_CHECKING:
    from pathlib import Path

# the floor a cold `aimos` start is measured against: Python with the two native libraries it needs
COLD_BASELINE = "import apsw, nacl.signing"
PROFILED_OPS = 300  # operations in the separate profiled pass (eval.profiling)
WORDS = (
    "river lamp orbit cedar violet anchor meadow signal copper harbor tundra quill ember "
    "lattice pylon saffron glacier beacon prism willow"
).split()


def _text(i: int, rng: secrets.SystemRandom) -> str:
    return f"perf memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(30))


def run_perf(saves: int = 1000, keystore: str = "file", profile: int = 0) -> dict[str, Any]:
    """Signed saves against their bare parts; ``profile``: also that many functions by their own
    time per save, from a separate profiled pass (eval.profiling)."""
    from aimos.actions.bodies import build_save_body
    from aimos.actions.memory import save_and_classify
    from aimos.identity.requests import sign_request
    from aimos.store import seals
    from aimos.vocabulary import PATH_SAVE

    rng = secrets.SystemRandom()
    with scratch_home() as home:
        install_scratch("perf-saves", keystore)
        conn, agent, housekeeper = open_scratch()

        counter = iter(range(10**9))

        def one_save() -> None:
            i = next(counter)
            body = build_save_body(company_id="personal", value=_text(i, rng))
            t = int(time.time())
            # the save every caller makes: signed save, then the classifier, in one transaction
            save_and_classify(conn, housekeeper, sign_request(agent, body, PATH_SAVE, t), t)

        for _ in range(min(20, saves)):  # warm-up (certificate cache, page cache)
            one_save()
        seals.COSTS = seals.SealCosts()  # what sealing and anchoring cost inside each save
        try:
            save_times = time_calls(one_save, saves)
            sealing = dict(seals.COSTS.parts)
        finally:
            seals.COSTS = None
        detector_times = _judge_queue(conn, housekeeper)
        profiled = profile_calls(one_save, min(saves, PROFILED_OPS), profile) if profile else None

        bare = bare_parts(agent, home, saves)
        conn.close()

    report: dict[str, Any] = {
        "saves": saves,
        "keystore": keystore,
        "signed_save": summary_ms(save_times),
        **bare,
    }
    # the agreement detector judges each memory after its save answered (epistemic.detect): its
    # cost, per memory, beside the save's
    report["detector_after_save"] = summary_ms(detector_times)
    report["sealing"] = sealing_report(sealing, report["signed_save"]["median_ms"])
    if profiled is not None:
        report["profile"] = profiled
    report["ratio_save_to_bare_parts"] = round(
        report["signed_save"]["median_ms"] / bare["bare_parts_median_ms"], 3
    )
    report["target_ratio"] = 3.0  # issue 36: <= 1.0 ms and <= 3x the bare parts
    report["target_ms"] = 1.0
    return report


def bare_parts(agent: Any, folder: Path, n: int) -> dict[str, Any]:
    """The bare parts of a signed write, ``n`` times each, measured now in this process: one
    Ed25519 signature of a save request's message and one verification of it (PyNaCl directly: no
    aimos wrapper, no verified-signature memory), and one durable commit (an INSERT of about the
    bytes a save writes, in its own transaction, WAL, synchronous=FULL) into a scratch SQLite file
    in ``folder``; each figure and the sum of their medians."""
    from nacl.signing import SigningKey, VerifyKey

    from aimos.actions.bodies import build_save_body
    from aimos.crypto.messages import request_message
    from aimos.store.queries.eval import bare_commit, open_bare_commit
    from aimos.vocabulary import PATH_SAVE

    sample_body = build_save_body(company_id="personal", value=_text(0, secrets.SystemRandom()))
    message = request_message(sample_body, "POST", PATH_SAVE, "nonce-nonce-nonce", int(time.time()))
    signing_key = SigningKey(agent.key.seed)
    verify_key = VerifyKey(agent.key.raw_public)
    signature = signing_key.sign(message).signature
    sign_times = time_calls(lambda: signing_key.sign(message), n)
    verify_times = time_calls(lambda: verify_key.verify(message, signature), n)

    scratch = open_bare_commit(folder / "commit-baseline.sqlite3", ["t"])
    try:
        payload = message.decode() * 3  # about the bytes a save writes across its rows
        commit_times = time_calls(lambda: bare_commit(scratch, ["t"], payload), n)
    finally:
        scratch.close()
    out: dict[str, Any] = {
        "bare_sign": summary_ms(sign_times),
        "bare_verify": summary_ms(verify_times),
        "bare_durable_commit": summary_ms(commit_times),
    }
    bare = sum(out[k]["median_ms"] for k in ("bare_sign", "bare_verify", "bare_durable_commit"))
    out["bare_parts_median_ms"] = round(bare, 4)
    return out


def _judge_queue(conn: Any, housekeeper: Any) -> list[float]:
    """Judge what the timed saves queued (epistemic.detect.judge_pending), timing each memory's
    judgment."""
    from aimos.epistemic.detect import judge_pending
    from aimos.store.connection import write_transaction

    times: list[float] = []
    with write_transaction(conn, housekeeper):
        judge_pending(conn, housekeeper, int(time.time()), times=times)
    return times


def _vocabulary(rng: secrets.SystemRandom, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def zipf_words(rng: secrets.SystemRandom) -> Callable[[int], str]:
    """A source of realistic word overlap: ``words(n)`` draws ``n`` words from a vocabulary of
    6,000 with Zipf-distributed frequencies (a few words in most texts, most words in few)."""
    vocab = _vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    return lambda n: " ".join(rng.choices(vocab, weights=weights, k=n))


def fill_synthetic(
    conn: Any, agent: Any, housekeeper: Any, memories: int, rng: secrets.SystemRandom
) -> list[str]:
    """Save ``memories`` synthetic notes (Zipf-distributed words) through the real signed save,
    1,000 to a transaction; returns their texts."""
    from aimos.actions.bodies import build_save_body
    from aimos.identity.requests import sign_request
    from aimos.memory.save import save_in_transaction
    from aimos.store.connection import write_transaction
    from aimos.vocabulary import PATH_SAVE

    words = zipf_words(rng)
    texts: list[str] = []
    batch = 1000
    for start in range(0, memories, batch):
        with write_transaction(conn, housekeeper):
            for i in range(start, min(memories, start + batch)):
                text = f"note {i}: " + words(rng.randint(8, 30))
                texts.append(text)
                t = int(time.time())
                body = build_save_body(company_id="personal", value=text)
                save_in_transaction(conn, housekeeper, sign_request(agent, body, PATH_SAVE, t), t)
    return texts


def _check_per_memory(
    conn: Any, rng: secrets.SystemRandom, batches: int = 50, size: int = 10
) -> dict[str, Any]:
    """The disclosure checks (recall.disclosure.verify_many) of ``size`` random memories at once,
    per memory: what a recall pays for each memory it withholds (issue 35: a withheld memory is
    checked as a disclosed one is)."""
    from aimos.recall.disclosure import verify_many
    from aimos.store.queries.eval import memories_by_id, memory_ids

    ids = memory_ids(conn)
    times = []
    for _ in range(batches):
        picked = rng.sample(ids, min(size, len(ids)))
        batch = memories_by_id(conn, picked)
        t0 = time.perf_counter()
        verify_many(conn, batch, allow_superseded=True)
        times.append((time.perf_counter() - t0) / max(1, len(batch)))
    return summary_ms(times)


def run_recall_perf(
    memories: int = 10_000, recalls: int = 200, cold_runs: int = 5, profile: int = 0
) -> dict[str, Any]:
    """Recall latency over a scratch brain of ``memories`` synthetic memories (Zipf-distributed
    words), with the share of retrieval, verification and receipt, and cold-start wall times
    of `aimos --help` and `aimos recall` as subprocesses on that brain. Beside words alone, recall
    fused with the meaning channel over a vector per memory (synthetic: eval.meaning_cost), timed
    with what a recall by meaning adds: prepare's lookup of missing vectors and the question's
    embedding by the real model (when it loads here), then the fused recall."""
    from aimos.actions.bodies import build_recall_body
    from aimos.eval.meaning_cost import synthetic_vectors
    from aimos.identity.requests import sign_request
    from aimos.meaning.index import RECALL_BACKLOG, MeaningQuery
    from aimos.meaning.model import DIMS, MODEL_NAME, load_or_none, why_unavailable
    from aimos.recall.candidates import LexicalChannel, MeaningChannel
    from aimos.recall.pipeline import RecallResult, recall
    from aimos.store import vectors
    from aimos.vocabulary import PATH_RECALL

    rng = secrets.SystemRandom()
    passphrase = secrets.token_urlsafe(24)
    embedder = load_or_none()
    with scratch_home("aimos-eval-recall-") as home:
        install_scratch("perf-recall", passphrase=passphrase)
        conn, agent, housekeeper = open_scratch()
        build_started = time.perf_counter()
        texts = fill_synthetic(conn, agent, housekeeper, memories, rng)
        build_seconds = time.perf_counter() - build_started
        synthetic, meaning_report = synthetic_vectors(conn)

        def query() -> tuple[str, str]:
            """2-4 words of a random memory, and that memory's text (the known item)."""
            text = rng.choice(texts)
            words = [w for w in text.split()[2:] if w.isalpha()]
            return " ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))), text

        def by_meaning(asked: str) -> list[Any]:
            """What prepare() does before a recall by meaning (the question's vector: synthetic,
            to match the brain's; the model's embedding of it is timed, its vector unused)."""
            vectors.pending(conn, MODEL_NAME, RECALL_BACKLOG)
            if embedder is not None:
                embedder.query(asked)
            return [LexicalChannel(), MeaningChannel(MeaningQuery(MODEL_NAME, DIMS, synthetic.vector(asked)))]

        def one(asked: str, channels: Callable[[str], list[Any]]) -> RecallResult:
            t = int(time.time())
            req = sign_request(agent, build_recall_body(query=asked, limit=10), PATH_RECALL, t)
            return recall(conn, housekeeper, req, t, channels=channels(asked))

        # the same queries through today's channel, through the unbounded one (every query term
        # scored over the whole brain: the baseline) and fused with meaning, interleaved so no arm
        # gets the warmer cache; every recall is real (signed, verified, receipted)
        arms: dict[str, Callable[[str], list[Any]]] = {
            "recall": lambda _q: [LexicalChannel()],
            "recall_unbounded": lambda _q: [LexicalChannel(posting_budget=None)],
            "recall_meaning": by_meaning,
        }
        one(query()[0], by_meaning)  # (the detector judges the saves' queue here): not timed
        totals: dict[str, list[float]] = {arm: [] for arm in arms}
        embedding: list[float] = []
        found = dict.fromkeys(arms, 0)
        parts = {"retrieval_s": 0.0, "verification_s": 0.0, "receipt_s": 0.0}
        for i in range(recalls):
            asked, source = query()
            order = list(arms)[i % len(arms) :] + list(arms)[: i % len(arms)]
            for arm in order:
                t0 = time.perf_counter()
                got = one(asked, arms[arm])
                totals[arm].append(time.perf_counter() - t0)
                found[arm] += any(r["value"] == source for r in got.results)
                if arm == "recall":
                    for k in parts:
                        parts[k] += got.timings[k]
            if embedder is not None:
                t0 = time.perf_counter()
                embedder.query(asked)
                embedding.append(time.perf_counter() - t0)

        def one_recall() -> None:
            one(query()[0], arms["recall"])

        profiled = profile_calls(one_recall, min(recalls, PROFILED_OPS), profile) if profile else None
        withheld_check = _check_per_memory(conn, rng)
        conn.close()

        cold = _cold_help_and_recall(cold_cli(home, passphrase), cold_runs, lambda: query()[0])

    spent = sum(parts.values()) or 1.0
    words, meaning = summary_ms(totals["recall"]), summary_ms(totals["recall_meaning"])
    return {
        "memories": memories,
        "recalls": recalls,
        "build_seconds": round(build_seconds, 1),
        **{arm: summary_ms(times) for arm, times in totals.items()},
        "ratio_unbounded_to_recall_p95": round(
            summary_ms(totals["recall_unbounded"])["p95_ms"] / summary_ms(totals["recall"])["p95_ms"], 2
        ),
        # the memory the query's words were drawn from, among the 10 results
        "known_item_found": {arm: round(n / recalls, 3) for arm, n in found.items()},
        "share": {k.removesuffix("_s"): round(v / spent, 3) for k, v in parts.items()},
        "meaning": {
            "added_median_ms": round(meaning["median_ms"] - words["median_ms"], 3),
            "added_p95_ms": round(meaning["p95_ms"] - words["p95_ms"], 3),
            "question_embedding": summary_ms(embedding) if embedding else None,
            "model": None if embedder is not None else why_unavailable(),
            **meaning_report,
        },
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **cold,
        # what a recall adds for each memory it withholds: the same checks as for a disclosed one
        "withheld_check_per_memory": withheld_check,
        "targets": {
            "recall_median_ms": 10,
            "recall_p95_ms": 20,
            "help_ms": 150,
            "cold_recall_ms": 300,
            "meaning_added_median_ms": 15,
        },
        **({"profile": profiled} if profiled is not None else {}),
    }


def _cold_help_and_recall(
    wall: Callable[[list[str]], float], runs: int, asked: Callable[[], str]
) -> dict[str, Any]:
    """`aimos --help` and `aimos recall QUERY` run cold ``runs`` times each (after one untimed
    --help, which compiles the modules it loads)."""
    wall(["--help"])
    help_times = [wall(["--help"]) for _ in range(runs)]
    return {
        "cold_help": summary_ms(help_times),
        "cold_recall": summary_ms([wall(["recall", asked()]) for _ in range(runs)]),
    }


def cold_env(home: Path, passphrase: str) -> dict[str, str]:
    """The environment of a cold `aimos` run on the scratch brain at ``home``: its passphrase from
    a 0600 file, Python's compiled modules kept in a folder of the home (see cold_cli)."""
    env = dict(os.environ, AIMOS_HOME=str(home), PYTHONPYCACHEPREFIX=str(home / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pass_file = home / "passphrase"
    pass_file.write_text(passphrase)
    pass_file.chmod(0o600)
    env["AIMOS_PASSPHRASE_FILE"] = str(pass_file)
    return env


def cold_cli(
    home: Path, passphrase: str, extra: dict[str, str] | None = None
) -> Callable[[list[str]], float]:
    """A timer of the `aimos` command run cold, as a new process, on the scratch brain at ``home``
    (its passphrase from a 0600 file): ``wall(args)`` is the seconds one run took. Empty ``args``
    times the bare baseline instead: Python importing apsw and PyNaCl's signing, nothing else.
    Python may keep its compiled modules (in a folder of the scratch home), as it does for an
    installed aimos, even where PYTHONDONTWRITEBYTECODE is set; the caller runs each command once
    before it times it. ``extra``: more environment (AIMOS_MEANING=off, say)."""
    import subprocess
    import sys

    env = {**cold_env(home, passphrase), **(extra or {})}
    script = [sys.executable, "-c", "from aimos.cli.app import main; main()"]
    bare = [sys.executable, "-c", COLD_BASELINE]

    def wall(args: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(script + args if args else bare, env=env, capture_output=True, check=True)
        return time.perf_counter() - t0

    return wall


# the cold recalls of recall by meaning: the running housekeeper lends its model on the socket; no
# housekeeper, so the command loads the model itself; words only (AIMOS_MEANING=off). The brains'
# vectors are all made first, so no recall makes one.
MEANING_ARMS = ("recall_socket", "recall_model", "recall_words")


def run_cold_perf(runs: int = 7, memories: int = 200) -> dict[str, Any]:
    """Cold starts of the command line, each a new process: `aimos --help`, and `aimos save TEXT`
    (a new text each run) and `aimos recall QUERY` on a scratch brain of ``memories`` synthetic
    notes whose keys are in aimos's key files, and on one whose keys are in the OS keychain (a
    user's default, when there is one: its reads are keyring's and the keychain's time), beside
    the bare baseline; and `aimos recall` by meaning three ways (MEANING_ARMS) on brains whose
    vectors are made; run interleaved ``runs`` times each so none gets a warmer cache."""
    from contextlib import ExitStack

    from aimos.eval.meaning_cost import housekeeper_lending
    from aimos.identity.keystore import os_keychain_problem
    from aimos.meaning.index import embed_pending
    from aimos.meaning.model import load_or_none, why_unavailable

    rng = secrets.SystemRandom()
    keystores = ("file", "os") if os_keychain_problem() is None else ("file",)
    names = ["bare", "help"] + [f"{cmd}_{keystore}" for keystore in keystores for cmd in ("save", "recall")]
    embedder = load_or_none()
    meaning_note = None if embedder is not None else f"no recall by meaning here: {why_unavailable()}"
    walls, texts = {}, {}
    with ExitStack() as stack:

        def scratch(kind: str, keystore: str = "file") -> tuple[Path, str]:
            home = stack.enter_context(scratch_home(f"aimos-eval-cold-{kind}-"))
            passphrase = secrets.token_urlsafe(24)
            install_scratch(f"perf-cold-{kind}", keystore, passphrase=passphrase)
            conn, agent, housekeeper = open_scratch()
            texts[kind] = fill_synthetic(conn, agent, housekeeper, memories, rng)
            if embedder is not None:  # every vector made: a recall makes only the new save's
                embed_pending(conn, embedder)
            conn.close()
            return home, passphrase

        for keystore in keystores:
            walls[keystore] = cold_cli(*scratch(keystore, keystore))
        if embedder is not None:
            served, served_pass = scratch("served")
            lent = stack.enter_context(housekeeper_lending(served, cold_env(served, served_pass)))
            if lent:
                names.append("recall_socket")
                walls["socket"] = cold_cli(served, served_pass)
                texts["socket"] = texts["served"]
            else:
                meaning_note = "the housekeeper did not lend its model: recall_socket left out"
            alone = scratch("alone")
            names += ["recall_model", "recall_words"]
            walls["model"] = cold_cli(*alone)
            walls["words"] = cold_cli(*alone, extra={"AIMOS_MEANING": "off"})
            texts["model"] = texts["words"] = texts["alone"]
        times: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for i in range(-1, runs):  # round -1 compiles the modules each command loads: not timed
            for name in names:
                cmd, _, keystore = name.partition("_")
                words = rng.choice(texts[keystore or "file"]).split()[2:]
                args = {
                    "bare": [],
                    "help": ["--help"],
                    "save": ["save", f"cold start {i}: " + " ".join(rng.choice(WORDS) for _ in range(12))],
                    "recall": ["recall", " ".join(rng.sample(words, min(len(words), 3)))],
                }[cmd]
                cpu0 = _children_cpu_seconds()
                seconds = walls[keystore or "file"](args)
                if i >= 0:
                    times[name].append(seconds)
                    cpu[name].append(_children_cpu_seconds() - cpu0)
    return {
        "runs": runs,
        "memories": memories,
        "baseline": COLD_BASELINE,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
        "commands": {name: summary_ms(v) for name, v in times.items()},
        # the CPU time each process took (user and system): less moved by a busy machine than its wall
        "cpu": {name: summary_ms(v) for name, v in cpu.items()},
        "ratio_to_bare": {name: round(median(times[name]) / median(times["bare"]), 2) for name in names[1:]},
        "meaning_note": meaning_note,
        "targets": {
            "save_median_ms": 150,
            "recall_median_ms": 150,
            "recall_socket_median_ms": 150,
            "recall_model_median_ms": 300,
        },
    }


def _children_cpu_seconds() -> float:
    """CPU time of this process's children that have ended."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (a forked verifier)."""
    import resource

    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def run_verify_perf(memories: int = 10_000, runs: int = 2) -> dict[str, Any]:
    """`aimos verify`'s work (both verifiers, parity and the brain checks: seals, schema, search
    indexes) over a scratch brain of ``memories`` synthetic memories: wall time per run and where
    it goes (the time each verify phase took, and the brain checks' own parts), with the CPU
    time it took (every thread, and the forked verifier) and the machine's load average, since
    a busy machine leaves no core to spare."""
    from aimos.store.connection import open_writer
    from aimos.store.queries.eval import checkpoint
    from aimos.verify.brain.parity import verify_everything

    rng = secrets.SystemRandom()
    with scratch_home("aimos-eval-verify-") as home:
        result = install_scratch("perf-verify", "file")
        conn, agent, housekeeper = open_scratch()
        started = time.perf_counter()
        fill_synthetic(conn, agent, housekeeper, memories, rng)
        build_seconds = time.perf_counter() - started
        checkpoint(conn)
        conn.close()
        size = (home / "brain.sqlite3").stat().st_size
        load = os.getloadavg()  # before the runs: what else the machine was doing
        out: list[dict[str, Any]] = []
        for _ in range(runs):
            conn = open_writer()
            marks: list[tuple[str, float]] = []
            t0 = time.perf_counter()

            def mark(_done: int, phase: str, marks: list[tuple[str, float]] = marks, t0: float = t0) -> None:
                marks.append((phase, time.perf_counter() - t0))

            cpu0 = _cpu_seconds()
            report = verify_everything(conn, result.master_fingerprint, progress=mark)
            total = time.perf_counter() - t0
            cpu = _cpu_seconds() - cpu0
            conn.close()
            phases = {
                name: round(marks[i + 1][1] - marks[i][1], 3) for i, (name, _at) in enumerate(marks[:-1])
            }
            out.append(
                {
                    "seconds": round(total, 3),
                    "cpu_seconds": round(cpu, 3),
                    "ok": report["ok"],
                    "phases": phases,
                    "brain_checks": (report["brain"] or {}).get("seconds"),
                }
            )
    return {
        "memories": memories,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in load],
        "build_seconds": round(build_seconds, 1),
        "brain_bytes": size,
        "runs": out,
        "median_seconds": round(sorted(r["seconds"] for r in out)[len(out) // 2], 3),
    }
