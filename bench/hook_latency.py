"""Wall time of `alaya hook session-start` on a data directory of about 1,000 cards.

Builds the directory once through the Python API (synthetic sessions, ingested and distilled
by the default heuristic distiller), then runs the hook as a fresh process N times, as
OpenClaw runs it: "cold" (no daemon: the process imports everything and answers itself) and
"warm" (`alaya serve` running: the stdlib-only client forwards the event over the socket).
Prints the median and p95 of each, and the peak RSS of the daemon.

    .venv/bin/python bench/hook_latency.py [--data DIR] [--runs 10] [--cards 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import TOPICS, daemon_rss_mb  # noqa: E402

TEMPLATES = [
    ("user", "We decided to use {a} instead of {b} because the {c} setup was too slow."),
    ("assistant", "Noted: {a} is now the default for {c}. Watch out: {a} needs the {d} flag on CI."),
    ("user", "The {a} deploy failed again with a timeout error; the cause was {b} holding the lock."),
    ("assistant", "Fix: restart {b} before {a} migrations, and always run them once."),
    ("user", "I prefer {a} over {b} for {c}, please remember that for session {n}."),
    ("assistant", "Got it, {a} for {c}. The {d} port is {p} in staging."),
]


def build(data: Path, cards: int) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from openclaw_alaya import Alaya
    from openclaw_alaya.models import Session, Turn

    memory = Alaya(data)
    memory.init()
    rng = random.Random(7)
    n = 0
    while _cards(memory) < cards:
        batch = []
        for _ in range(20):
            n += 1
            turns = []
            for i, (role, text) in enumerate(TEMPLATES * 2, 1):
                a, b, c, d = rng.sample(TOPICS, 4)
                turns.append(Turn(id=f"t{i:04d}", role=role, content=text.format(a=a, b=b, c=c, d=d, n=n, p=rng.randint(1000, 9999)),
                                  timestamp=f"2026-0{1 + n % 9}-{1 + n % 27:02d}T10:{i:02d}:00Z"))
            batch.append(Session(id=f"bench-{n:05d}", agent_id="main" if n % 3 else "shared",
                                 title=f"bench session {n}", turns=turns))
        for session in batch:
            memory.ingest(session)
        memory.distill()
    return _cards(memory)


def _cards(memory) -> int:
    with memory.reading("bench") as graph:
        return graph.counts()["cards"]


def time_runs(data: Path, event: dict, runs: int, env: dict | None = None) -> list[float]:
    exe = Path(sys.executable).with_name("alaya")
    argv = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "openclaw_alaya"]),
            "--data-dir", str(data), "hook", "session-start", "--budget", "1200"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, input=json.dumps(event), capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0 or "prependContext" not in proc.stdout:
            raise SystemExit(f"hook failed: {proc.returncode} {proc.stderr.strip()} {proc.stdout[:200]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/alaya-bench-1000"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cards", type=int, default=1000)
    args = parser.parse_args()
    if not (args.data / "graph.kuzu").exists():
        started = time.perf_counter()
        count = build(args.data, args.cards)
        print(f"built {args.data}: {count} cards in {time.perf_counter() - started:.0f}s")
    events = {
        "prompt": {"agentId": "main", "sessionId": "bench", "prompt": "why did the kuzu deploy fail with a timeout?"},
        "empty prompt": {"agentId": "main", "sessionId": "bench", "prompt": ""},
    }
    env = {k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "ALAYA_NO_SERVE")}
    cold_env = {**env, "ALAYA_NO_SERVE": "1"}
    time_runs(args.data, events["prompt"], 1, cold_env)  # untimed: caches the summary, as session-end does
    print(f"load average: {Path('/proc/loadavg').read_text().split()[0]}")
    print("| path | prompt | runs | median s | p95 s | min s | max s |")
    print("|---|---|---|---|---|---|---|")

    def row(path: str, label: str, times: list[float]) -> None:
        times = sorted(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"| {path} | {label} | {len(times)} | {statistics.median(times):.3f} | {p95:.3f} | {times[0]:.3f} | "
              f"{times[-1]:.3f} |", flush=True)

    for label, event in events.items():
        row("cold process", label, time_runs(args.data, event, args.runs, cold_env))
    exe = Path(sys.executable).with_name("alaya")
    subprocess.run([str(exe), "--data-dir", str(args.data), "serve", "start"], check=True, capture_output=True, env=env)
    try:
        time_runs(args.data, events["prompt"], 1, env)  # untimed: the daemon's first request
        for label, event in events.items():
            row("warm (alaya serve)", label, time_runs(args.data, event, args.runs, env))
        print(f"daemon peak RSS: {daemon_rss_mb(args.data):.0f} MiB")
    finally:
        subprocess.run([str(exe), "--data-dir", str(args.data), "serve", "stop"], capture_output=True, env=env)


if __name__ == "__main__":
    main()
