"""`aimos eval mcp`: what one MCP tool call costs, with the server's keys read once (the default)
and read from the keystore at every call (--no-key-cache), and, as the baseline, with the brain
opened anew at every call (as the server did before it kept its session), in the same run on the
same brain.

A scratch brain (the OS keychain by default: the keystore whose reads the cache saves) and the
real server (build_server) for the CLI agent; each tool is called in process, as the SDK calls it
for a client's request (the stdio framing, the same in every mode, is left out). A call is timed
until its answer; what the server does after answering (a save's agreement detector, moving the
WAL into the brain file) is timed apart, and the next call starts once it is done.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from aimos.eval.stats import summary_ms
from aimos.identity.keystore import KeystoreCache

MODES = ("key_cache", "no_key_cache", "new_session")


async def _calls(server: Any, calls: int, rng: secrets.SystemRandom) -> dict[str, list[float]]:
    from aimos.mcp.server import wait_idle

    times: dict[str, list[float]] = {"save_memory": [], "recall": [], "save_after": [], "recall_after": []}
    for i in range(calls):
        for tool, arguments in (
            ("save_memory", {"text": f"bench note {i} {secrets.token_hex(4)} on the {rng.choice(WORDS)}"}),
            ("recall", {"query": f"note on the {rng.choice(WORDS)}", "limit": 5}),
        ):
            wait_idle()
            t0 = time.perf_counter()
            got = await server.call_tool(tool, arguments)
            t1 = time.perf_counter()
            wait_idle()
            times[tool].append(t1 - t0)
            times[f"{tool.split('_')[0]}_after"].append(time.perf_counter() - t1)
            if getattr(got, "is_error", False):
                raise RuntimeError(f"the benchmark's {tool} call was refused")
    return times


WORDS = ("boiler", "garden", "passport", "dentist", "train", "kettle", "roof", "bank")


def run_mcp_perf(calls: int = 50, keystore: str = "os") -> dict[str, Any]:
    from aimos.eval.scratch import install_scratch, scratch_home
    from aimos.mcp.server import build_server, close_brain

    rng = secrets.SystemRandom()
    report: dict[str, Any] = {"calls": calls, "keystore": keystore}
    with scratch_home("aimos-eval-mcp-"):
        install_scratch("perf-mcp", keystore)
        for mode in MODES:
            cache = None if mode == "no_key_cache" else KeystoreCache()
            server = build_server("cli", cache, keep_brain=mode != "new_session")
            asyncio.run(_calls(server, 3, rng))  # warm-up: imports, page cache, the first key read
            times = asyncio.run(_calls(server, calls, rng))
            close_brain(server)
            report[mode] = {
                "save": summary_ms(times["save_memory"]),
                "recall": summary_ms(times["recall"]),
                "save_after": summary_ms(times["save_after"]),
                "recall_after": summary_ms(times["recall_after"]),
            }
    for call in ("save", "recall"):
        for other in ("no_key_cache", "new_session"):
            report[f"ratio_{call}_{'no_cache' if other == 'no_key_cache' else other}_to_cache"] = round(
                report[other][call]["median_ms"] / report["key_cache"][call]["median_ms"], 3
            )
    report["target_ms"] = 10
    return report
