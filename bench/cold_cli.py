"""Cold `alaya recall` and `alaya hook session-start` on the demo sessions: what a user typing a
command, or OpenClaw calling the hook with no daemon running, waits for (not a test).

The demo sessions (`openclaw_alaya/demo/`) are ingested and distilled into a fresh data
directory once; then each command runs `--runs` times as a fresh process with no daemon
(`ALAYA_NO_SERVE=1`), and the median and slowest wall times are printed, with the median CPU
time (user + system) beside them. Run it on an idle machine: it measures what a process pays to
start, import and answer; the CPU time moves less than the wall time when something else runs. Bytecode is cached as on
a user's machine (`PYTHONDONTWRITEBYTECODE` is dropped for the runs: an editable checkout would
otherwise compile every module of the package from source on each call, about 0.2 s).

    .venv-test/bin/python bench/cold_cli.py [--runs 10] [--embedder local]

`--embedder` sets embedding.provider before the demo is ingested (issue 32: what a neural
embedder adds to a cold command, the model's load included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
_EXE = Path(sys.executable).with_name("alaya")
_ARGV = [str(_EXE)] if _EXE.exists() else [sys.executable, "-m", "openclaw_alaya"]
QUERY = "which graph database did we choose"
START = {"agentId": "main", "sessionId": "bench-cold", "prompt": "which package manager do we use?", "messages": []}


def run(data: Path, args: list[str], stdin: str = "") -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call in a fresh process."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "PYTHONDONTWRITEBYTECODE")},
           "ALAYA_NO_SERVE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*_ARGV, "--data-dir", str(data), *args], input=stdin, capture_output=True, text=True,
                   env=env, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--embedder", help="embedding.provider of the store (default: the default, hash)")
    options = parser.parse_args()
    runs = options.runs
    with tempfile.TemporaryDirectory(prefix="alaya-cold-") as tmp:
        data = Path(tmp) / "data"
        run(data, ["init"])
        if options.embedder:
            run(data, ["config", "set", "embedding.provider", options.embedder])
            run(data, ["reembed"])  # the index init made is the default embedder's
        run(data, ["ingest", *map(str, sorted(DEMO.iterdir())), "--distill"])
        rows = [("alaya recall (cold)", ["recall", QUERY, "--json"], ""),
                ("alaya hook session-start (cold)", ["hook", "session-start", "--budget", "1200"], json.dumps(START))]
        print("| command | median (s) | slowest (s) | CPU median (s) | runs |\n|---|---|---|---|---|")
        for name, args, stdin in rows:
            run(data, args, stdin)  # the page cache warm, as for a user's second command
            walls, cpus = zip(*(run(data, args, stdin) for _ in range(runs)))
            print(f"| {name} | {statistics.median(walls):.2f} | {max(walls):.2f} | {statistics.median(cpus):.2f} | {runs} |")


if __name__ == "__main__":
    main()
