"""`alaya config get [KEY]`, `set KEY VALUE`, `unset KEY`, `list [--all]` and `path`: read and
change config.json by dotted key (`recall.rrf_k`, `hook.budget_tokens`), validated as the file
itself is, so a typo or a bad value is refused with the key named and the file is left as it
was (as `git config` and `uv`'s settings behave: unset returns a key to its default, list shows
what was chosen)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import common
from .common import global_options


def add_commands(sub: Any, command: Any) -> None:
    config = command("config", _usage, "read or change config.json by dotted key", json_flag=False)
    actions = config.add_subparsers(title="actions", metavar="ACTION")
    get = actions.add_parser("get", parents=[global_options()], help="print a setting, a section, or everything (as JSON)")
    get.add_argument("key", nargs="?", help="dotted key, e.g. recall.rrf_k (default: everything)")
    get.set_defaults(handler=cmd_get)
    set_ = actions.add_parser("set", parents=[global_options()], help="change one setting (VALUE read as JSON when it parses, else as text)")
    set_.add_argument("key", help="dotted key, e.g. hook.budget_tokens")
    set_.add_argument("value")
    set_.set_defaults(handler=cmd_set)
    unset = actions.add_parser("unset", parents=[global_options()], help="return a setting or a section to its default")
    unset.add_argument("key", help="dotted key, e.g. hook.budget_tokens")
    unset.set_defaults(handler=cmd_unset)
    list_ = actions.add_parser("list", parents=[global_options()],
                               help="the settings config.json chooses, one `key = value` a line (--all: every setting)")
    list_.add_argument("--all", action="store_true", help="every setting, defaults included")
    list_.set_defaults(handler=cmd_list)
    path = actions.add_parser("path", parents=[global_options()], help="print where config.json is")
    path.set_defaults(handler=cmd_path)


def _usage(args: argparse.Namespace) -> int:
    print("usage: alaya config {get,set,unset,list,path} ...", file=sys.stderr)
    return 2


def _paths(args: argparse.Namespace):
    from ..store.datadir import DataDir, resolve_data_dir

    dirs = DataDir(resolve_data_dir(args.data_dir))
    dirs.require()
    return dirs.config


def cmd_get(args: argparse.Namespace) -> int:
    from ..config import Config

    config = Config.load(_paths(args))
    value = config.get(args.key) if args.key else config.model_dump(mode="json")
    print(json.dumps(value, ensure_ascii=False, indent=2) if isinstance(value, (dict, list)) else json.dumps(value))
    return 0


# Keys that name something a plugin registers, and the hook it registers them through: a name
# no loaded plugin registers is refused when set, not when the next command fails to open.
_REGISTERED = {"storage.backend": "register_stores", "embedding.provider": "register_embedders",
               "distill.llm_provider": "register_distillers"}


def cmd_set(args: argparse.Namespace) -> int:
    from ..config import Config

    path = _paths(args)
    config = Config.load(path).with_value(args.key, args.value)
    if args.key in _REGISTERED:
        _check_registered(args.key, config.get(args.key), common.memory(args.data_dir).hooks)
    config.save(path)
    print(f"{args.key} = {json.dumps(config.get(args.key), ensure_ascii=False)}")
    return 0


def cmd_unset(args: argparse.Namespace) -> int:
    from ..config import Config

    path = _paths(args)
    config = Config.load(path).without(args.key)
    config.save(path)
    print(f"{args.key} = {json.dumps(config.get(args.key), ensure_ascii=False)} (the default)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ..config import Config, chosen, flat

    config = Config.load(_paths(args))
    for key, value in flat(config.model_dump(mode="json") if args.all else chosen(config)).items():
        print(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    print(_paths(args))
    return 0


def _check_registered(key: str, name: str, hooks: Any) -> None:
    from ..errors import ConfigError
    from ..plugins import registry

    known = registry(_REGISTERED[key], hooks)
    if name not in known:
        raise ConfigError(f"{key}: no plugin registers {name!r} (registered: {', '.join(sorted(known)) or 'none'});"
                          " config.json is unchanged")
