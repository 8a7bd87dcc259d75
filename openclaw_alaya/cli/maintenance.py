"""Commands for the whole store: `alaya verify`, `alaya rebuild`, `alaya reembed`,
`alaya export`, `alaya import-memex`, `alaya workspace sync`, `alaya reflect`. `alaya introspect` lives in ops.py; its maintenance steps
are in maintenance/steps.py."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..text import counted
from . import common
from .common import print_json


def add_commands(sub: Any, command: Any) -> None:
    command("reembed", cmd_reembed, "rebuild the vector index (L1) with the configured embedder")
    command("verify", cmd_verify, "check that L1 and L2 agree with L3 (exit 1 and a list of problems if not)")
    command("rebuild", cmd_rebuild, "re-derive the graph (L2) and the index (L1) from the raw sessions (L3)")
    export = command("export", cmd_export, "write cards as Markdown by type, the graph as GraphML, and index.md")
    export.add_argument("--dest", help="folder to write to (default: <data dir>/export)")
    memex = command("import-memex", cmd_import_memex, "import a folder of Markdown notes; [[wikilinks]] become RELATES_TO links")
    memex.add_argument("dir", help="folder of .md notes (searched recursively)")
    memex.add_argument("--agent", default="shared", help="scope of the imported cards (default: shared)")
    ws = command("workspace", _workspace_usage, "an OpenClaw agent workspace's Markdown memory (docs/workspace.md)",
                 json_flag=False)
    ws_sub = ws.add_subparsers(title="actions", metavar="ACTION")
    sync = ws_sub.add_parser("sync", parents=[common.global_options()],
                             help="sync MEMORY.md, USER.md, memory/*.md and bank/**/*.md into cards (incremental)",
                             description="Sync the workspace's Markdown memory into cards; unchanged files cost a stat.")
    sync.add_argument("dir", nargs="?", help="the workspace folder (default: workspace.dir in config)")
    sync.add_argument("--agent", default=None, help="agent id: the cards' scope (default: the one this folder was synced with, else shared)")
    sync.add_argument("--json", action="store_true", help="print JSON for programs and agents")
    sync.set_defaults(handler=cmd_workspace_sync)
    reflect = command("reflect", cmd_reflect, "write entity and opinion pages into the workspace's bank/ and weigh"
                      " opinions' confidence against the notes (docs/workspace.md, \"Reflect\")")
    reflect.add_argument("dir", nargs="?", help="the workspace folder (default: every workspace synced before, and workspace.dir)")
    reflect.add_argument("--agent", default=None, help="agent id: the cards' scope (default: the one the folder was synced with)")
    reflect.add_argument("--since", metavar="WHEN", help="only evidence and entities from then on: 7d, 2w, a date, an ISO time")


def cmd_verify(args: argparse.Namespace) -> int:
    from ..maintenance.verify import verify

    report = verify(common.memory(args.data_dir))
    if args.json:
        print_json(report)
    elif report["ok"]:
        print(f"ok: {counted(report['cards'], 'card')}, {report['indexed']} indexed, "
              f"{counted(report['sessions'], 'session')}, {counted(report['edges'], 'edge')} agree")
    else:
        _print_problems(report)
    return 0 if report["ok"] else 1


_SHOWN_PER_KIND = 20  # lines printed per kind of problem; --json has them all


def _print_problems(report: dict[str, Any]) -> None:
    """Each problem naming its card or session, at most `_SHOWN_PER_KIND` per kind, then per
    kind how many there are and what mends them."""
    from ..maintenance.verify import REMEDIES, describe

    shown: dict[str, int] = {}
    for problem in report["problems"]:
        shown[problem["kind"]] = shown.get(problem["kind"], 0) + 1
        if shown[problem["kind"]] <= _SHOWN_PER_KIND:
            print(describe(problem))
    for kind, count in report["counts"].items():
        more = f" ({count - _SHOWN_PER_KIND} not shown: --json lists all)" if count > _SHOWN_PER_KIND else ""
        print(f"{count} {kind}{more}: {REMEDIES.get(kind, '`alaya rebuild` re-derives L2 and L1 from L3')}")


def cmd_rebuild(args: argparse.Namespace) -> int:
    from ..maintenance.rebuild import rebuild

    report = rebuild(common.memory(args.data_dir))
    if args.json:
        print_json(report)
    else:
        r = report["replayed"]
        print(f"rebuilt from {report['sessions']} sessions: {report['cards_now']} cards; replayed {r['link']} links,"
              f" {r['merge']} merges, {r.get('supersede', 0)} supersedes, {r['forget']} forgets; usage carried for {report['usage_carried']} cards")
    return 0


def cmd_reembed(args: argparse.Namespace) -> int:
    from ..maintenance.reembed import reembed

    report = reembed(common.memory(args.data_dir))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"re-embedded {report['cards']} cards and {report['relations']} relation names with "
              f"{report['embedder']} ({report['dim']} dims) in {report['seconds']}s")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..maintenance.export import export

    report = export(common.memory(args.data_dir), args.dest)
    if args.json:
        print_json(report)
    else:
        print(f"exported {counted(report['cards'], 'card')} ({counted(report['types'], 'type')}) and "
              f"{counted(report['edges'], 'edge')} to {report['dest']}")
    return 0


def cmd_import_memex(args: argparse.Namespace) -> int:
    from ..maintenance.memex import import_memex

    report = import_memex(common.memory(args.data_dir), args.dir, agent_id=args.agent)
    if args.json:
        print_json(report)
    else:
        print(f"imported {report['cards']} notes ({report['stored']} new or changed, {report['skipped']} skipped):"
              f" {report['cards']} cards, {report['links']} links, {report['unresolved_links']} unresolved wikilinks")
    return 0


def _workspace_usage(args: argparse.Namespace) -> int:
    import sys

    print("usage: alaya workspace sync [DIR] [--agent ID] [--json]", file=sys.stderr)
    return 2


def cmd_workspace_sync(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ..errors import InputError
    from ..maintenance.workspace import known_workspaces, sync

    memory = common.memory(args.data_dir)
    folder = args.dir or memory.config.workspace.dir
    if not folder:
        raise InputError("workspace sync: name the workspace folder (alaya workspace sync ~/.openclaw/workspace)"
                         " or set it: alaya config set workspace.dir ~/.openclaw/workspace")
    agent = args.agent
    if agent is None:
        real = str(Path(folder).expanduser().resolve())
        agent = next((a for f, a in known_workspaces(memory) if f == real), "shared")
    report = sync(memory, folder, agent_id=agent)
    if args.json:
        print_json(report)
    else:
        print(f"{report['workspace']}: {report['files']} files, {report['unchanged']} unchanged, {report['stored']} stored;"
              f" {report['cards']} cards new or changed, {report['moved']} moved, {report['superseded']} superseded")
        for line in report["warnings"]:
            print(f"warning: {line}", file=sys.stderr)
    for line in report["errors"]:
        print(f"alaya: {line}", file=sys.stderr)
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    import sys
    from datetime import datetime, timezone

    from ..maintenance.reflect import reflect
    from ..maintenance.workspace import sync_quietly

    memory = common.memory(args.data_dir)
    now = common.fixed_now() or datetime.now(timezone.utc)
    since = None
    if args.since:
        from ..recall.periods import period_of

        since = period_of(args.since, now, "since").start
    if args.dir:  # the cards first (a stat per unchanged file)
        from pathlib import Path

        from ..errors import InputError
        from ..maintenance.workspace import known_workspaces

        real = str(Path(args.dir).expanduser().resolve())
        if not Path(real).is_dir():
            raise InputError(f"reflect: {args.dir}: not a folder (the OpenClaw agent workspace)")
        sync_quietly(memory, real, args.agent or next((a for f, a in known_workspaces(memory) if f == real), "shared"))
    report = reflect(memory, args.dir, agent_id=args.agent, now=now, since=since)
    if args.json:
        print_json(report)
        return 0
    if not report["workspaces"]:
        print(f"reflect: {report['note']}")
        return 0
    for r in report["reports"]:
        print(f"{r['workspace']}: {r['entities']} entities, {r['opinions']} opinions ({len(r['updated'])} re-weighed);"
              f" {len(r['written'])} pages written, {r['unchanged']} unchanged, {len(r['kept'])} kept")
        for u in r["updated"]:
            print(f"  {u['card']}: confidence {u['from']} → {u['c']} (+{len(u['supporting'])} supporting,"
                  f" {len(u['contradicting'])} contradicting)")
        for kept in r["kept"]:
            print(f"alaya: reflect: {kept['page']}: {kept['why']}", file=sys.stderr)
    return 0
