"""`alaya mcp token show | add NAME | list | revoke NAME`: the bearer tokens of `alaya mcp
--http` (store/tokens.py). They live in the data directory; a running server sees a change at
its next request."""

from __future__ import annotations

import argparse
from typing import Any

from . import common
from .common import print_json


def add_token_commands(mcp: argparse.ArgumentParser) -> None:
    """`token …` under the `mcp` command's parser."""
    token = mcp.add_subparsers(title="actions", metavar="ACTION").add_parser(
        "token", help="the bearer tokens of --http: show, add NAME, list, revoke NAME")
    actions = token.add_subparsers(title="actions", metavar="ACTION", required=True)
    for name, handler, help_text in (
            ("show", cmd_show, "print the owner's token (made on first use); its calls act as you"),
            ("add", cmd_add, "make a token for agent NAME and print it once: its calls act as that agent, and what "
                             "it stores is untrusted (found by search, never injected on its own)"),
            ("list", cmd_list, "the agent tokens (names and when they were made)"),
            ("revoke", cmd_revoke, "end agent NAME's token")):
        action = actions.add_parser(name, help=help_text, description=help_text, parents=[common.global_options()])
        action.set_defaults(handler=handler)
        if name in ("add", "revoke"):
            action.add_argument("name", help="the agent's id (its scope)")
        if name == "list":
            action.add_argument("--json", action="store_true", help="print JSON for programs and agents")


def _book(args: argparse.Namespace) -> Any:
    from ..store.datadir import DataDir, resolve_data_dir
    from ..store.tokens import TokenBook

    dirs = DataDir(resolve_data_dir(args.data_dir))
    dirs.require(graph=False)
    return TokenBook(dirs.root)


def cmd_show(args: argparse.Namespace) -> int:
    print(_book(args).owner_token())
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    print(_book(args).add(args.name))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    tokens = _book(args).listing()
    if args.json:
        print_json(tokens)
    else:
        for entry in tokens:
            print(f"{entry['name']}  (made {entry['created']})")
        print(f"{len(tokens)} agent tokens; the owner's: `alaya mcp token show`")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    _book(args).revoke(args.name)
    print(f"revoked the token of {args.name}")
    return 0
