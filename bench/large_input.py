"""Time and peak RSS of capturing one huge message: a single-token hex paste of 1, 3 and 10 MB.

Two paths, each a fresh process on a fresh data directory, as OpenClaw and a user run them:
`alaya hook session-end` with the paste as one user message, and `alaya ingest` of an
OpenClaw JSONL transcript whose paste is one line. Peak RSS is the child's own
(`os.wait4`'s rusage), so the figures do not mix with this script's. A single long token was
the worst case before the n-gram and turn caps (character n-grams of the whole token).

    .venv/bin/python bench/large_input.py [--sizes 1,3,10] [--paths hook,ingest] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def paste(megabytes: float) -> str:
    """One token of hex digits, `megabytes` long: what a pasted dump or key file looks like."""
    return ("0123456789abcdef" * (int(megabytes * 1024 * 1024) // 16 + 1))[: int(megabytes * 1024 * 1024)]


def messages(megabytes: float) -> list[dict]:
    return [
        {"role": "user", "content": "We decided to keep the deploy key here: " + paste(megabytes)},
        {"role": "assistant", "content": "Noted, the deploy key is stored with the release notes."},
    ]


def hook_input(megabytes: float, work: Path) -> tuple[list[str], bytes]:
    event = {"agentId": "main", "sessionId": "big", "reason": "bench", "messages": messages(megabytes)}
    return ["hook", "session-end"], json.dumps(event).encode()


def jsonl_input(megabytes: float, work: Path) -> tuple[list[str], bytes]:
    lines = [{"type": "session", "id": "big", "timestamp": "2026-01-01T00:00:00Z"}]
    lines += [{"type": "message", "message": m} for m in messages(megabytes)]
    path = work / "big.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run(["init"], b"", work / "data", 120)
    return ["ingest", str(path), "--distill"], b""


def run(argv: list[str], stdin: bytes, data: Path, timeout: float) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one `alaya` process."""
    env = {**os.environ, "ALAYA_NO_SERVE": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(stdin)
    proc.stdin.close()
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        print(f"  ({' '.join(argv[:2])}: exit {proc.returncode}: {proc.stderr.read().decode()[-300:].strip()})")
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,3,10", help="paste sizes in MB, comma-separated")
    parser.add_argument("--paths", default="hook,ingest", help="which paths to run, comma-separated")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is killed")
    args = parser.parse_args()
    paths = {"hook": ("hook session-end", hook_input), "ingest": ("ingest jsonl", jsonl_input)}
    print(f"{'path':<18}{'size':>6}{'seconds':>10}{'peak RSS MB':>14}{'exit':>6}")
    for name, make in (paths[p] for p in args.paths.split(",")):
        for size in (float(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory(prefix="alaya-large-") as tmp:
                work = Path(tmp)
                argv, stdin = make(size, work)
                seconds, rss, code = run(argv, stdin, work / "data", args.timeout)
                print(f"{name:<18}{size:>5g}M{seconds:>10.1f}{rss:>14.0f}{code:>6}", flush=True)


if __name__ == "__main__":
    main()
