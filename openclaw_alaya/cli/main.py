"""The `alaya` parser and the core commands (init, ingest, distill, recall, trace, link,
schema, status); the other command groups add theirs (`add_commands` in hook.py, ops.py,
maintenance.py, serve.py). Exit codes (docs/architecture.md, "Commands"): 0 success, 1 user
error with a one-line message and no traceback, 2 usage error. Heavy libraries load only in
the commands that use them.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import UNWRITABLE, AlayaError, InputError
from ..text import counted
from . import cards, common, configure, curate, hook, maintenance, openclaw, ops, serve
from .common import print_json
from .generated import recall_options
from .render import render_recall, render_schema, render_status, render_trace

if TYPE_CHECKING:
    from ..engine import Alaya

Handler = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    name = _command_named(sys.argv[1:] if argv is None else argv)
    parser = _parser(name)
    commands = parser._alaya_commands  # type: ignore[attr-defined]
    if name is not None and name not in commands:
        return _unknown_command(name, commands)
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage, not the top level's (argparse reports extras from the top)
        (commands.get(name) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    os.umask(0o077)  # memories are private: every file the stores create is owner-only
    log = _log_start(args, name)
    started = time.monotonic()
    code = _run(args)
    log.info("%s: exit %d after %.2f s", name or "alaya", code, time.monotonic() - started)
    return code


def _log_start(args: argparse.Namespace, name: str | None) -> logging.Logger:
    """The package's logger as `log.file` / `log.level` or ALAYA_LOG_* set it (cli/logsetup.py,
    issue 35), and the command's first line in it."""
    from ..store.datadir import resolve_data_dir
    from .logsetup import configure

    log = configure(resolve_data_dir(getattr(args, "data_dir", None)))
    log.info("%s: started (alaya %s, pid %d)", name or "alaya", __version__, os.getpid())
    return log


def _run(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except AlayaError as exc:
        _fail(str(exc))
        return exc.exit_code
    except BrokenPipeError:
        return common.stdout_closed()
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the user gets one line, not a traceback
        if os.environ.get("ALAYA_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.errno in UNWRITABLE:  # a full or read-only disk
            from ..store.datadir import resolve_data_dir

            _fail(f"{exc.filename or resolve_data_dir(args.data_dir)}: {exc.strerror}; nothing more was written (what was "
                  "written before stays consistent: the next command finishes or undoes it)")
        else:
            _fail(f"internal error: {type(exc).__name__}: {_one_line(str(exc))} (set ALAYA_DEBUG=1 for details)")
        return 1


def _unknown_command(name: str, commands: dict[str, Any]) -> int:
    """A mistyped command: the nearest names, not all of them (as git and uv answer)."""
    import difflib

    near = difflib.get_close_matches(name, list(commands), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    _fail(f"unknown command {name!r}{hint} (`alaya --help` lists the commands)")
    return 2


def _fail(message: str) -> None:
    print(f"alaya: error: {_one_line(message)}", file=sys.stderr)
    log = logging.getLogger("openclaw_alaya")
    if log.handlers:  # said in the log too when one is set (issue 35); never twice on stderr
        log.error("%s", _one_line(message))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


def _read_stdin() -> bytes:
    return common.read_stdin("<stdin>: input is larger than 50 MB")


def _csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


# --- commands -------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    root = common.memory(args.data_dir).init()
    print(f"initialised {root}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    if bool(args.file) == bool(args.stdin):
        raise InputError("give a FILE or --stdin (one of them)")
    if len(args.file) > 1 or (args.file and os.path.isdir(args.file[0])):
        return _ingest_many(args)
    args.file = args.file[0] if args.file else None
    memory = common.memory(args.data_dir)
    source = _read_stdin() if args.stdin else args.file
    result = memory.ingest(source, agent_id=args.agent, session_id=args.session_id, include_tools=args.include_tools,
                           origin=args.origin)
    report: dict[str, Any] = result.model_dump()
    if args.distill:
        report["distilled"] = memory.distill(result.session_id).model_dump()
    return _print_ingested(args, report, f"{result.session_id}: {counted(result.new_turns, 'new turn')} "
                                         f"({result.total_turns} in all) → {result.path}")


def _ingest_many(args: argparse.Namespace) -> int:
    """Several files or a directory: many sessions per lock hold (ingest/batch.py)."""
    from ..ingest.batch import session_files

    if args.session_id:
        raise InputError("--session-id needs a single session file")
    memory = common.memory(args.data_dir)
    skipped: list[dict[str, str]] = []

    def skip(source: Any, error: InputError) -> None:  # one bad file must not keep the others out
        skipped.append({"file": str(source), "error": str(error)})
        print(f"alaya: warning: skipped {error}", file=sys.stderr)

    results = memory.ingest_many(session_files(args.file), agent_id=args.agent, include_tools=args.include_tools,
                                 origin=args.origin,
                                 on_bad=skip)
    report: dict[str, Any] = {"sessions": [r.model_dump() for r in results], "skipped": skipped}
    if args.distill:
        report["distilled"] = memory.distill().model_dump()
    fresh = sum(1 for r in results if r.new_turns)
    headline = (f"ingested {counted(len(results), 'session')} ({fresh} new or grown): "
                f"{counted(sum(r.new_turns for r in results), 'new turn')}")
    _print_ingested(args, report, headline + (f"; skipped {len(skipped)} files (see above)" if skipped else ""))
    return 1 if skipped else 0


def _print_ingested(args: argparse.Namespace, report: dict[str, Any], headline: str) -> int:
    if args.json:
        print_json(report)
    else:
        print(headline)
        if args.distill:
            d = report["distilled"]
            print(f"distilled {counted(d['cards'], 'card')}, {counted(d['links'], 'link')}")
    return 0


def cmd_distill(args: argparse.Namespace) -> int:
    report = common.memory(args.data_dir).distill(args.session)
    if args.json:
        print_json(report.model_dump())
    else:
        print(f"distilled {counted(report.sessions, 'session')}: {counted(report.cards, 'card')}, "
              f"{counted(report.links, 'link')}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    options = recall_options()
    request: dict[str, Any] = {o["name"]: _option_value(o, getattr(args, o["name"])) for o in options}
    if not any(request[o["name"]] for o in options if o["target"]):
        if sys.stdin.isatty():
            raise InputError("give a query, --concepts, --from-nodes, or a JSON request on stdin")
        request.update({k: v for k, v in _stdin_request().items() if v is not None})
    memory = common.memory(args.data_dir)
    result = memory.recall(**request, now=common.fixed_now())
    _warn_unknown_relations(memory, request["relations"])
    common.print_memory(result.model_dump() if args.json else render_recall(result), as_json=args.json)
    if not args.json and not result.nodes and (hint := _empty_store_hint(memory)):
        print(hint)
    return 0


def _option_value(option: dict[str, Any], value: Any) -> Any:
    """A recall option as parsed: a list option's comma-separated values (of each time it was
    given), None when there are none."""
    if option["kind"] != "list":
        return value
    given = value if option["repeat"] else [value]
    return [part for one in given or [] for part in _csv(one)] or None


def _warn_unknown_relations(memory: "Alaya", relations: list[str]) -> None:
    """A relation no link has cannot be followed: say so rather than answer as if it could."""
    if not relations:
        return
    from ..models import normalise_relation
    from ..recall.synonyms import following

    with memory.reading("recall (relations in use)") as graph:
        used = graph.relation_counts()  # card-card links only: what --rel can follow
    for name in dict.fromkeys(normalise_relation(r) for r in relations):
        if not any(used.get(other) for other in following([name], memory.config.recall.relation_aliases)):  # nor a synonym (issue 35)
            print(f"alaya: warning: no link has the relation {name} (in use: {', '.join(sorted(used)) or 'none'})",
                  file=sys.stderr)


def _empty_store_hint(memory: "Alaya") -> str | None:
    """What to do when nothing matched because nothing is there to match."""
    with memory.reading("recall (is anything stored?)") as graph:
        counts = graph.counts()
    if counts["cards"]:
        return None
    if counts["sessions"]:
        return f"nothing distilled yet: `alaya distill` turns the {counts['sessions']} stored sessions into cards"
    return "the memory is empty: `alaya ingest FILE --distill` stores a session first"


def _stdin_request() -> dict[str, Any]:
    """The seed's JSON mode: an object whose keys are recall's options (recall/request.py), a
    list option given as a list of strings or one comma-separated string."""
    raw = _read_stdin()
    if not raw.strip():  # `alaya recall ""` from a script or agent: stdin is no terminal, and empty
        raise InputError("give a query, --concepts, --from-nodes, or a JSON request on stdin (stdin was empty)")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"<stdin>: recall request is not valid JSON ({_one_line(str(exc))})") from None
    if not isinstance(data, dict):
        raise InputError("<stdin>: recall request must be a JSON object")
    known = [o["name"] for o in recall_options()]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InputError(f"<stdin>: unknown key {unknown[0]!r} in recall request (known: {', '.join(sorted(known))})")
    for option in recall_options():
        key, kind = option["name"], option["kind"]
        if key not in data:
            continue
        if kind == "list" and isinstance(data[key], str):
            data[key] = _csv(data[key])
        if kind == "list" and not (isinstance(data[key], list) and all(isinstance(v, str) for v in data[key])):
            raise InputError(f"<stdin>: {key} must be a list of strings")
        if kind == "int" and data[key] is not None and (
                not isinstance(data[key], int) or isinstance(data[key], bool) or data[key] < 0):
            raise InputError(f"<stdin>: {key} must be a non-negative integer")
        if kind == "str" and data[key] is not None and not isinstance(data[key], str):
            raise InputError(f"<stdin>: {key} must be a string")
    return data


def cmd_trace(args: argparse.Namespace) -> int:
    result = common.memory(args.data_dir).trace(args.card_id)
    common.print_memory(result.model_dump() if args.json else render_trace(result), as_json=args.json)
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    result = common.memory(args.data_dir).link(args.src, args.dst, args.rel, weight=args.weight, reason=args.reason)
    if args.json:
        print_json(result.model_dump())
    else:
        kind = "custom" if result.custom else "core"
        why = f": {result.reason}" if result.reason else ""
        print(f"linked {result.src} -[{result.rel}]-> {result.dst} ({kind} relation, {result.edges} edges stored){why}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    schema = common.memory(args.data_dir).schema()
    show_all = not (args.relations or args.node_types)
    wanted = {
        key: schema[key]
        for key, on in (("relations", args.relations or show_all), ("node_types", args.node_types or show_all))
        if on
    }
    if args.json:
        print_json(wanted)
    else:
        print(render_schema(wanted))
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab  # only this command needs it

    print(shtab.complete(_parser(), shell=args.shell))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from ..maintenance.status import status as collect

    status = collect(common.memory(args.data_dir))
    if args.json:
        print_json(status)
    else:
        print(render_status(status))
    return 0


# --- parser ---------------------------------------------------------------------------------


def _command_named(argv: Sequence[str]) -> str | None:
    """The command a command line runs, where that shows without parsing: its first word after
    any `--data-dir DIR`. None (help, `--version`, an abbreviated option): build them all."""
    words = iter(argv)
    for word in words:
        if word == "--data-dir":
            next(words, None)
        elif not word.startswith("--data-dir="):
            return None if word.startswith("-") else word
    return None


class _Unbuilt:
    """Stands in for the parser of a command this process does not run. Building every
    command's parser costs about 20 ms of a cold call; only help, completion and a mistyped
    command need them all."""

    def __getattr__(self, name: str) -> Callable[..., _Unbuilt]:
        return lambda *args, **kwargs: self


@functools.cache  # built once per process and command: the daemon (daemon.py) parses every request with it
def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with `only` of that one command (all of them again when
    no command has that name, so that argparse lists the choices)."""
    parser = argparse.ArgumentParser(prog="alaya", description="Long-term memory for OpenClaw agents.")
    parser.add_argument("--version", action="version", version=f"alaya {__version__}")
    parser.add_argument("--data-dir", help=common.DATA_DIR_HELP)
    parser.set_defaults(handler=lambda _args: (parser.print_help(), 2)[1])
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, handler: Handler, help_text: str, *, json_flag: bool = True) -> Any:
        if only is not None and name != only:
            return _Unbuilt()
        cmd = sub.add_parser(name, help=help_text, description=help_text, parents=[common.global_options()])
        cmd.set_defaults(handler=handler)
        if json_flag:
            cmd.add_argument("--json", action="store_true", help="print JSON for programs and agents")
        return cmd

    command("init", cmd_init, "create the data directory, config and stores", json_flag=False)

    ingest = command("ingest", cmd_ingest, "store a session (OpenClaw JSONL, session JSON or a message list)")
    ingest.add_argument("file", nargs="*", help="session file(s), or a directory of them (*.json, *.jsonl)")
    ingest.add_argument("--stdin", action="store_true", help="read the session from standard input")
    ingest.add_argument("--agent", help="agent id the session belongs to (its cards' scope)")
    ingest.add_argument("--session-id", help="session id to use when the input has none")
    ingest.add_argument("--include-tools", action="store_true", help="keep tool calls and results as turns")
    ingest.add_argument("--origin", choices=("owner", "agent", "system", "untrusted"),
                        help="where the file's content came from (default: user turns owner, assistant turns agent)")
    ingest.add_argument("--distill", action="store_true", help="distill the session right away")

    distill = command("distill", cmd_distill, "turn undistilled turns into cards and links")
    distill.add_argument("--session", help="only this session")

    recall = command("recall", cmd_recall, "find cards by query, concepts and relations")
    for option in recall_options():
        if option["flag"] is None:
            recall.add_argument(option["name"], nargs="?", help=option["help"])
        else:
            recall.add_argument(option["flag"], dest=option["name"], help=option["help"],
                                metavar=option["flag"].lstrip("-").upper().replace("-", "_"),
                                type=int if option["kind"] == "int" else None,
                                action="append" if option["repeat"] else None)

    trace = command("trace", cmd_trace, "show the source turns a card was distilled from")
    trace.add_argument("card_id")

    link = command("link", cmd_link, "record a relation between two cards")
    link.add_argument("src")
    link.add_argument("dst")
    link.add_argument("--rel", default="RELATES_TO",
                      help="relation name (default RELATES_TO); unknown names become custom relations")
    link.add_argument("--weight", type=float, default=1.0)
    link.add_argument("--reason", help="why the two are related; kept on the edge and shown by recall")

    schema = command("schema", cmd_schema, "list relation types and card types")
    schema.add_argument("--relations", action="store_true")
    schema.add_argument("--node-types", action="store_true")

    command("status", cmd_status, "counts of sessions, cards and links")
    completion = command("completion", cmd_completion, "print a shell completion script", json_flag=False)
    completion.add_argument("shell", choices=["bash", "zsh", "tcsh"],
                            help="e.g. `alaya completion bash > ~/.local/share/bash-completion/completions/alaya`")
    # hook session-start|end; plugins, introspect, backup, cron; reembed, verify, rebuild, export,
    # import-memex; serve start|run|stop|status; config get|set; remember, correct, commit, forget,
    # restore, purge, entities, mcp; get, list
    for group in (hook, ops, maintenance, serve, configure, curate, cards, openclaw):  # openclaw: install|doctor (issue 33)
        group.add_commands(sub, command)
    parser._alaya_commands = sub.choices  # type: ignore[attr-defined]  # name → that command's parser
    return parser if only is None or only in sub.choices else _parser()


if __name__ == "__main__":
    sys.exit(main())
