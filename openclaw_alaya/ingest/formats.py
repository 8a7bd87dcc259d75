"""Input formats: turn whatever a user or OpenClaw hands us into one validated `Session`.

Three shapes are accepted, detected from the content (never from a file extension, because
stdin and hook payloads have none):

1. an OpenClaw transcript (JSONL: a `{"type":"session"}` header, then one entry per line),
2. our own "session JSON" object (`{"session_id", "turns": [...]}`), the seed format,
3. a plain JSON list of `{role, content}` messages (OpenAI/Anthropic/OpenClaw style).

Everything that is wrong with an input becomes an `InputError` with a one-line message that
says what is wrong and where, because the CLI prints it as is and hooks log it; what can be
repaired (cut UTF-8, lone surrogates, a turn too long to keep whole) is, with a warning
(`repair.py`).

Turn ids must be stable across re-ingests of a growing session (the raw store merges on them):
an explicit id is kept; otherwise `tNNNN` is the 1-based position among the kept turns, which
does not change when the conversation only grows at the end.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..models import ORIGINS, SESSION_KINDS, Session, Turn, check_choice, check_id
from .repair import DEFAULT_MAX_TURN_CHARS, cap_turn, decode, load_json, warn

MAX_DEPTH = 64
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_AGENT = "shared"

FORMAT_JSONL = "openclaw-jsonl"
FORMAT_SESSION_JSON = "session-json"
FORMAT_MESSAGE_LIST = "message-list"

# Roles that are conversation; everything OpenClaw/pi adds besides these is bookkeeping.
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant"}
_TOOL_ROLES = {"toolresult", "tool", "function", "tool_result", "toolcall"}
# Not conversation: instructions, summaries of earlier context, extension state, shell logs.
_SKIPPED_ROLES = {
    "system", "developer", "compactionsummary", "branchsummary", "custom", "bashexecution",
}
_TEXT_BLOCKS = {"text", "input_text", "output_text"}
_SKIPPED_BLOCKS = {"thinking", "redacted_thinking", "image", "image_url", "input_image", "file"}
_TOOL_CALL_BLOCKS = {"toolCall", "tool_use", "tool_call", "function_call"}
_TOOL_RESULT_BLOCKS = {"tool_result", "toolResult", "function_call_output"}

# "/new", "/model gpt-5", "/think high" are commands; "/etc/hosts is wrong" is not.
_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w-]*(?:\s|$)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MAX_ROLE_LEN = 64
_MAX_NAME_LEN = 128
_MAX_TS_LEN = 64
_MAX_TOOL_CALLS_CHARS = 20_000
_FORMATS_HINT = (
    "unknown format: expected an OpenClaw transcript (JSONL), a session JSON object"
    " or a list of {role, content} messages"
)


# --------------------------------------------------------------------------- public API


def parse_session(
    data: bytes,
    *,
    source_name: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    include_tools: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS,
) -> Session:
    """Parse one session from raw bytes in any supported format.

    `session_id` and `agent_id`, when given, win over what the file says: an explicit
    argument is what the caller (CLI flag, hook event) knows to be right. A turn longer than
    `max_turn_chars` is kept up to it, with a marker saying how much was cut.
    """
    src = _source_label(source_name)
    if len(data) > max_bytes:
        raise InputError(f"{src}: input is larger than {_format_size(max_bytes)}")
    text, repaired = decode(data, src)
    if not text.strip():
        raise InputError(f"{src}: input is empty")
    kind, payload, skipped = _detect(text, src)
    if kind == FORMAT_JSONL:
        draft = _session_from_jsonl(payload, src, include_tools, max_turn_chars)
    elif kind == FORMAT_SESSION_JSON:
        draft = _session_from_object(payload, src, include_tools, max_turn_chars)
    else:
        turns = parse_messages(payload, include_tools=include_tools, where=src, max_turn_chars=max_turn_chars)
        draft = _SessionDraft(turns=turns)
    draft.source_format = kind
    session = _finish(draft, src, agent_id=agent_id, session_id=session_id)
    if repaired:
        warn(repaired)
    if skipped:  # a torn last line (a crash mid-write) or a damaged one: said, not dropped silently
        shown = ", ".join(str(n) for n in skipped[:5]) + (", …" if len(skipped) > 5 else "")
        warn(f"{src}: skipped {len(skipped)} line{'s' if len(skipped) > 1 else ''} that "
             f"{'are' if len(skipped) > 1 else 'is'} not JSON (line {shown})")
    return session


def parse_messages(
    messages: list,
    *,
    include_tools: bool = False,
    strict: bool = True,
    where: str = "messages",
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS,
) -> list[Turn]:
    """Turn OpenClaw-style message objects (`{role, content: str | blocks, timestamp?}`) into turns.

    Shared by the list format, the session-JSON format and the OpenClaw session-end hook, so
    all of them extract text the same way. `strict=False` (for data OpenClaw produced) skips
    a malformed message instead of refusing the whole input; user-written files get an error
    that names the field, because they can fix it. A turn longer than `max_turn_chars` is cut
    to it, with a marker.
    """
    if not isinstance(messages, list):
        raise InputError(f"{_one_line(where)}: messages must be a list, got {_type_name(messages)}")
    entries = [_Entry(message=m, where=f"{where}: item {i + 1}") for i, m in enumerate(messages)]
    return _build_turns(entries, include_tools=include_tools, strict=strict, explicit_ids=True,
                        max_turn_chars=max_turn_chars)


def derive_session_id(turns: list[Turn]) -> str:
    """`s-` + 16 hex of sha256(first turn role + content).

    A longer version of the same conversation starts with the same turn, so it maps to the
    same session and the raw store merges instead of duplicating.
    """
    if not turns:
        raise InputError("cannot derive a session id without turns")
    first = turns[0]
    digest = hashlib.sha256(f"{first.role}\n{first.content}".encode("utf-8")).hexdigest()
    return f"s-{digest[:16]}"


def extract_text(content: Any, *, include_tools: bool = False, where: str = "content") -> str:
    """The readable text of a message's content (a string or a list of blocks).

    Thinking, images and tool traffic are left out unless `include_tools`, in which case tool
    calls read `[tool call NAME: {args}]` and tool results contribute their text.
    Raises InputError (naming `where`) when the content has a type that cannot hold text.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return _clean(content)
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise InputError(
            f"{where}: content must be a string or a list of blocks, got {_type_name(content)}"
        )
    parts = [_block_text(block, include_tools, f"{where}[{i}]") for i, block in enumerate(content)]
    return "\n\n".join(p for p in parts if p)


# --------------------------------------------------------------------------- decoding


def _loads(text: str, where: str) -> Any:
    """`repair.load_json` with a depth limit: very deep input is hostile, and Python's parser
    raises RecursionError on it rather than a JSON error."""
    try:
        value = load_json(text)
    except RecursionError:
        raise InputError(f"{where}: JSON is nested too deeply (more than {MAX_DEPTH} levels)") from None
    if _depth_exceeds(value, MAX_DEPTH):
        raise InputError(f"{where}: JSON is nested too deeply (more than {MAX_DEPTH} levels)")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Iterative (no recursion) check that containers nest at most `limit` levels."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


# --------------------------------------------------------------------------- detection


def _detect(text: str, src: str) -> tuple[str, Any, list[int]]:
    """Return (format, payload, skipped): payload is the parsed object/list, or JSONL entries;
    skipped, the numbers of JSONL lines that are not JSON."""
    stripped = text.strip()
    try:
        value = _loads(stripped, src)
    except InputError:
        raise
    except ValueError as exc:  # JSONDecodeError, or int-too-long
        return _detect_jsonl(text, src, exc)
    if isinstance(value, list):
        return FORMAT_MESSAGE_LIST, value, []
    if isinstance(value, dict):
        if "turns" in value or "messages" in value:
            return FORMAT_SESSION_JSON, value, []
        if _is_jsonl_entry(value):
            return FORMAT_JSONL, [(1, value)], []
    raise InputError(f"{src}: {_FORMATS_HINT}")


def _detect_jsonl(text: str, src: str, whole_error: ValueError) -> tuple[str, Any, list[int]]:
    """Line by line: skip lines that are not JSON (their numbers are returned, for a warning);
    at least one must be a transcript entry."""
    objects: list[tuple[int, dict]] = []
    skipped: list[int] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        if line[0] != "{":
            skipped.append(lineno)
            continue
        try:
            value = _loads(line, f"{src}: line {lineno}")
        except InputError:
            raise  # too deep: hostile, not merely a damaged line
        except ValueError:
            skipped.append(lineno)
            continue
        if isinstance(value, dict):
            objects.append((lineno, value))
    if any(_is_jsonl_entry(obj) for _, obj in objects):
        return FORMAT_JSONL, objects, skipped
    several_documents = isinstance(whole_error, json.JSONDecodeError) and whole_error.msg == "Extra data"
    if objects and (several_documents or text.lstrip()[:1] not in ("{", "[")):
        raise InputError(f"{src}: {_FORMATS_HINT}")
    raise InputError(f"{src}: not valid JSON ({_json_error_text(whole_error, text)})")


def _json_error_text(exc: ValueError, text: str) -> str:
    if isinstance(exc, json.JSONDecodeError):
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    else:
        detail = str(exc)
    if "\x00" in text:
        detail += "; it contains NUL bytes: a binary file, or UTF-16 without a BOM?"
    elif "\ufffd" in text:
        detail += "; it contains bytes that are not UTF-8: a binary file?"
    return _one_line(detail)


def _is_jsonl_entry(obj: dict) -> bool:
    return isinstance(obj.get("type"), str) or isinstance(obj.get("message"), dict)


# --------------------------------------------------------------------------- formats


class _SessionDraft:
    """What a format parser found, before ids are settled and the Session is validated."""

    def __init__(
        self,
        *,
        turns: list[Turn],
        session_id: Any = None,
        agent_id: Any = None,
        started_at: str | None = None,
        title: str | None = None,
        source_format: str = FORMAT_SESSION_JSON,
        kind: str | None = None,
        channel: str | None = None,
        metadata: dict | None = None,
    ) -> None:
        self.kind = kind
        self.channel = channel
        self.metadata = metadata
        self.turns = turns
        self.session_id = session_id
        self.agent_id = agent_id
        self.started_at = started_at
        self.title = title
        self.source_format = source_format


class _Entry:
    """One message with what surrounds it (JSONL entry id/timestamp) and where it came from."""

    def __init__(
        self, *, message: Any, where: str, entry_id: Any = None, entry_ts: Any = None
    ) -> None:
        self.message = message
        self.where = where
        self.entry_id = entry_id
        self.entry_ts = entry_ts


def _session_from_jsonl(
    objects: list[tuple[int, dict]], src: str, include_tools: bool, max_turn_chars: int
) -> _SessionDraft:
    header: dict = {}
    entries: list[_Entry] = []
    for lineno, obj in objects:
        kind = obj.get("type")
        if kind == "session":
            if not header:
                header = obj
            continue
        if not isinstance(obj.get("message"), dict):
            continue  # compaction, custom, model_change, label ... are not conversation
        # OpenClaw entries are type "message"; other agents' transcripts (Claude Code:
        # type "user"/"assistant", id in "uuid") carry the same message shape.
        entries.append(
            _Entry(
                message=obj["message"],
                where=f"{src}: line {lineno}",
                entry_id=obj.get("id", obj.get("uuid")),
                entry_ts=obj.get("timestamp"),
            )
        )
    turns = _build_turns(entries, include_tools=include_tools, strict=False, explicit_ids=False,
                         max_turn_chars=max_turn_chars)
    return _SessionDraft(
        turns=turns,
        session_id=header.get("id"),
        started_at=_timestamp(header.get("timestamp"), f"{src}: header", strict=False),
    )


def _session_from_object(obj: dict, src: str, include_tools: bool, max_turn_chars: int) -> _SessionDraft:
    raw_turns = obj["turns"] if "turns" in obj else obj["messages"]
    field = "turns" if "turns" in obj else "messages"
    if not isinstance(raw_turns, list):
        raise InputError(f"{src}: {field} must be a list, got {_type_name(raw_turns)}")
    entries = [_Entry(message=m, where=f"{src}: {field}[{i}]") for i, m in enumerate(raw_turns)]
    turns = _build_turns(entries, include_tools=include_tools, strict=True, explicit_ids=True,
                         max_turn_chars=max_turn_chars)
    started = None
    for key in ("started_at", "timestamp", "date"):
        if obj.get(key) is not None:
            started = _timestamp(obj[key], f"{src}: {key}", strict=True)
            break
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{src}: title must be a string, got {_type_name(title)}")
    sid = obj.get("session_id", obj.get("id"))
    if isinstance(sid, bool) or (sid is not None and not isinstance(sid, (str, int))):
        raise InputError(f"{src}: session_id must be a string, got {_type_name(sid)}")
    kind = obj.get("kind")
    channel = obj.get("channel")
    if channel is not None and not isinstance(channel, str):
        raise InputError(f"{src}: channel must be a string, got {_type_name(channel)}")
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InputError(f"{src}: metadata must be an object, got {_type_name(metadata)}")
    return _SessionDraft(
        turns=turns,
        session_id=None if sid is None else str(sid),
        agent_id=obj.get("agent_id", obj.get("agent")),  # the seed format's `agent`
        started_at=started,
        title=(_one_line(title).strip() or None) if title else None,
        kind=None if kind is None else _choice(kind, SESSION_KINDS, "kind", src),
        channel=(_one_line(channel).strip()[:_MAX_NAME_LEN] or None) if channel else None,
        metadata=metadata or None,
    )


def _finish(draft: _SessionDraft, src: str, *, agent_id: str | None, session_id: str | None) -> Session:
    """Settle ids and defaults, then validate once."""
    if not draft.turns:
        raise InputError(f"{src}: no messages with text")
    sid = session_id if session_id is not None else draft.session_id
    if sid is None or sid == "":
        sid = derive_session_id(draft.turns)
    agent = agent_id if agent_id is not None else (draft.agent_id or DEFAULT_AGENT)
    _check(sid, "session id", src)
    _check(agent, "agent id", src)
    started = draft.started_at or next((t.timestamp for t in draft.turns if t.timestamp), None)
    try:
        return Session(
            id=sid,
            agent_id=agent,
            started_at=started,
            title=draft.title,
            source_format=draft.source_format,
            turns=draft.turns,
            kind=draft.kind,
            channel=draft.channel,
            metadata=draft.metadata,
        )
    except ValidationError as exc:  # pragma: no cover - fields are checked above
        raise InputError(f"{src}: {_one_line(str(exc.errors()[0].get('msg')))}") from None


# --------------------------------------------------------------------------- turns


def _build_turns(
    entries: list[_Entry], *, include_tools: bool, strict: bool, explicit_ids: bool, max_turn_chars: int
) -> list[Turn]:
    """Extract kept turns (each cut to `max_turn_chars`) and give each a stable, unique id.

    explicit_ids=True (user formats): a message's own `id` must be valid, else InputError.
    explicit_ids=False (JSONL): the entry id is used when valid, else the position.
    """
    turns: list[Turn] = []
    seen: dict[str, Turn] = {}
    for entry in entries:
        fields = _turn_fields(entry, include_tools=include_tools, strict=strict)
        if fields is None:
            continue
        fields["content"] = cap_turn(fields["content"], max_turn_chars)
        position_id = f"t{len(turns) + 1:04d}"
        turn_id = _pick_id(entry, position_id, explicit_ids=explicit_ids, seen=seen)
        turn = Turn(id=turn_id, **fields)
        if turn_id in seen:
            if _same_turn(seen[turn_id], turn):
                continue  # the same message twice (e.g. a replayed line)
            raise InputError(f"{entry.where}: duplicate turn id {_show(turn_id)} with different content")
        seen[turn_id] = turn
        turns.append(turn)
    return turns


def _pick_id(entry: _Entry, position_id: str, *, explicit_ids: bool, seen: dict[str, Turn]) -> str:
    if explicit_ids:
        raw = entry.message.get("id") if isinstance(entry.message, dict) else None
        if raw is None:
            return position_id
        if isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)
        _check(raw, "turn id", entry.where)
        return raw
    raw = entry.entry_id
    if isinstance(raw, str) and _valid_id(raw) and raw not in seen:
        return raw
    return position_id


def _turn_fields(entry: _Entry, *, include_tools: bool, strict: bool) -> dict | None:
    """role/name/content/timestamp of a message worth keeping, or None to skip it."""
    msg = entry.message
    where = entry.where
    if isinstance(msg, dict) and "role" not in msg and isinstance(msg.get("message"), dict):
        msg = msg["message"]  # a transcript entry inside a list: use its message
    if not isinstance(msg, dict):
        if strict:
            raise InputError(f"{where}: must be an object with role and content, got {_type_name(msg)}")
        return None
    try:
        role = _role(msg.get("role"), where)
        if role is None or _is_inter_session(msg):
            return None
        if role == "tool" and not include_tools:
            return None
        text = _message_text(msg, role, include_tools, where)
        if not text or (role == "user" and _SLASH_COMMAND.match(text)):
            return None
        return {
            **_provenance(msg, where),
            **_usage(msg, where),
            "role": role,
            "name": _name(msg.get("name"), where),
            "content": text,
            # The message's own time first: the session-end hook only sees messages, so
            # both paths then give a turn the same timestamp (the raw store matches on it).
            "timestamp": _timestamp(
                msg.get("timestamp"), f"{where}: timestamp", strict=strict, fallback=entry.entry_ts
            ),
        }
    except InputError:
        if strict:
            raise
        return None


def _choice(value: Any, allowed: tuple[str, ...], what: str, where: str) -> str:
    try:
        return check_choice(value, allowed, what)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _provenance(msg: dict, where: str) -> dict[str, Any]:
    """A message's own origin, run kind and sender (docs/provenance.md), checked."""
    fields: dict[str, Any] = {}
    if msg.get("origin") is not None:
        fields["origin"] = _choice(msg["origin"], ORIGINS, "origin", where)
    if msg.get("sessionKind") is not None:
        fields["kind"] = _choice(msg["sessionKind"], SESSION_KINDS, "sessionKind", where)
    sender = msg.get("senderId")
    if isinstance(sender, (str, int)) and not isinstance(sender, bool) and str(sender).strip():
        fields["sender"] = _one_line(str(sender))[:_MAX_NAME_LEN]
    return fields


def _usage(msg: dict, where: str) -> dict[str, Any]:
    """The seed format's per-turn `tokens` (a count) and `tool_calls` (a list, kept as given in
    L3 up to `_MAX_TOOL_CALLS_CHARS` of JSON; its text goes into the turn only with tools on)."""
    fields: dict[str, Any] = {}
    tokens = msg.get("tokens")
    if tokens is not None:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise InputError(f"{where}: tokens must be a whole number of 0 or more, got {_show(tokens)}")
        fields["tokens"] = tokens
    calls = msg.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise InputError(f"{where}: tool_calls must be a list, got {_type_name(calls)}")
        size = len(json.dumps(calls, ensure_ascii=False, default=str))
        fields["tool_calls"] = calls if size <= _MAX_TOOL_CALLS_CHARS else [{"omitted": f"{size} characters of tool calls"}]
    return fields


def _role(raw: Any, where: str) -> str | None:
    """Normalised role; None for roles that are not conversation."""
    if raw is None:
        raise InputError(f"{where}: role is missing")
    if not isinstance(raw, str):
        raise InputError(f"{where}: role must be a string, got {_type_name(raw)}")
    role = raw.strip()
    low = role.lower()
    if low in _SKIPPED_ROLES:
        return None
    if low in _TOOL_ROLES:
        return "tool"
    if low in ("user", "assistant"):
        return low
    if low in _ROLE_ALIASES:
        return _ROLE_ALIASES[low]
    if not role or len(role) > _MAX_ROLE_LEN or _CONTROL.search(role):
        raise InputError(f"{where}: invalid role {_show(raw)}")
    return role


def _message_text(msg: dict, role: str, include_tools: bool, where: str) -> str:
    text = extract_text(msg.get("content"), include_tools=include_tools, where=f"{where}: content")
    if include_tools:
        calls = _openai_tool_calls(msg.get("tool_calls"))
        text = "\n\n".join(p for p in (text, calls) if p)
        if role == "tool" and text and msg.get("toolName"):
            name = _one_line(str(msg["toolName"]))[:_MAX_NAME_LEN]
            text = f"[tool result {name}]\n{text}"
    return text.strip()


def _block_text(block: Any, include_tools: bool, where: str) -> str:
    if isinstance(block, str):
        return _clean(block)
    if not isinstance(block, dict):
        raise InputError(f"{where}: content block must be an object or a string, got {_type_name(block)}")
    kind = block.get("type")
    if kind in _TEXT_BLOCKS or (kind is None and isinstance(block.get("text"), str)):
        text = block.get("text")
        if text is None:
            return ""
        if not isinstance(text, str):
            raise InputError(f"{where}: text must be a string, got {_type_name(text)}")
        return _clean(text).strip()
    if not include_tools or kind in _SKIPPED_BLOCKS:
        return ""
    if kind in _TOOL_CALL_BLOCKS:
        args = block.get("arguments", block.get("input", {}))
        return _render_tool_call(block.get("name"), args)
    if kind in _TOOL_RESULT_BLOCKS:
        return extract_text(block.get("content", block.get("output")), include_tools=True, where=where)
    return ""


def _openai_tool_calls(calls: Any) -> str:
    """OpenAI-style `tool_calls: [{function: {name, arguments}}]` on an assistant message."""
    if not isinstance(calls, list):
        return ""
    parts = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(_render_tool_call(fn.get("name"), fn.get("arguments", {})))
    return "\n\n".join(parts)


def _render_tool_call(name: Any, args: Any) -> str:
    shown = _one_line(str(name))[:_MAX_NAME_LEN] if name else "?"
    if isinstance(args, str):
        rendered = args
    else:
        rendered = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return _clean(f"[tool call {shown}: {rendered}]")


def _is_inter_session(msg: dict) -> bool:
    """OpenClaw forwards messages between sessions with provenance kind "inter_session"
    (newer versions rewrite them to role assistant); they belong to the other session."""
    prov = msg.get("provenance")
    kind = prov.get("kind") if isinstance(prov, dict) else prov
    return kind == "inter_session"


def _name(raw: Any, where: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InputError(f"{where}: name must be a string, got {_type_name(raw)}")
    name = _one_line(_clean(raw)).strip()[:_MAX_NAME_LEN]
    return name or None


def _timestamp(raw: Any, where: str, *, strict: bool, fallback: Any = None) -> str | None:
    """ISO strings are kept; numbers are epoch seconds or milliseconds, rendered ISO UTC."""
    if raw is None or raw == "":
        return None if fallback is None else _timestamp(fallback, where, strict=strict)
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        if strict:
            raise InputError(f"{where} must be an ISO string or epoch number, got {_type_name(raw)}")
        return None if fallback is None else _timestamp(fallback, where, strict=False)
    if isinstance(raw, str):
        value = _one_line(_clean(raw)).strip()
        if len(value) > _MAX_TS_LEN:
            if strict:
                raise InputError(f"{where} is too long to be a timestamp")
            return None
        return value or None
    seconds = raw / 1000 if abs(raw) >= 1e11 else raw
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        if strict:
            raise InputError(f"{where} {raw!r} is out of range") from None
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _same_turn(a: Turn, b: Turn) -> bool:
    return a.role == b.role and a.content == b.content


# --------------------------------------------------------------------------- small helpers


def _check(value: Any, what: str, where: str) -> None:
    try:
        check_id(value, what)
    except ValueError as exc:
        raise InputError(f"{where}: {_one_line(str(exc))}") from None


def _valid_id(value: str) -> bool:
    try:
        check_id(value, "id")
    except ValueError:
        return False
    return True


def _clean(text: str) -> str:
    """NUL bytes are never meaningful in a message and break downstream tools."""
    return text.replace("\x00", "")


def _one_line(text: str) -> str:
    return _CONTROL.sub(" ", text)


def _show(value: Any) -> str:
    return repr(value)[:60]


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _source_label(source_name: str | None) -> str:
    return _one_line(source_name)[:200] if source_name else "input"


def _format_size(n: int) -> str:
    mb = n / (1024 * 1024)
    if mb >= 1:
        return f"{mb:g} MB"
    return f"{n} bytes"
