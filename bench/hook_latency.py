"""Wall time of the OpenClaw hook calls at 10k cards, quiet and beside busy processes.

What OpenClaw waits for when it runs `alaya hook session-start` (and the agent tools, `alaya
hook tool memory_search`) as a fresh process, on the synthetic store of bench/synth.py (built
once, cached, copied to a temporary folder so the calls' writes do not change the cache):

- cold: no daemon and autostart off (`serve.autostart: false`): the process imports everything
  and answers itself;
- first call: no daemon, autostart on: the call starts the daemon and waits for it to answer;
- warm: the daemon answers (session-start and memory_search, p50/p95), through the `alaya`
  client (a process per call) and through the plugin's own caller in one long-lived Node
  process, as in the Gateway (hooks/openclaw-alaya/lib/socket.js: straight to the daemon's
  socket, timed inside Node; skipped without `node`).

Each is measured quiet and with `--busy N` CPU-bound processes running beside it (default 4).
`--drop-caches` drops the page cache before each cold and first call, as after a reboot (needs
root and a writable /proc/sys/vm/drop_caches; skipped silently otherwise).

    .venv-test/bin/python bench/hook_latency.py [--cards 10000] [--runs 50] [--cold-runs 5] [--busy 4] [--drop-caches]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

_EXE = Path(sys.executable).with_name("alaya")
_ARGV = [str(_EXE)] if _EXE.exists() else [sys.executable, "-m", "openclaw_alaya"]
_ENV = {k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "ALAYA_NO_SERVE", "ALAYA_NOW")}
_PLUGIN = Path(__file__).resolve().parents[1] / "hooks" / "openclaw-alaya" / "lib"
# one call per stdin line ({args, event}), its milliseconds per stdout line; a command that
# fails, so that a call the socket does not answer stops the bench instead of timing `alaya`
_PLUGIN_CALLS = f"""
import {{ createInterface }} from "node:readline";
import {{ alayaCaller }} from {json.dumps((_PLUGIN / "alaya.js").as_uri())};
import {{ resolveConfig }} from {json.dumps((_PLUGIN / "config.js").as_uri())};
const call = alayaCaller({{}}, resolveConfig({{ dataDir: process.argv[1], command: ["false"] }}));
for await (const line of createInterface({{ input: process.stdin }})) {{
  const {{ args, event }} = JSON.parse(line);
  const start = performance.now();
  await call(args, event, 10000);
  console.log(performance.now() - start);
}}
"""


def call(store: Path, hook: list[str], event: dict, drop_caches: bool = False) -> float:
    """One hook call as OpenClaw makes it; its wall time in seconds."""
    if drop_caches:
        with contextlib.suppress(OSError):
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
    start = time.perf_counter()
    proc = subprocess.run([*_ARGV, "--data-dir", str(store), "hook", *hook], input=json.dumps(event),
                          capture_output=True, text=True, env=_ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or not proc.stdout.startswith("{"):
        raise SystemExit(f"hook {' '.join(hook)} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return elapsed


def plugin_calls(store: Path, calls: list[tuple[list[str], dict]]) -> list[float]:
    """The plugin's calls (hook args, event) from one Node process; each one's time in seconds."""
    lines = "".join(json.dumps({"args": ["hook", *hook], "event": event}) + "\n" for hook, event in calls)
    proc = subprocess.run(["node", "--input-type=module", "-e", _PLUGIN_CALLS, str(store)], input=lines,
                          capture_output=True, text=True, env=_ENV)
    if proc.returncode != 0:
        raise SystemExit(f"plugin calls failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return [float(ms) / 1000 for ms in proc.stdout.split()]


def serve(store: Path, action: str) -> None:
    subprocess.run([*_ARGV, "--data-dir", str(store), "serve", action], capture_output=True, env=_ENV, check=True)


def set_autostart(store: Path, on: bool) -> None:
    config = json.loads((store / "config.json").read_text())
    config.setdefault("serve", {})["autostart"] = on
    (store / "config.json").write_text(json.dumps(config))


@contextlib.contextmanager
def busy(n: int) -> Iterator[None]:
    """n CPU-bound processes beside the calls."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0 if n else 0)  # let them take the CPUs
        yield
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()


def measure(store: Path, events: list[dict], runs: int, cold_runs: int, drop: bool) -> list[tuple[str, list[float]]]:
    start, search = ["session-start"], ["tool", "memory_search"]
    rows = []
    serve(store, "stop")
    set_autostart(store, False)
    rows.append(("session-start cold (no daemon, autostart off)",
                 [call(store, start, events[i % len(events)], drop) for i in range(cold_runs)]))
    set_autostart(store, True)
    firsts = []
    for i in range(max(1, cold_runs // 2)):
        serve(store, "stop")
        firsts.append(call(store, start, events[i % len(events)], drop))
    rows.append(("session-start first call (starts the daemon)", firsts))
    starts = [events[i % len(events)] for i in range(runs)]
    searches = [{**event, "params": {"query": event["prompt"]}} for event in starts]
    rows.append(("session-start warm", [call(store, start, event) for event in starts]))
    rows.append(("tool memory_search warm", [call(store, search, event) for event in searches]))
    if shutil.which("node"):
        rows.append(("session-start warm, plugin → socket", plugin_calls(store, [(start, e) for e in starts])))
        rows.append(("tool memory_search warm, plugin → socket", plugin_calls(store, [(search, e) for e in searches])))
    serve(store, "stop")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=50, help="warm calls per row")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold calls per row (half as many first calls)")
    parser.add_argument("--busy", type=int, default=4, help="CPU-bound processes beside the busy rows")
    parser.add_argument("--drop-caches", action="store_true", help="drop the page cache before cold and first calls")
    args = parser.parse_args()
    cached = synth.build_store(args.cards)
    events = [{"agentId": "main", "sessionId": f"bench-{i}", "prompt": q} for i, q in enumerate(synth.queries(20, seed=5))]
    drop = args.drop_caches and os.access("/proc/sys/vm/drop_caches", os.W_OK)
    print(f"alaya hooks at {args.cards} cards, {os.cpu_count()} CPUs, load average before: "
          f"{Path('/proc/loadavg').read_text().split()[0]}, page cache dropped: {'yes' if drop else 'no'}")
    print("| beside | call | calls | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(cached, store)
        try:
            call(store, ["session-start"], {**events[0], "prompt": ""})  # untimed: caches the summary
            for beside in (0, args.busy):
                with busy(beside):
                    for label, times in measure(store, events, args.runs, args.cold_runs, drop):
                        print(f"| {'quiet' if not beside else f'{beside} busy'} | {label} | {len(times)} | "
                              f"{synth.percentile(times, 0.5) * 1000:.0f} | {synth.percentile(times, 0.95) * 1000:.0f} | "
                              f"{max(times) * 1000:.0f} |", flush=True)
        finally:
            serve(store, "stop")
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
