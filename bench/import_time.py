"""Import time of the paths a user or a hook pays for in a fresh process (not a test).

Each row is the median (and p95) wall time of N fresh `python -c …` processes, so it includes
the interpreter's start. `alaya --version` and the daemon client must stay light; the engine,
the recall modules and `import lance` (Lance's reader, store/embedded/lance_reads.py) are what a cold
`alaya recall` / `hook session-start` pay before any work; `import lancedb` is paid only by a
process that writes L1.

    .venv/bin/python bench/import_time.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

ROWS = [
    ("python itself", "pass"),
    ("daemon client (`alaya` entry point)", "import openclaw_alaya.cli.client"),
    ("CLI parser (`alaya --help`)", "import openclaw_alaya.cli.main"),
    ("engine (`from openclaw_alaya import Alaya`)", "import openclaw_alaya.engine"),
    ("recall path (engine + recall + Lance's reader)", "import openclaw_alaya.engine, openclaw_alaya.recall.navigate, "
                                                       "openclaw_alaya.store.embedded.vectors, lance"),
    ("import lance", "import lance"),
    ("import kuzu", "import kuzu"),
    ("import lancedb (with the REST client deferred)", "from openclaw_alaya.store.embedded import native; "
                                                       "native.defer_rest_client(); import lancedb"),
    ("import lancedb (plain)", "import lancedb"),
]


def timed(code: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        out.append(time.perf_counter() - started)
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"{args.runs} fresh processes each")
    print("| what | median s | p95 s |")
    print("|---|---|---|")
    for label, code in ROWS:
        times = timed(code, args.runs)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"| {label} | {statistics.median(times):.3f} | {p95:.3f} |", flush=True)


if __name__ == "__main__":
    main()
