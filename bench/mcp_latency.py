"""MCP tool-call latency through a running `alaya mcp` (stdio, the real MCP Python client):
search_memory at 10k cards (p50/p95), and save_memory for comparison.

    .venv-test/bin/python bench/mcp_latency.py [--cards 10000] [--calls 200]

The store is the synthetic one of bench/synth.py (built once, cached), copied to a temporary
folder so the calls' writes do not change the cache. Times are client-side: request sent to
answer parsed, so they include the JSON-RPC framing and the pipe.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402


async def measure(store: Path, calls: int) -> dict:
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "ALAYA_NO_SERVE": "1"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "openclaw_alaya", "--data-dir", str(store), "mcp"],
                                   env=env)
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        await client.call_tool("search_memory", {"query": "warm up"})  # imports, index handles, graph snapshot
        first = time.perf_counter() - started
        results = {"search_memory": [], "save_memory": []}
        for query in synth.queries(calls, seed=9):
            t0 = time.perf_counter()
            answer = await client.call_tool("search_memory", {"query": query, "limit": 10})
            results["search_memory"].append(time.perf_counter() - t0)
            assert not answer.is_error, answer.content[0].text
        for i in range(max(5, calls // 10)):
            t0 = time.perf_counter()
            answer = await client.call_tool("save_memory", {"content": f"Benchmark note {i}: the cache TTL is {i} s."})
            results["save_memory"].append(time.perf_counter() - t0)
            assert not answer.is_error, answer.content[0].text
    return {"first_call_s": first, **{name: {"p50_ms": synth.percentile(t, 0.5) * 1000, "p95_ms": synth.percentile(t, 0.95) * 1000,
                                             "calls": len(t)} for name, t in results.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    cached = synth.build_store(args.cards)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(cached, store)
        figures = asyncio.run(measure(store, args.calls))
    print(f"alaya mcp at {args.cards} cards (stdio, {os.cpu_count()} CPUs):")
    print(f"  first call (start, imports, warm-up): {figures['first_call_s']:.2f} s")
    for name in ("search_memory", "save_memory"):
        f = figures[name]
        print(f"  {name}: p50 {f['p50_ms']:.1f} ms, p95 {f['p95_ms']:.1f} ms over {f['calls']} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
