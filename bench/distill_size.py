"""Distill time against message size, for ordinary and adversarial text (issue 30 class 9).

One message of each shape, cut to each size, parsed and distilled by the heuristic distiller in
this process (what `alaya ingest --distill` and `hook session-end` run on it), plus the other
functions that read message text (redaction, recall's date phrases, memex notes, workspace
markdown). Linear work grows about 4x from one size to the next (the sizes go up 4x);
quadratic work about 16x. A run past `--cap` seconds for one shape stops that shape.

    .venv/bin/python bench/distill_size.py [--sizes 10,40,160] [--shapes prose,a-,x.py] [--cap 60]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openclaw_alaya.distill.heuristic import HeuristicDistiller  # noqa: E402
from openclaw_alaya.ingest import markdown  # noqa: E402
from openclaw_alaya.ingest.formats import parse_session  # noqa: E402
from openclaw_alaya.maintenance import memex  # noqa: E402
from openclaw_alaya.recall import periods  # noqa: E402
from openclaw_alaya.redact import Redactor  # noqa: E402

PROSE = ("We decided to move the billing-api to Postgres 16.2 in eu-central-1 after the outage on 3 May. "
         "Priya will update ~/deploy/config.yaml and the runbook at docs/ops/failover.md. ")
SHAPES = {"prose": PROSE, "a-": "a-", "A1-": "A1-", "1.1.": "1.1.", "@@": "@@", "x.py": "x.py ",
          "[[": "[[", "<!--": "<!--", "1 May": "1 May "}


def text_of(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def distill(text: str) -> None:
    raw = json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]).encode()
    HeuristicDistiller().distill(parse_session(raw, session_id="bench", max_turn_chars=len(text) + 1))


def others(text: str) -> None:
    Redactor().redact(text)
    periods.find_phrase(text, datetime.now(timezone.utc))
    memex.parse_note(text, "note")
    markdown.parse(text)


def seconds(fn, text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,40,160", help="message sizes in thousands of characters")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of: {', '.join(SHAPES)}")
    parser.add_argument("--cap", type=float, default=60.0, help="stop a shape once one size took longer (s)")
    args = parser.parse_args()
    sizes = [int(float(s) * 1000) for s in args.sizes.split(",")]
    print(f"{'shape':8s} {'chars':>8s} {'distill s':>10s} {'other s':>8s}")
    for name in args.shapes.split(","):
        for size in sizes:
            text = text_of(SHAPES[name], size)
            took = seconds(distill, text), seconds(others, text)
            print(f"{name:8s} {size:8d} {took[0]:10.2f} {took[1]:8.2f}", flush=True)
            if max(took) > args.cap:
                break

if __name__ == "__main__":
    main()
