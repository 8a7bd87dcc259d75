"""What the COLD tier costs and saves (issue 31): a store of N synthetic cards (synth.py) with
every card's L1 row kept (issue 31: COLD keeps its full-text row and vector), against the same
store with the COLD share of rows dropped (before issue 31). Printed per variant: the bytes of
`lancedb/` after compaction, the peak RSS and median wall time of a one-shot `alaya recall`
(3 queries, median of 3 runs each), and how many of the queried cards recall still finds.

    .venv/bin/python bench/tiers.py [--cards 3000] [--cold 0.8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import build_store  # noqa: E402

from openclaw_alaya import Alaya  # noqa: E402
from openclaw_alaya.store.embedded.footprint import size_of  # noqa: E402


def _recall(data: Path, query: str) -> tuple[float, float, list[str]]:
    """(seconds, peak RSS MiB, card ids) of one `alaya recall --json` process."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data),
                           "recall", query, "--json"], capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - started
    rss = int(done.stderr.strip().splitlines()[-1]) / 1024
    return seconds, rss, [n["card_id"] for n in json.loads(done.stdout)["nodes"]]


def measure(data: Path, probes: list[tuple[str, str]]) -> dict[str, float]:
    times, rss, found = [], [], 0
    for cid, query in probes:
        runs = [_recall(data, query) for _ in range(3)]
        times.append(statistics.median(r[0] for r in runs))
        rss.append(max(r[1] for r in runs))
        found += cid in runs[0][2][:5]
    return {"lancedb_bytes": size_of(data / "lancedb"), "recall_s_median": round(statistics.median(times), 3),
            "recall_peak_rss_mib": round(max(rss), 1), "probes_found_top5": f"{found}/{len(probes)}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=3000)
    parser.add_argument("--cold", type=float, default=0.8, help="share of cards COLD (a year of little recall)")
    args = parser.parse_args()
    source = build_store(args.cards, quiet=True)
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for variant in ("keep-all (issue 31)", "drop-cold (before)"):
            data = Path(tmp) / variant.split()[0]
            shutil.copytree(source, data)
            memory = Alaya(data)
            ids = sorted(memory.index.card_ids())
            cold = ids[: int(len(ids) * args.cold)]
            with memory.reading("bench") as graph:
                cards = graph.get_cards(cold[:: max(1, len(cold) // 3)][:3])
            probes = [(c.id, c.title) for c in cards.values()]  # synthetic text repeats: the whole title
            if variant.startswith("drop"):
                with memory.writing("bench", change_graph=False):
                    memory.index.delete_cards(cold)
            with memory.writing("bench", change_graph=False):
                memory.index.optimize(cleanup_older_than=timedelta(0))
            results[variant] = measure(data, probes)
    for variant, figures in results.items():
        print(f"{variant:22s} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
    keep, drop = results.values()
    print(f"dropping COLD rows saves {keep['lancedb_bytes'] - drop['lancedb_bytes']} bytes of lancedb/ "
          f"({1 - drop['lancedb_bytes'] / keep['lancedb_bytes']:.0%}) and costs the findability of every COLD card")


if __name__ == "__main__":
    os.environ.setdefault("ALAYA_SKIP_E2E", "1")
    main()
