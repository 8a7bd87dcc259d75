"""Offline ingest + distill throughput (turns per second) and peak RSS.

    .venv/bin/python bench/ingest.py [--synthetic 1000] [--skip-per-session]

Workloads, each in a fresh data directory and a fresh process (so peak RSS is its own):
- LoCoMo dev split (bench/locomo.py `sessions_of`), one data directory per conversation;
- `--synthetic` sessions of 20 turns (bench/synth.py), one data directory.
Paths:
- per-session: `Alaya.ingest` for each session, then `Alaya.distill()` (what a loop of
  `alaya ingest FILE` + `alaya distill` does);
- bulk: `Alaya.ingest_many` (many sessions per lock hold) + `Alaya.distill()` (what
  `alaya ingest DIR --distill` does).
Default heuristic distiller and hash embedder: no network. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402


def workload(name: str, count: int) -> list[list]:
    """Groups of sessions; each group goes into its own data directory."""
    if name == "locomo":
        from locomo import DEFAULT_DATASET, sessions_of

        data = json.loads(Path(DEFAULT_DATASET).read_text())
        return [sessions_of(conv["conversation"], conv["sample_id"]) for conv in data]
    return [synth.synthetic_sessions(count)]


def run_one(name: str, path: str, count: int) -> dict:
    from openclaw_alaya import Alaya

    groups = workload(name, count)
    turns = sum(len(s.turns) for g in groups for s in g)
    ingest_s = distill_s = 0.0
    cards = 0
    with tempfile.TemporaryDirectory(prefix="alaya-ingest-bench-") as tmp:
        for i, sessions in enumerate(groups):
            memory = Alaya(Path(tmp) / f"d{i}")
            memory.init()
            started = time.perf_counter()
            if path == "bulk":
                memory.ingest_many(sessions)
            else:
                for session in sessions:
                    memory.ingest(session)
            ingested = time.perf_counter()
            cards += memory.distill().cards
            distill_s += time.perf_counter() - ingested
            ingest_s += ingested - started
    return {"workload": name, "path": path, "sessions": sum(len(g) for g in groups), "turns": turns, "cards": cards,
            "ingest_s": ingest_s, "distill_s": distill_s, "turns_per_s": turns / (ingest_s + distill_s),
            "peak_rss_mb": synth.peak_rss_mb()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=1000, help="synthetic sessions (20 turns each)")
    parser.add_argument("--skip-per-session", action="store_true", help="only the bulk path")
    parser.add_argument("--one", nargs=2, metavar=("WORKLOAD", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], args.synthetic)))
        return 0
    runs = [("locomo", "per-session"), ("locomo", "bulk"), ("synthetic", "per-session"), ("synthetic", "bulk")]
    if args.skip_per_session:
        runs = [r for r in runs if r[1] == "bulk"]
    print(f"load average before: {Path('/proc/loadavg').read_text().split()[0]}")
    print("| workload | path | sessions | turns | cards | ingest s | distill s | turns/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, path in runs:
        proc = subprocess.run([sys.executable, __file__, "--synthetic", str(args.synthetic), "--one", name, path],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"| {name} | {path} | failed: {proc.stderr.strip().splitlines()[-1:]} |")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {name} | {path} | {r['sessions']} | {r['turns']} | {r['cards']} | {r['ingest_s']:.1f} | "
              f"{r['distill_s']:.1f} | {r['turns_per_s']:.0f} | {r['peak_rss_mb']:.0f} |", flush=True)
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
