"""Recall latency at 1k / 10k / 100k cards: in process and through the CLI (cold process, and
through `alaya serve`), p50 / p95, with peak RSS.

    .venv/bin/python bench/recall.py [--sizes 1000,10000,100000] [--queries 200] [--cli-runs 10]

Stores are synthetic (bench/synth.py: cards shaped like the heuristic distiller's, LoCoMo
text, a graph of TEMPORAL_NEXT / SIMILAR_TO / CAUSES / DEPENDS_ON edges), built with Kuzu COPY
and one LanceDB add, cached under ~/.cache/alaya-bench (`$ALAYA_BENCH_CACHE`). The default
hash embedder; recall as `alaya recall QUERY` does it (plain query, depth 0), and with
`--concepts` + depth 1 (a graph walk). Each in-process figure runs in its own process, marked
long-lived as `alaya serve` marks itself, after one untimed first query that loads the vector
copy and the graph snapshot (its time is the last column), so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

ALAYA = Path(sys.executable).with_name("alaya")


def in_process(store: Path, count: int, structured: bool) -> dict:
    from openclaw_alaya import Alaya

    memory = Alaya(store)
    memory.index.resident = memory.graph_views.resident = True  # a long-lived process, as `alaya serve`
    queries = synth.queries(count + 1)
    call = (lambda q: memory.recall(concepts=q.split()[-2:], depth=1)) if structured else (lambda q: memory.recall(q))
    started = time.perf_counter()
    call(queries[0])  # untimed: imports, table handles, the vector copy and the graph snapshot
    first = time.perf_counter() - started
    times = []
    for q in queries[1:]:
        started = time.perf_counter()
        call(q)
        times.append(time.perf_counter() - started)
    return {"p50": synth.percentile(times, 0.5), "p95": synth.percentile(times, 0.95), "rss": synth.peak_rss_mb(),
            "first": first}


def cli(store: Path, runs: int, env: dict) -> dict:
    times = []
    for q in synth.queries(runs, seed=5):
        started = time.perf_counter()
        proc = subprocess.run([str(ALAYA), "--data-dir", str(store), "recall", q, "--json"], capture_output=True,
                              text=True, env=env)
        times.append(time.perf_counter() - started)
        if proc.returncode != 0:
            raise SystemExit(f"recall failed: {proc.stderr.strip()}")
    return {"p50": synth.percentile(times, 0.5), "p95": synth.percentile(times, 0.95)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="timed in-process recalls per size")
    parser.add_argument("--cli-runs", type=int, default=10, help="timed CLI recalls per size and mode")
    parser.add_argument("--one", nargs=3, metavar=("STORE", "COUNT", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(in_process(Path(args.one[0]), int(args.one[1]), args.one[2] == "structured")))
        return 0
    print(f"load average before: {Path('/proc/loadavg').read_text().split()[0]}")
    print("| cards | path | p50 ms | p95 ms | peak RSS MiB | first recall s |")
    print("|---|---|---|---|---|---|")
    env = {k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "ALAYA_NO_SERVE")}
    for n in (int(s) for s in args.sizes.split(",")):
        cached = synth.build_store(n)
        with tempfile.TemporaryDirectory(prefix="alaya-recall-bench-") as tmp:
            store = Path(tmp) / "data"
            shutil.copytree(cached, store)  # the access log and the daemon's files stay out of the cache
            for mode in ("query", "structured"):
                proc = subprocess.run([sys.executable, __file__, "--one", str(store), str(args.queries), mode],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"| {n} | in process ({mode}) | failed: {proc.stderr.strip().splitlines()[-1:]} |")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                label = "in process, `recall(query)`" if mode == "query" else "in process, concepts + depth 1"
                print(f"| {n} | {label} | {r['p50'] * 1000:.1f} | {r['p95'] * 1000:.1f} | {r['rss']:.0f} | "
                      f"{r['first']:.2f} |", flush=True)
            r = cli(store, args.cli_runs, {**env, "ALAYA_NO_SERVE": "1"})
            print(f"| {n} | CLI `alaya recall`, cold process | {r['p50'] * 1000:.0f} | {r['p95'] * 1000:.0f} | | |", flush=True)
            subprocess.run([str(ALAYA), "--data-dir", str(store), "serve", "start"], check=True, capture_output=True, env=env)
            try:
                r = cli(store, args.cli_runs, env)
                print(f"| {n} | CLI `alaya recall` via `alaya serve` | {r['p50'] * 1000:.0f} | {r['p95'] * 1000:.0f} | "
                      f"{synth.daemon_rss_mb(store):.0f} (daemon) | |", flush=True)
            finally:
                subprocess.run([str(ALAYA), "--data-dir", str(store), "serve", "stop"], capture_output=True, env=env)
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
