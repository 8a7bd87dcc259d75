"""Commands for memory kept on purpose: `alaya remember`, `correct`, `commit`, `forget`,
`restore` (what introspect forgot, issue 31), `purge`, `entities` (curate/ in the engine), and
`alaya mcp`, the same operations as tools for MCP clients."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError, InputError
from ..text import counted
from . import common, tokens
from .common import print_json


def add_commands(sub: Any, command: Any) -> None:
    remember = command("remember", cmd_remember, "store a fact or note as a card now")
    remember.add_argument("text", nargs="?", help="what to remember (or --stdin)")
    remember.add_argument("--stdin", action="store_true", help="read the text from standard input")
    remember.add_argument("--type", help="card type (decision, preference, fact, …; default: guessed)")
    remember.add_argument("--tags", help="comma-separated tags")
    remember.add_argument("--subjects", help="comma-separated entities it is about")
    remember.add_argument("--importance", type=float, help="0-1 (default 0.7)")
    remember.add_argument("--agent", help="agent id (its scope; default shared)")

    correct = command("correct", cmd_correct, "store what is true now and mark a card as no longer valid")
    correct.add_argument("card_id")
    correct.add_argument("text")
    correct.add_argument("--reason")

    commit = command("commit", cmd_commit, 'store triplets read as JSON on stdin: {"triplets": [{"subject", '
                     '"relation", "object", "confidence"}], "entity_types": {...}, "temporal_tag": "..."}')
    commit.add_argument("--agent", help="agent id (its scope; default shared)")

    forget = command("forget", cmd_forget, "forget cards, a session (never captured again) or what a query finds")
    forget.add_argument("cards", nargs="*", help="card ids")
    forget.add_argument("--session", help="forget this session and refuse it from now on")
    forget.add_argument("--query", help="forget the cards recall ranks first for this query (try --dry-run first)")
    forget.add_argument("--limit", type=int, default=5, help="with --query: at most this many cards (default 5)")
    _forget_options(forget)

    restore = command("restore", cmd_restore, "bring back cards introspect forgot, until their saved copies are "
                      "purged (introspect.forget_purge_after_days)")
    restore.add_argument("cards", nargs="*", help="card ids")
    restore.add_argument("--list", action="store_true", help="list the cards that can be restored, with reason and date")
    purge = command("purge", cmd_purge, "forget the cards meeting every given criterion")
    purge.add_argument("--subject-contains", help="an entity or the title contains this (ignoring case)")
    purge.add_argument("--relation", help="cards with a link (or a triplet) of this relation")
    purge.add_argument("--before", help="cards dated before this date")
    _forget_options(purge)

    entities = command("entities", cmd_entities, "list, show, merge, alias, rename or type entities")
    entities.add_argument("action", nargs="?", default="list", choices=["list", "show", "merge", "alias", "rename", "type"])
    entities.add_argument("name", nargs="?", help="the entity (name or alias)")
    entities.add_argument("value", nargs="?", help="merge: the entity to fold in; alias/rename: the name; type: the type")
    entities.add_argument("--type", dest="kind", help="list: only entities of this type")
    entities.add_argument("--limit", type=int, default=50)
    entities.add_argument("--offset", type=int, default=0)

    mcp = command("mcp", cmd_mcp, "serve the memory tools to MCP clients (stdio; --http for streamable HTTP)",
                  json_flag=False)
    mcp.add_argument("--http", metavar="HOST:PORT", help="streamable HTTP on this address (e.g. 127.0.0.1:8765)")
    mcp.add_argument("--agent", help="agent id the tools store and search as (default shared)")
    tokens.add_token_commands(mcp)


def _forget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="list what would be forgotten, change nothing")
    parser.add_argument("--purge-raw", action="store_true", help="also remove the text from the raw session files")
    parser.add_argument("--reason", help="kept in the tombstone")


def _csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def cmd_remember(args: argparse.Namespace) -> int:
    if bool(args.text) == bool(args.stdin):
        raise InputError("give the TEXT or --stdin (one of them)")
    text = common.read_stdin("<stdin>: note is larger than 50 MB").decode("utf-8", "replace") if args.stdin else args.text
    options = {"type": args.type, "tags": _csv(args.tags), "subjects": _csv(args.subjects), "agent": args.agent}
    if args.importance is not None:
        options["importance"] = args.importance
    result = common.memory(args.data_dir).remember(text, **options)
    if args.json:
        print_json(result.model_dump())
    else:
        kept = "merged into the card that said it already" if result.merged else "stored"
        print(f"{kept}: {result.card_id} {result.title}")
        for card in result.superseded:
            print(f"  supersedes {card}")
    return 0


def cmd_correct(args: argparse.Namespace) -> int:
    result = common.memory(args.data_dir).correct(args.card_id, args.text, reason=args.reason)
    if args.json:
        print_json(result.model_dump())
    else:
        print(f"stored {result.card_id} {result.title}; no longer valid: {', '.join(result.superseded) or 'nothing'}")
    return 0


def cmd_commit(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        raise InputError('commit reads JSON on stdin: {"triplets": [{"subject": …, "relation": …, "object": …}]}')
    raw = common.read_stdin("<stdin>: commit request is larger than 50 MB")
    try:
        request = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"<stdin>: commit request is not valid JSON ({' '.join(str(exc).split())[:200]})") from None
    if not isinstance(request, dict) or "triplets" not in request:
        raise InputError('<stdin>: commit request must be a JSON object with "triplets"')
    unknown = sorted(set(request) - {"triplets", "entity_types", "temporal_tag", "agent"})
    if unknown:
        raise InputError(f"<stdin>: unknown key {unknown[0]!r} in commit request")
    request.setdefault("agent", args.agent)
    result = common.memory(args.data_dir).commit(**request)
    if args.json:
        print_json(result.model_dump())
    else:
        print(f"committed {len(result.cards)} facts ({len(result.unchanged)} already stored), "
              f"superseded {len(result.superseded)}, {result.links} links")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    memory = common.memory(args.data_dir)
    options = {"reason": args.reason, "purge_raw": args.purge_raw, "dry_run": args.dry_run}
    if args.query is not None:
        options["limit"] = args.limit
    result = memory.forget(args.cards or None, session=args.session, query=args.query, **options)
    return _print_forgotten(args, result)


def cmd_restore(args: argparse.Namespace) -> int:
    memory = common.memory(args.data_dir)
    if args.list == bool(args.cards):
        raise InputError("restore: give card ids, or --list (one of them)")
    if args.list:
        rows = memory.forgotten()
        if args.json:
            print_json({"cards": rows})
            return 0
        print(f"{len(rows)} forgotten cards can be restored" if rows else "no forgotten cards to restore")
        for row in rows:
            print(f"  {row['card']}  {row['reason']}  forgotten {str(row['forgotten_at'])[:10]}, restorable until "
                  f"{str(row['restorable_until'])[:10]}  {row['title']}")
        return 0
    result = memory.restore(args.cards)
    if args.json:
        print_json(result.model_dump())
        return 0
    print(f"restored {len(result.cards)} cards ({result.links} links)")
    for card in result.cards:
        print(f"  {card['id']}  {card['title']}")
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    criteria = {"subject_contains": args.subject_contains, "relation_type": args.relation, "time_before": args.before}
    result = common.memory(args.data_dir).forget(
        criteria={k: v for k, v in criteria.items() if v is not None},
        reason=args.reason, purge_raw=args.purge_raw, dry_run=args.dry_run)
    return _print_forgotten(args, result)


def _print_forgotten(args: argparse.Namespace, result: Any) -> int:
    if args.json:
        print_json(result.model_dump())
        return 0
    verb = "would forget" if result.dry_run else "forgot"
    sessions = f" and session {', '.join(result.sessions)}" if result.sessions else ""
    print(f"{verb} {counted(len(result.cards), 'card')}{sessions}")
    for card in result.cards:
        print(f"  {card['id']}  {card['title']}")
    if result.purged_turns:
        print(f"removed the text of {result.purged_turns} turns from the raw session files")
    return 0


def cmd_entities(args: argparse.Namespace) -> int:
    memory = common.memory(args.data_dir)
    if args.action == "list":
        result = memory.entities("list", kind=args.kind, limit=args.limit, offset=args.offset)
    else:
        result = memory.entities(args.action, args.name, args.value)
    if args.json:
        print_json(result)
    elif args.action == "list":
        for e in result["entities"]:
            extra = f" [{e['type']}]" if e["type"] else ""
            aliases = f" (also: {', '.join(e['aliases'])})" if e["aliases"] else ""
            print(f"{e['mentions']:6d}  {e['name']}{extra}{aliases}")
        print(f"{len(result['entities'])} of {result['total']} entities")
    else:
        aliases = f" (also: {', '.join(result['aliases'])})" if result["aliases"] else ""
        print(f"{result['name']}{' [' + result['type'] + ']' if result['type'] else ''}{aliases}: {counted(result['mentions'], 'card')}")
        for link in result.get("relations", []):  # IS_A, PART_OF… between entities (issue 35)
            print(f"  {link['src']} {link['rel']} {link['dst']}")
        for card in result.get("cards", []):
            print(f"  {card['id']}  {card['title']}{'  (superseded)' if card['superseded'] else ''}")
    return 0


# `alaya mcp`'s SDK is an extra (issue 35): with its web stack (starlette, uvicorn, jsonschema,
# pyjwt with cryptography) it is 20 distributions and 29 MB that the plugin and the CLI never use.
MCP_INSTALL_HINT = "pip install 'openclaw-alaya[mcp]'"


def cmd_mcp(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise ConfigError(f"`alaya mcp` needs the MCP SDK, which is not installed: {MCP_INSTALL_HINT}")
    from ..tools.mcp_server import serve

    serve(common.memory(args.data_dir), http=args.http, agent=args.agent)
    return 0
