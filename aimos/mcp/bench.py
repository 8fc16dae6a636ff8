"""`aimos eval mcp`: what one MCP tool call costs, with the server's keys read once (the default)
and read from the keystore at every call (--no-key-cache), in the same run on the same brain.

A scratch brain (the OS keychain by default: the keystore whose reads the cache saves) and the
real server (build_server) for the CLI agent; each tool is called in process, as the SDK calls it
for a client's request (the stdio framing, the same in both modes, is left out).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from aimos.eval.stats import summary_ms
from aimos.identity.keystore import KeystoreCache


async def _calls(server: Any, calls: int, rng: secrets.SystemRandom) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"save_memory": [], "recall": []}
    for i in range(calls):
        for tool, arguments in (
            ("save_memory", {"text": f"bench note {i} {secrets.token_hex(4)} on the {rng.choice(WORDS)}"}),
            ("recall", {"query": f"note on the {rng.choice(WORDS)}", "limit": 5}),
        ):
            t0 = time.perf_counter()
            got = await server.call_tool(tool, arguments)
            times[tool].append(time.perf_counter() - t0)
            if getattr(got, "is_error", False):
                raise RuntimeError(f"the benchmark's {tool} call was refused")
    return times


WORDS = ("boiler", "garden", "passport", "dentist", "train", "kettle", "roof", "bank")


def run_mcp_perf(calls: int = 50, keystore: str = "os") -> dict[str, Any]:
    from aimos.eval.scratch import install_scratch, scratch_home
    from aimos.mcp.server import build_server

    rng = secrets.SystemRandom()
    report: dict[str, Any] = {"calls": calls, "keystore": keystore}
    with scratch_home("aimos-eval-mcp-"):
        install_scratch("perf-mcp", keystore)
        for mode, cache in (("key_cache", KeystoreCache()), ("no_key_cache", None)):
            server = build_server("cli", cache)
            asyncio.run(_calls(server, 3, rng))  # warm-up: imports, page cache, the first key read
            times = asyncio.run(_calls(server, calls, rng))
            report[mode] = {"save": summary_ms(times["save_memory"]), "recall": summary_ms(times["recall"])}
    for call in ("save", "recall"):
        report[f"ratio_{call}_no_cache_to_cache"] = round(
            report["no_key_cache"][call]["median_ms"] / report["key_cache"][call]["median_ms"], 3
        )
    report["target_ms"] = 10
    return report
