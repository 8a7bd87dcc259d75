"""Commands for plugins and maintenance: `alaya plugins`, `alaya introspect`, `alaya backup`,
`alaya cron run`, `alaya summary`, which shows the time bucket introspect keeps for a day,
week or month, and `alaya metrics`, the memory's health (maintenance/metrics.py) and its daily trend."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import common
from .common import global_options, print_json
from .render import render_metrics, render_metrics_history, render_summary


def add_commands(sub: Any, command: Any) -> None:
    command("plugins", cmd_plugins, "list the loaded plugins and the hooks they implement")
    introspect = command("introspect", cmd_introspect, "run the maintenance steps (distill pending sessions, consolidate, cool down, forget, refresh the summary, …)")
    introspect.add_argument("--steps", help="comma-separated step names to run (default: all)")
    introspect.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    introspect.add_argument("--session", help="instead: what this session put into memory (entities, relation "
                            "density, hotspots)")
    backup = command("backup", cmd_backup, "write a dated copy of the data directory, alaya-<stamp>.tar.gz "
                     "(default: in <data dir>/backups)")
    backup.add_argument("--dest", help="folder for the copies (default: backup.dest or <data dir>/backups)")
    backup.add_argument("--keep", type=int, help="copies to keep (default: backup.keep, 7)")
    backup.add_argument("--format", choices=["tar.gz", "dir"],
                        help="an archive (tar.gz) or a folder that is itself a data directory (default: backup.format, tar.gz)")
    cron = command("cron", _cron_usage, "scheduled maintenance (jobs and schedules in config.cron)", json_flag=False)
    cron_sub = cron.add_subparsers(title="cron commands", metavar="COMMAND")
    run = cron_sub.add_parser("run", parents=[global_options()], help="run the jobs that are due", description="Run the jobs that are due; keep running unless --once.")
    run.add_argument("--once", action="store_true", help="a single pass, then exit (for crontab and OpenClaw automations)")
    run.add_argument("--json", action="store_true", help="print JSON")
    run.set_defaults(handler=cmd_cron_run)
    summary = command("summary", cmd_summary, "what was talked about in a day, week or month: sessions, cards, tags, highlights")
    summary.add_argument("--period", default="week", help="day, week or month (default: week)")
    summary.add_argument("--at", help="a moment inside the period: 2026-11-24, an ISO time, 7d, last week, 上周, … "
                                      "(default: now)")
    metrics = command("metrics", cmd_metrics, "the memory's health: recall hit rate, write signal-to-noise, type "
                      "entropy, cards per origin, kind and tier, forgotten by reason (README, \"Memory health\")")
    metrics.add_argument("--history", action="store_true", help="the daily trend introspect's metrics step keeps")


def cmd_summary(args: argparse.Namespace) -> int:
    summary = common.memory(args.data_dir).summary(args.period, args.at, now=common.fixed_now())
    if args.json:
        print_json(summary)
    else:
        print(render_summary(summary))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    memory = common.memory(args.data_dir)
    if args.history:
        from ..maintenance.metrics_history import load

        memory.dirs.require()
        data, render = load(memory), render_metrics_history
    else:
        from ..maintenance.metrics import compute

        data, render = compute(memory), render_metrics
    if args.json:
        print_json(data)
    else:
        print(render(data))
    return 0


def cmd_plugins(args: argparse.Namespace) -> int:
    from ..plugins import describe

    rows = describe(common.memory(args.data_dir).hooks)
    if args.json:
        print_json(rows)
    else:
        for row in rows:
            origin = f" ({row['distribution']})" if row["distribution"] else ""
            print(f"{row['name']}{origin}: {', '.join(row['hooks']) or '(no hooks)'}")
    return 0


def cmd_introspect(args: argparse.Namespace) -> int:
    from ..maintenance.introspect import run

    if args.session:
        print_json(common.memory(args.data_dir).session_report(args.session))
        return 0
    steps = [part.strip() for part in (args.steps or "").split(",") if part.strip()] or None

    def show(step: dict[str, Any]) -> None:  # each step as it ends, not all at the end
        detail = json.dumps(step["result"], ensure_ascii=False) if step["ok"] else step["error"]
        print(f"{'ok  ' if step['ok'] else 'FAIL'} {step['step']} ({step['seconds']:.2f}s): {detail}", flush=True)

    report = run(common.memory(args.data_dir), steps=steps, dry_run=args.dry_run, on_step=None if args.json else show)
    if args.json:
        print_json(report)
    if not report["ok"]:
        print("alaya: error: some introspect steps failed", file=sys.stderr)
        return 1
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from ..maintenance.backup import backup

    memory = common.memory(args.data_dir)
    result = backup(memory, dest=args.dest, keep=args.keep, format=args.format or memory.config.backup.format)
    if args.json:
        print_json(result)
    else:
        print(f"backed up to {result['path']} ({result['bytes']} bytes); removed {len(result['removed'])} old copies")
    return 0


def _cron_usage(args: argparse.Namespace) -> int:
    print("usage: alaya cron run [--once] [--json]", file=sys.stderr)
    return 2


def cmd_cron_run(args: argparse.Namespace) -> int:
    from ..maintenance import cron

    def show(result: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(result, ensure_ascii=False), flush=True)
            return
        if result.get("busy"):
            print(result["message"], flush=True)
        for job in result["ran"]:
            status = "ok" if job["ok"] else f"FAILED: {job['error']}"
            print(f"{cron.local_now().isoformat(timespec='seconds')} {job['job']}: {status} ({job['seconds']:.1f}s)", flush=True)

    if not args.once:
        cron.run_forever(lambda: common.memory(args.data_dir), show)
        return 0
    result = cron.run_once(common.memory(args.data_dir))
    show(result)
    if not args.json and not result["ran"] and not result.get("busy"):
        print(f"nothing due; next job at {result['next']}")
    if not result["ok"]:
        print("alaya: error: some cron jobs failed (see state/cron.json)", file=sys.stderr)
        return 1
    return 0
