"""Redactor time on adversarial inputs: it must grow linearly with the input size.

    .venv/bin/python bench/redact.py [--sizes 0.25,0.5,1] [--shape NAME] [--cpu] [--repeat N]

Each shape is a text built to make a backtracking pattern work hard (a long run of the
characters a pattern's repetition eats, with no match at its end), at each size in MB.
Prints a Markdown table: seconds per size, and the ratio of the largest to the smallest
size's time divided by the ratio of the sizes (about 1 when linear, about the size ratio when
quadratic), and the whole bench's total. `--cpu` times the process's CPU instead of the wall
clock and `--repeat N` keeps the best of N calls per text: on a shared machine the wall clock
mostly measures the load (issue 30 compared releases by CPU time, best of 3).
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from openclaw_alaya.redact import Redactor  # noqa: E402

_rng = random.Random(12)
MB = 1_000_000


def _fill(unit: Callable[[int], str], size: int, tail: str = "") -> str:
    parts, total, i = [], 0, 0
    while total < size - len(tail):
        piece = unit(i)
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)[: size - len(tail)] + tail


def _words() -> list[str]:
    path = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "safety" / "bip39-english.txt"
    return path.read_text().split()


SHAPES: dict[str, Callable[[int], str]] = {
    "dash-separated hex + token": lambda n: _fill(lambda i: f"{i % 256:02x}-", n, "token"),
    "long base64 run": lambda n: _fill(lambda i: _rng.choice(string.ascii_letters + string.digits + "+/"), n),
    "repeated key-like prefixes": lambda n: _fill(lambda i: "db_pass.", n, "word"),
    "many password words": lambda n: _fill(lambda i: "password ", n),
    "many password= without value": lambda n: _fill(lambda i: "password= ", n),
    "begin private key, no end": lambda n: _fill(lambda i: "-----BEGIN PRIVATE KEY-----\n", n),
    "scheme:// runs": lambda n: _fill(lambda i: "a://b:c", n),
    "spaced digits": lambda n: _fill(lambda i: f"{i % 10} ", n),
    "seed-like word runs": lambda n: _fill(lambda i, w=_words(): w[i % len(w)] + (" " if i % 11 else " xylophones "), n),
    "mysql -p without end": lambda n: _fill(lambda i: "mysql -u x ", n),
    "CJK password labels": lambda n: _fill(lambda i: "密码 ", n),
}


def timed(redactor: Redactor, text: str, clock: Callable[[], float], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        redactor.redact(text)
        best = min(best, clock() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1", help="input sizes in MB, comma-separated")
    parser.add_argument("--shape", choices=sorted(SHAPES), help="only this shape")
    parser.add_argument("--cpu", action="store_true", help="process CPU time instead of the wall clock")
    parser.add_argument("--repeat", type=int, default=1, help="best of N calls per text")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    total = 0.0
    sizes = [float(s) for s in args.sizes.split(",")]
    redactor = Redactor()
    redactor.redact("warm up: password=abc123xyz")
    print("| shape | " + " | ".join(f"{s:g} MB (s)" for s in sizes) + " | growth vs linear |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for name, make in SHAPES.items():
        if args.shape and name != args.shape:
            continue
        times = [timed(redactor, make(int(s * MB)), clock, max(1, args.repeat)) for s in sizes]
        total += sum(times)
        growth = (times[-1] / max(times[0], 1e-9)) / (sizes[-1] / sizes[0])
        print(f"| {name} | " + " | ".join(f"{t:.3f}" for t in times) + f" | {growth:.2f} |", flush=True)
    print(f"\nwhole bench: {total:.2f} s ({'CPU' if args.cpu else 'wall'}, best of {max(1, args.repeat)})")


if __name__ == "__main__":
    main()
