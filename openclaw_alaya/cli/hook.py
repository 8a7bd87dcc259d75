"""`alaya hook session-start`, `alaya hook session-end` and `alaya hook tool NAME`: the OpenClaw
bridge's commands.

All read one JSON object on stdin (the event the OpenClaw plugin in `hooks/` sends) and print
one JSON object on stdout. Missing or null fields are tolerated; stdin that is not a JSON
object is a user error (exit 1, one line), which the plugin logs before going on.

session-start: `{agentId, sessionKey, sessionId, prompt, messages, workspaceDir}` →
`{"prependContext": "…"}`, or `{}` when there is nothing to say (no memory yet, budget 0)
(bridge/inject.py). session-end: `{agentId, sessionKey, sessionId, reason, messages}` → the
`session_end` hooks (bridge/capture.py), whose reports are merged into one JSON object.
turn (issue 32): `{agentId, sessionKey, sessionId, prompt, exclude}` → `{"appendSystemContext": "…",
"cards": […]}` or `{}`: what a later user message brings back (bridge/turn.py).
tool NAME: `{agentId, sessionKey, sessionId, params}` → `{"text": "…", "details": {…}}`, the
plugin's agent tools memory_search, memory_get, memory_store and memory_forget (tools/openclaw.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import AlayaError, DamagedStoreError, InputError, LockTimeoutError
from . import common
from .common import global_options


TURN_LOCK_WAIT_SECONDS = 1.0  # the plugin's turnTimeoutMs: past it nobody waits for `hook turn`


def add_commands(sub: Any, command: Any) -> None:
    hook = command("hook", _usage, "OpenClaw hooks: JSON event on stdin, JSON on stdout", json_flag=False)
    hook_sub = hook.add_subparsers(title="hooks", metavar="HOOK")
    start = hook_sub.add_parser(
        "session-start", parents=[global_options()], help="print the memory to inject at the start of a session",
        description="Read the OpenClaw event on stdin; print {\"prependContext\": …} or {}.",
    )
    start.add_argument("--budget", type=int, help="token budget for the text (default: hook.budget_tokens)")
    start.set_defaults(handler=cmd_session_start)
    turn = hook_sub.add_parser(
        "turn", parents=[global_options()], help="print what a later user message brings back from memory (issue 32)",
        description="Read {agentId, sessionKey, sessionId, prompt, exclude} on stdin; print "
                    "{\"appendSystemContext\": …, \"cards\": […]} or {}.",
    )
    turn.add_argument("--budget", type=int, help="token budget for the block (default: hook.turn_budget_tokens)")
    turn.add_argument("--min-similarity", type=float, help="cosine floor of a card to the message (default: hook.turn_min_similarity)")
    turn.add_argument("--max-cards", type=int, help="cards at most (default: hook.turn_max_cards)")
    turn.set_defaults(handler=cmd_turn)
    end = hook_sub.add_parser(
        "session-end", parents=[global_options()], help="capture a session's new messages and distill them",
        description="Read {agentId, sessionKey, sessionId, reason, messages} on stdin; print a JSON report.",
    )
    end.set_defaults(handler=cmd_session_end)
    tool = hook_sub.add_parser(
        "tool", parents=[global_options()], help="run one of the agent tools (memory_search, memory_get, memory_store, memory_forget)",
        description="Read {agentId, sessionKey, sessionId, params} on stdin; print {\"text\": …, \"details\": {…}}.",
    )
    tool.add_argument("name", metavar="NAME", help="memory_search, memory_get, memory_store or memory_forget")
    tool.set_defaults(handler=cmd_tool)


def _usage(args: argparse.Namespace) -> int:
    print("usage: alaya hook {session-start,turn,session-end,tool NAME} < event.json", file=sys.stderr)
    return 2


def cmd_session_start(args: argparse.Namespace) -> int:
    event, repaired = read_event("hook session-start")
    from ..bridge.capture import agent_of, session_of
    from ..bridge.inject import StartRequest, build
    from ..ingest.repair import warn

    if repaired:
        warn(repaired)
    memory = common.memory(args.data_dir)  # inside `alaya serve`: the resident one
    if not memory.dirs.initialized():
        _emit({})
        return 0
    try:
        memory.dirs.require()
    except DamagedStoreError as exc:  # a lost graph, as a damaged one, must not break the session
        return _inject_nothing(exc)
    cfg = memory.config.hook
    budget = args.budget if args.budget is not None else cfg.budget_tokens
    if budget < 0:
        raise InputError("--budget must be 0 or more")
    try:  # a long write elsewhere: the turn goes on without memory, at once, not after lock.timeout_seconds
        _wait_for_readers_turn(memory, "hook session-start", cfg.lock_wait_seconds)
    except LockTimeoutError as exc:
        return _inject_nothing(exc)
    _sync_workspace(memory, event)
    prompt = event.get("prompt")
    request = StartRequest(
        agent_id=agent_of(event),
        session_id=session_of(event),
        prompt=prompt if isinstance(prompt, str) else "",
        budget=budget,
        max_cards=cfg.max_cards,
        card_chars=cfg.card_chars,
        summary_max_age_hours=cfg.summary_max_age_hours,
        short_term_days=cfg.short_term_days,
        tier_split=cfg.tier_split.model_dump(),
        core_share=memory.config.core.inject_share,
        now=common.fixed_now(),
        workspace_dir=event["workspaceDir"] if isinstance(event.get("workspaceDir"), str) else None,
    )
    try:
        text = build(memory, request)
    except (AlayaError, OSError) as exc:  # a damaged store or a full disk must not break the session
        return _inject_nothing(exc)
    _emit({"prependContext": text} if text else {})
    return 0


def _inject_nothing(exc: BaseException, what: str = "session-start") -> int:
    """A hook that injects, on a store it cannot read: one warning line, an empty answer, exit 0."""
    print(f"alaya: warning: hook {what}: {' '.join(str(exc).split())[:500]}; injected nothing", file=sys.stderr)
    _emit({})
    return 0


def cmd_turn(args: argparse.Namespace) -> int:
    """`hook turn` (issue 32): the cards a later message brings back that the session does not
    show yet (bridge/turn.py); `{}` most of the time."""
    event, repaired = read_event("hook turn")
    from ..bridge.capture import agent_of, session_of
    from ..bridge.turn import request_for, turn
    from ..ingest.repair import warn

    if repaired:
        warn(repaired)
    for name in ("budget", "max_cards"):
        if (getattr(args, name) or 0) < 0:
            raise InputError(f"--{name.replace('_', '-')} must be 0 or more")
    if args.min_similarity is not None and not -1 <= args.min_similarity <= 1:
        raise InputError("--min-similarity must be between -1 and 1")
    exclude = event.get("exclude")
    if exclude is not None and not (isinstance(exclude, list) and all(isinstance(i, str) for i in exclude)):
        raise InputError("hook turn: exclude must be a list of card ids")
    memory = common.memory(args.data_dir)
    if not memory.dirs.initialized():
        _emit({})
        return 0
    prompt = event.get("prompt")
    request = request_for(memory, prompt if isinstance(prompt, str) else "", agent_id=agent_of(event),
                          session_id=session_of(event), exclude=frozenset(exclude or []), budget=args.budget,
                          max_cards=args.max_cards, min_similarity=args.min_similarity, now=common.fixed_now())
    try:
        memory.dirs.require()
        # a write elsewhere: answer at once rather than hold the daemon (one command at a time)
        # for an answer the plugin stopped waiting for after its turnTimeoutMs
        _wait_for_readers_turn(memory, "hook turn", TURN_LOCK_WAIT_SECONDS)
        result = turn(memory, request)
    except (AlayaError, OSError) as exc:  # a damaged store, a held lock or a full disk must not break the turn
        return _inject_nothing(exc, "turn")
    _emit({"appendSystemContext": result.text, "cards": result.card_ids} if result.text else {})
    return 0


def _wait_for_readers_turn(memory: Any, operation: str, seconds: float) -> None:
    """Wait at most `seconds` for the shared lock, and let it go again: LockTimeoutError when a
    writer holds it longer. Only the lock: the graph is opened once, by the work that follows."""
    with memory.lock.read(operation, timeout=seconds):
        pass


def _sync_workspace(memory: Any, event: dict[str, Any]) -> None:
    """The event's `workspaceDir` (else `workspace.dir`) synced before the text is built, when
    `workspace.sync_on_session_start` is on: a stat per unchanged file (docs/workspace.md)."""
    cfg = memory.config.workspace
    folder = event.get("workspaceDir") if isinstance(event.get("workspaceDir"), str) else None
    folder = folder or cfg.dir
    if not (cfg.sync_on_session_start and folder):
        return
    from ..bridge.capture import agent_of
    from ..maintenance.workspace import scope_for, sync_quietly

    sync_quietly(memory, folder, scope_for(memory, folder, agent_of(event)))


def cmd_session_end(args: argparse.Namespace) -> int:
    event, repaired = read_event("hook session-end")
    from ..bridge.capture import end_event
    from ..ingest.repair import warn

    memory = common.memory(args.data_dir)
    end = end_event(event, max_turn_chars=memory.config.ingest.max_turn_chars, provenance=memory.config.provenance)
    if repaired:
        warn(repaired)
    report: dict[str, Any] = {}
    for result in reversed(memory.hooks.hook.session_end(memory=memory, event=end)):
        if isinstance(result, dict):
            report.update(result)
    _emit(report)
    return 0


def cmd_tool(args: argparse.Namespace) -> int:
    from ..ingest.repair import warn
    from ..tools.catalog import find_tool, run_tool

    find_tool(args.name)  # an unknown name fails before stdin is read
    event, repaired = read_event(f"hook tool {args.name}")
    if repaired:
        warn(repaired)
    _emit(run_tool(common.memory(args.data_dir), args.name, event))
    return 0


def _emit(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_event(what: str) -> tuple[dict[str, Any], str | None]:
    """(the event on stdin as a JSON object, what was repaired in it or None): cut UTF-8 and
    lone surrogates are repaired (a message Node cut mid-emoji must not block its session's
    capture for good); the caller warns once the event is accepted."""
    from ..ingest.repair import decode, load_json

    if sys.stdin.isatty():  # run by hand: say what it wants instead of waiting for input forever
        raise InputError(f"{what}: expects the OpenClaw event as a JSON object on stdin, e.g. "
                         f"echo '{{\"agentId\": \"main\", \"prompt\": \"…\"}}' | alaya {what}")
    raw = common.read_stdin(f"{what}: stdin is larger than 50 MB")
    if not raw.strip():
        raise InputError(f"{what}: stdin is empty, expected the event as a JSON object")
    text, repaired = decode(raw, f"{what}: stdin")
    try:
        event = load_json(text)
    except (ValueError, RecursionError) as exc:
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputError(f"{what}: stdin is not valid JSON ({detail})") from None
    if not isinstance(event, dict):
        raise InputError(f"{what}: stdin must be a JSON object, got {type(event).__name__}")
    return event, repaired
