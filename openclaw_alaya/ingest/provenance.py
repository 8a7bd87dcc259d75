"""Where each turn came from: the origin class and the kind of run (docs/provenance.md).

The hook's messages are annotated before they are parsed (`annotate`), because what decides an
assistant turn's origin is a tool result that parsing drops: content from a tool that may have
read the outside world taints the rest of that turn. A file ingested on purpose by the owner
(`alaya ingest`) gets origins by role instead (`with_import_defaults`). Nothing here ever
guesses `owner` for a sender it cannot place: an unknown sender on a channel is `untrusted`, and
a message cannot raise its own standing (its `origin` field counts only in the owner's direct
session). Provenance then follows content (`follow_content`): what repeats a stranger's words,
or answers in a conversation a stranger is part of, is untrusted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..models import ORIGINS, SESSION_KINDS, Session, Turn, check_choice, least_trusted, trust_class
from ..safety.echo import Echoes

if TYPE_CHECKING:
    from ..store.ports.graph import CardGraph

STORED_ECHOES = 500  # the newest untrusted cards a write from another session is checked against

# OpenClaw's `ctx.trigger` values that name a kind of run; "user" and "manual" are interactive.
_TRIGGER_KINDS = {"cron": "cron", "heartbeat": "heartbeat"}
# `ctx.inputProvenance.kind` → the origin of the run's user-role input.
_INPUT_ORIGINS = {"inter_session": "agent", "internal_system": "system"}
_TOOL_ROLES = {"toolresult", "tool", "function", "tool_result"}
_ANNOUNCE = "subagent_announce"
# The Gateway's own operator surfaces: the Control UI's chat (`chat.send`) is authenticated with
# the Gateway's token, so its sender is the operator, whatever id it carries ("cli").
_OPERATOR_CHANNELS = {"webchat"}
_TOOL_RESULT_BLOCKS = {"tool_result", "toolResult", "function_call_output"}
_MAX_SENDER = 128
# OpenClaw's chat types (`chatType`; in session keys `agent:<id>:<channel>:group:<id>`) of a
# conversation with more people than the owner in it.
_SHARED_CHATS = {"group", "channel"}


@dataclass
class RunProvenance:
    """What the hook event says about the run that produced its new messages."""

    kind: str = "interactive"
    sender: str | None = None
    channel: str | None = None
    input_kind: str | None = None  # OpenClaw's inputProvenance.kind
    input_tool: str | None = None  # …and its sourceTool (`subagent_announce`: a sub-agent's result)
    parent: str | None = None  # a sub-agent's parent session (id, else key)
    owner_ids: set[str] = field(default_factory=set)
    trusted_tools: set[str] = field(default_factory=set)
    shared: bool = False  # a group chat or a channel: other people talk here too

    def is_owner(self, sender: str | None) -> bool:
        if not sender:
            return False
        return sender in self.owner_ids or (bool(self.channel) and f"{self.channel}:{sender}" in self.owner_ids)

    def owner_direct(self) -> bool:
        """Whether this run is the owner talking in a conversation of their own (the terminal,
        the Control UI, an owner's direct message): the only place a message's own `origin`
        field may say more than the run does."""
        return not self.shared and _user_origin(self, self.sender) == "owner"


def _text(value: Any, limit: int = _MAX_SENDER) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())[:limit]
    return value or None


def run_provenance(event: dict[str, Any], *, owner_ids: list[str], trusted_tools: list[str]) -> RunProvenance:
    """The event's provenance keys (contract: docs/provenance.md), checked: an unknown
    `sessionKind` or message `origin` is refused with the allowed values."""
    given = event.get("sessionKind")
    if given is not None:
        kind = check_choice(given, SESSION_KINDS, "sessionKind")
    else:
        kind = _kind_from_run(event)
    prov = event.get("inputProvenance")
    input_kind = _text(prov.get("kind"), 40) if isinstance(prov, dict) else None
    input_tool = _text(prov.get("sourceTool"), 64) if isinstance(prov, dict) else None
    if input_tool == _ANNOUNCE and given is None:
        # the run that hands a sub-agent's result to its parent: the sub-agent's summary card
        # already holds it (distill/subagent.py), so its turns are the sub-agent's kind
        kind = "subagent"
    ids = {i for i in (_text(v) for v in (event.get("ownerIds") or [] if isinstance(event.get("ownerIds"), list) else [])) if i}
    parent = _text(event.get("parentSessionId")) or _text(event.get("parentSessionKey"), 256)
    return RunProvenance(
        kind=kind,
        sender=_text(event.get("senderId")),
        channel=_text(event.get("channel"), 64),
        input_kind=input_kind,
        input_tool=input_tool,
        parent=parent,
        owner_ids=ids | {str(i) for i in owner_ids},
        trusted_tools=set(trusted_tools),
        shared=_shared(event),
    )


def _shared(event: dict[str, Any]) -> bool:
    """A group chat or a channel: OpenClaw's `chatType`, else the session key's shape."""
    chat = event.get("chatType")
    if isinstance(chat, str):
        return chat.lower() in _SHARED_CHATS
    key = event.get("sessionKey") if isinstance(event.get("sessionKey"), str) else ""
    return bool(_SHARED_CHATS & set(key.lower().split(":")[2:]))


def _kind_from_run(event: dict[str, Any]) -> str:
    """No `sessionKind`: OpenClaw's trigger, a cron job id, then the session key's shape
    (`agent:<id>:subagent:<uuid>`, `…:cron:<jobId>`)."""
    trigger = event.get("trigger")
    if isinstance(trigger, str) and trigger.lower() in _TRIGGER_KINDS:
        return _TRIGGER_KINDS[trigger.lower()]
    if _text(event.get("jobId")):
        return "cron"
    key = event.get("sessionKey") if isinstance(event.get("sessionKey"), str) else ""
    parts = key.lower().split(":")
    if "subagent" in parts or _text(event.get("parentSessionKey")) or _text(event.get("parentSessionId")):
        return "subagent"
    if "cron" in parts:
        return "cron"
    if "heartbeat" in parts:
        return "heartbeat"
    return "interactive"


def annotate(messages: list[Any], run: RunProvenance) -> tuple[list[Any], list[str]]:
    """Each message (a dict) with `origin`, `sessionKind` and, for user messages, `senderId` set;
    returns them and the warnings to log (an `owner` claim that was downgraded).

    - a message's own `origin` (checked) may lower its standing anywhere, and raise it only in
      the owner's direct session (`RunProvenance.owner_direct`); a raise refused is logged;
    - user input: another session's (`inter_session`) or a sub-agent's task (its parent
      agent wrote it) → agent, OpenClaw's own (`internal_system`, a cron or heartbeat run's
      prompt) → system; the Control UI's chat (`webchat`, the Gateway's authenticated
      operator) or an owner id → owner; another known sender → untrusted; no sender and no
      channel (the terminal) → owner; a channel without a sender → untrusted;
    - assistant → agent, but untrusted after a result from a tool not in `trusted_tools`, up to
      the next user message; tool results → untrusted; system → system.
    """
    out: list[Any] = []
    warnings: list[str] = []
    tainted = False
    own_session = run.owner_direct()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            out.append(message)
            continue
        role = str(message.get("role", "")).strip().lower()
        explicit = message.get("origin")
        if explicit is not None:
            try:
                explicit = check_choice(explicit, ORIGINS, "origin")
            except InputError as exc:
                raise InputError(f"hook session-end: messages: item {index + 1}: {exc}") from None
        sender = _text(message.get("senderId")) or (run.sender if role == "user" else None)
        results = _tool_results(message)
        if role == "user" and results:  # tool results sent back as a user message: same turn
            tainted = tainted or any(name not in run.trusted_tools for name in results)
            derived = "untrusted"
        elif role == "user":
            tainted = False
            derived = _user_origin(run, sender)
        elif role in _TOOL_ROLES:
            tainted = tainted or _name(message) not in run.trusted_tools
            derived = "untrusted"
        elif role == "system":
            derived = "system"
        else:
            tainted = tainted or any(name not in run.trusted_tools for name in results)
            derived = "untrusted" if tainted else "agent"
        origin = derived if explicit is None else explicit if own_session else least_trusted([explicit, derived]) or derived
        if explicit is not None and origin != explicit:
            warnings.append(f"message {index + 1} claims origin {explicit} for sender {sender or 'unknown'!r} "
                            f"(channel {run.channel or 'none'}) outside the owner's direct session: stored as {origin}")
        annotated = {**message, "origin": origin, "sessionKind": run.kind}
        if sender:
            annotated["senderId"] = sender
        out.append(annotated)
    return out, warnings


def _user_origin(run: RunProvenance, sender: str | None) -> str:
    if run.input_kind in _INPUT_ORIGINS:
        return _INPUT_ORIGINS[run.input_kind]
    if run.kind in ("cron", "heartbeat"):  # the scheduler's prompt, not someone talking
        return "system"
    if run.kind == "subagent":  # its task: written by the parent agent, not by the owner
        return "agent"
    if run.channel in _OPERATOR_CHANNELS or run.is_owner(sender):
        return "owner"
    if sender:
        return "untrusted"
    return "untrusted" if run.channel else "owner"


def _name(message: dict[str, Any]) -> str:
    return str(message.get("toolName") or message.get("name") or "")


def _tool_results(message: dict[str, Any]) -> list[str]:
    """The tool names of the tool-result blocks in a message's content ("" when unnamed)."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [str(block.get("name") or block.get("toolName") or "") for block in content
            if isinstance(block, dict) and block.get("type") in _TOOL_RESULT_BLOCKS]


def role_origin(role: str) -> str:
    """The origin of a turn that does not say, by its role: what an `alaya ingest` of a file
    is taken to be (the owner vouched for it by ingesting it; `--origin` says otherwise)."""
    return {"user": "owner", "assistant": "agent", "tool": "untrusted", "system": "system"}.get(role, "untrusted")


def with_import_defaults(session: Session, origin: str | None = None) -> Session:
    """A session from a file, its turns' origins filled by role; `origin` (`alaya ingest
    --origin`) caps them: `untrusted` makes every turn untrusted. Kind `import` unless the file
    says otherwise."""
    def filled(role: str) -> str:
        by_role = role_origin(role)
        return least_trusted([origin, by_role]) or by_role if origin else by_role

    turns = follow_content([], [t if t.origin else t.model_copy(update={"origin": filled(t.role)}) for t in session.turns])
    # the title may be injected (recent sessions): a file's own title is as trusted as its turns
    title = session.title if any(trust_class(t.origin) == "injectable" for t in turns) else None
    return session.model_copy(update={"turns": turns, "kind": session.kind or "import", "title": title})


def follow_content(prior: list[Turn], fresh: list[Turn]) -> list[Turn]:
    """`fresh` (the turns after `prior` in one session) with provenance that follows content
    (docs/provenance.md, "Content keeps its standing"):

    - once an untrusted speaker has a user turn in the session, every later assistant turn is
      `untrusted`: a stranger is part of that conversation, and what the assistant says in it
      answers them too, paraphrase included;
    - any other turn (owner, agent) that repeats untrusted text of the session, earlier or in
      the same run (`safety.echo`: `RUN` words in a row), is `untrusted`.
    """
    echoes = Echoes([t.content for t in prior if t.origin == "untrusted"])
    stranger = any(t.origin == "untrusted" and t.role == "user" for t in prior)
    out: list[Turn] = []
    for turn in fresh:
        origin = turn.origin
        if origin == "untrusted":
            stranger = stranger or turn.role == "user"
            echoes.add(turn.content)
        elif origin in ("owner", "agent") and ((stranger and turn.role == "assistant") or echoes.repeated_in(turn.content)):
            origin = "untrusted"
        out.append(turn if origin == turn.origin else turn.model_copy(update={"origin": origin}))
    return out


def standing(turns: list[Turn], run: RunProvenance | None = None) -> str | None:
    """The origin of what is done on behalf of a session (a tool call in it, a sub-agent it
    spawns): `untrusted` once a stranger has a user turn in it (as `follow_content` has it for
    the assistant's turns), else the origin of the run now under way (`run`: its input's, as
    `annotate` gives it); None when neither says anything."""
    if any(t.role == "user" and t.origin == "untrusted" for t in turns):
        return "untrusted"
    return _user_origin(run, run.sender) if run is not None else None


def stored_echoes(graph: "CardGraph", scopes: list[str], now: str, limit: int = STORED_ECHOES) -> Echoes:
    """The newest `limit` untrusted cards of these scopes, to test a write that comes from
    outside any stored conversation against (an agent's `memory_store`, the notes it writes to
    its workspace): an agent that carries a stranger's words from a group chat into memory
    under its own name keeps the stranger's standing."""
    cards = graph.top_cards(scopes, by="recent", limit=limit, now=now, origins=["untrusted"])
    return Echoes([f"{c.title}\n{c.content}" for c in cards if c.origin == "untrusted"])
