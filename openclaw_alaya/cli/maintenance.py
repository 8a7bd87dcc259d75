"""Commands for the whole store: `alaya verify`, `alaya rebuild`, `alaya reembed`,
`alaya export`, `alaya import-memex`. `alaya introspect` lives in ops.py; its maintenance steps
are in maintenance/steps.py."""

from __future__ import annotations

import argparse
import json
from typing import Any

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


def cmd_verify(args: argparse.Namespace) -> int:
    from ..maintenance.verify import verify

    report = verify(common.memory(args.data_dir))
    if args.json:
        print_json(report)
    elif report["ok"]:
        print(f"ok: {report['cards']} cards, {report['indexed']} indexed, {report['sessions']} sessions, {report['edges']} edges agree")
    else:
        for problem in report["problems"]:
            print(f"{problem['kind']}: {problem['detail']}")
        print(f"{len(report['problems'])} problems ({', '.join(f'{k} {n}' for k, n in report['counts'].items())});"
              " `alaya rebuild` re-derives L2 and L1 from L3")
    return 0 if report["ok"] else 1


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
        print(f"exported {report['cards']} cards ({report['types']} types) and {report['edges']} edges to {report['dest']}")
    return 0


def cmd_import_memex(args: argparse.Namespace) -> int:
    from ..maintenance.memex import import_memex

    report = import_memex(common.memory(args.data_dir), args.dir, agent_id=args.agent)
    if args.json:
        print_json(report)
    else:
        print(f"imported {report['files']} notes ({report['stored']} new or changed): {report['cards']} cards,"
              f" {report['links']} links, {report['unresolved_links']} unresolved wikilinks")
    return 0
