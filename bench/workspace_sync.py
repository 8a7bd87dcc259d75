"""Sync of an OpenClaw workspace with many daily notes (docs/workspace.md).

Builds a workspace of `--notes` daily notes (`memory/YYYY-MM-DD.md`: a heading, two paragraphs
and a Retain section of four lines, English and Chinese) plus MEMORY.md and USER.md, then times,
in process (`maintenance.workspace.sync`):

- first sync: every file read, stored in L3, distilled (heuristic), embedded (hash), applied;
- no-change sync: p50 / max of `--runs` syncs with nothing changed (a stat per file, no lock):
  the target is ≤ 200 ms, so that session start can run it;
- one edited note: a line changed in one note;
- the no-change sync as session start runs it: `alaya hook session-start` with the event's
  `workspaceDir`, minus the same call without it (process start excluded), p50.

    .venv-test/bin/python bench/workspace_sync.py [--notes 1000] [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openclaw_alaya import Alaya  # noqa: E402
from openclaw_alaya.maintenance.workspace import sync  # noqa: E402

PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "张三", "李四"]
SYSTEMS = ["billing", "gateway", "search", "auth", "payments", "reports"]


def note(day: date, i: int) -> str:
    who, what = PEOPLE[i % len(PEOPLE)], SYSTEMS[i % len(SYSTEMS)]
    if i % 3 == 0:
        return (f"# {day}\n\n今天和{who}一起排查了{what}服务的延迟问题。\n\n"
                f"发现第{i}号任务的缓存配置不对，已修复。\n\n## Retain\n"
                f"- W @{who}：{who}负责{what}服务的值班。\n"
                f"- B @{what}：我把{what}的缓存时间改成了{i % 50 + 10}分钟。\n"
                f"- O(c=0.{i % 9 + 1}) @{who}：{who}的代码评审很仔细。\n"
                f"- S：{what}的延迟在修复后下降了{i % 40 + 5}%。\n")
    return (f"# {day}\n\nWorked with {who} on the {what} service, ticket #{i}.\n\n"
            f"The {what} deploy took {i % 30 + 3} minutes; the migration step was the slow part.\n\n## Retain\n"
            f"- W @{who} @{what}: {who} owns the {what} on-call rotation since {day}.\n"
            f"- B @{what}: I raised the {what} pool size to {i % 64 + 8}.\n"
            f"- O(c=0.{i % 9 + 1}) @{who}: {who} writes careful reviews.\n"
            f"- S: {what} latency dropped {i % 40 + 5}% after the fix.\n")


def make_workspace(root: Path, notes: int) -> None:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n- Keep the gateway on loopback. <!-- trigger: gateway setup --> "
                                    "<!-- importance: 9 -->\n- Billing runs on Postgres 16.\n", encoding="utf-8")
    (root / "USER.md").write_text("# User\n\n- Prefers short answers.\n", encoding="utf-8")
    start = date(2023, 1, 1)
    for i in range(notes):
        day = start + timedelta(days=i)
        (root / "memory" / f"{day}.md").write_text(note(day, i), encoding="utf-8")


def hook_ms(data: Path, workspace: Path | None, runs: int) -> float:
    env = {**os.environ, "ALAYA_NO_SERVE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    event = {"agentId": "main", "sessionId": "bench", "prompt": "what did Alice do on billing?"}
    if workspace is not None:
        event["workspaceDir"] = str(workspace)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "hook", "session-start"],
                       input=json.dumps(event), capture_output=True, text=True, env=env, check=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hook-runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        make_workspace(workspace, args.notes)
        memory = Alaya(root / "data")
        memory.init()
        t = time.perf_counter()
        first = sync(memory, workspace, agent_id="main")
        first_s = time.perf_counter() - t
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            report = sync(memory, workspace, agent_id="main")
            times.append((time.perf_counter() - t) * 1000)
            assert report["stored"] == 0
        edited = workspace / "memory" / f"{date(2023, 1, 1) + timedelta(days=args.notes // 2)}.md"
        edited.write_text(edited.read_text(encoding="utf-8").replace("after the fix", "after the second fix"),
                          encoding="utf-8")
        t = time.perf_counter()
        one = sync(memory, workspace, agent_id="main")
        one_ms = (time.perf_counter() - t) * 1000
        with_ws = hook_ms(root / "data", workspace, args.hook_runs)
        without = hook_ms(root / "data", None, args.hook_runs)
        figures = {
            "notes": args.notes, "files": first["files"], "cards": first["cards"],
            "first_sync_s": round(first_s, 2), "first_sync_files_per_s": round(first["files"] / first_s, 1),
            "no_change_sync_ms_p50": round(statistics.median(times), 1), "no_change_sync_ms_max": round(max(times), 1),
            "one_edit_sync_ms": round(one_ms, 1), "one_edit_cards": one["cards"],
            "session_start_ms_p50_with_workspace": round(with_ws, 1), "session_start_ms_p50_without": round(without, 1),
            "target_no_change_ms": 200,
        }
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
