"""Capture at a session's end, the built-in `session_end` hook (`alaya hook session-end`,
cli/hook.py, hands it the event; docs/architecture.md, "The capture path").

The event: `{agentId, sessionKey, sessionId, reason, messages}` → ingest what is new, distill
it, refresh the summary cache. Capture is idempotent without timestamps: OpenClaw re-sends the
whole (possibly compacted) history on every `agent_end`, with new timestamps, string instead of
block content, and extra keys; incoming messages are aligned with the stored turns on role and
normalised text, and only those past the stored ones are new. The transcript is stored first
(L3) and kept when distilling fails: the session then stays pending for `alaya introspect`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import clock
from ..errors import UNWRITABLE, InputError, UnwritableError
from ..ingest.provenance import RunProvenance, annotate, follow_content, run_provenance, standing
from ..models import INJECTABLE_ORIGINS, Turn, check_id, least_trusted
from ..safety.instructions import looks_like_instruction

if TYPE_CHECKING:
    from ..config import ProvenanceConfig
    from ..memory import Memory

_OUR_BLOCK = re.compile(r"<alaya-memory\b[^>]*>.*?</alaya-memory>\s*", re.I | re.S)
# OpenClaw may prefix a user message with a time envelope, e.g. "[Mon 2026-04-10 09:00 UTC] ".
_ENVELOPE = re.compile(r"^\[[A-Za-z]{3} \d{4}-\d{2}-\d{2}[^\]\n]{0,40}\]\s*")
_UNSAFE = re.compile(r"[^A-Za-z0-9._:@+-]+")
_TITLE_CHARS = 80


@dataclass
class EndEvent:
    agent_id: str
    session_id: str | None
    reason: str
    turns: list[Turn] = field(default_factory=list)
    session_key: str | None = None
    run: RunProvenance = field(default_factory=RunProvenance)


# --- ids ------------------------------------------------------------------------------------


def safe_id(raw: Any, prefix: str, max_len: int = 128) -> str | None:
    """A usable id from what OpenClaw sent: kept when valid and at most `max_len` long, else a
    readable, collision-free rewrite (`<cleaned>-<hash of the whole>`, under 94 characters);
    None when absent."""
    if raw is None or isinstance(raw, bool) or raw == "":
        return None
    text = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True)
    if len(text) <= max_len:
        try:
            return check_id(text, "id")
        except ValueError:
            pass
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    cleaned = _UNSAFE.sub("-", text).strip("-._:@+")[:80]
    return f"{cleaned}-{digest}" if cleaned else f"{prefix}-{digest}"


def agent_of(event: dict[str, Any]) -> str:
    return safe_id(event.get("agentId"), "agent") or "shared"


def session_of(event: dict[str, Any]) -> str | None:
    """OpenClaw's sessionId when present, else `key-` + the sessionKey; a key too long for that
    to be an id is hashed whole (cutting it would give keys that differ late one session)."""
    sid = safe_id(event.get("sessionId"), "session")
    if sid:
        return sid
    key = safe_id(event.get("sessionKey"), "key", max_len=128 - len("key-"))
    return f"key-{key}" if key else None


# --- session-end ----------------------------------------------------------------------------


def end_event(event: dict[str, Any], *, max_turn_chars: int, provenance: "ProvenanceConfig") -> EndEvent:
    """The event as capture takes it; each turn cut to `max_turn_chars` (config `ingest`) and
    marked with where it came from (ingest/provenance.py; a downgraded owner claim is logged)."""
    from ..ingest.formats import parse_messages

    messages = event.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise InputError("hook session-end: messages must be a list")
    messages = messages[_after_last_reset(messages):]
    reason = event.get("reason")
    run = run_provenance(event, owner_ids=provenance.owner_ids, trusted_tools=provenance.trusted_tools)
    messages, warnings = annotate(messages, run)
    for warning in warnings:
        print(f"alaya: warning: hook session-end: {warning}", file=sys.stderr)
    turns = parse_messages([_prepare(m) for m in messages], strict=False, where="hook session-end: messages",
                           max_turn_chars=max_turn_chars)
    return EndEvent(
        agent_id=agent_of(event),
        session_id=session_of(event),
        reason=reason if isinstance(reason, str) and reason else "unknown",
        turns=turns,
        session_key=event.get("sessionKey") if isinstance(event.get("sessionKey"), str) else None,
        run=run,
    )


def _after_last_reset(messages: list[Any]) -> int:
    """Index after OpenClaw's in-place reset marker (`__openclaw.kind == "reset"`, same session
    id): what precedes it was captured before the reset, what follows is a new conversation."""
    for index in range(len(messages) - 1, -1, -1):
        meta = messages[index].get("__openclaw") if isinstance(messages[index], dict) else None
        if isinstance(meta, dict) and meta.get("kind") == "reset":
            return index + 1
    return 0


def _prepare(message: Any) -> Any:
    """Positional turn ids (a message's own `id` is ignored), and our own injected block taken
    out of user messages so memory never feeds on itself."""
    if not isinstance(message, dict):
        return message
    message = {k: v for k, v in message.items() if k != "id"}
    if str(message.get("role", "")).lower() == "user":
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = _OUR_BLOCK.sub("", content)
        elif isinstance(content, list):
            message["content"] = [
                {**b, "text": _OUR_BLOCK.sub("", b["text"])} if isinstance(b, dict) and isinstance(b.get("text"), str) else b
                for b in content
            ]
    return message


def normalise(text: str) -> str:
    return " ".join(_ENVELOPE.sub("", _OUR_BLOCK.sub("", text)).split())


def new_turns(stored: list[Turn], incoming: list[Turn]) -> list[Turn]:
    """The incoming turns that come after what is stored, with ids that continue the stored ones.

    The incoming history is aligned with the stored turns: the offset where most incoming turns
    match stored ones (role + normalised text), tried where the first few incoming turns occur;
    at least half of the overlap must match. OpenClaw's history can start later than ours
    (compaction) and earlier messages can come back reformatted; anything past the stored end
    is new. No alignment: everything is new (a different conversation under the same id).
    """
    if not stored:
        return [t.model_copy(update={"id": f"t{i:04d}"}) for i, t in enumerate(incoming, 1)]
    s_keys = [(t.role, normalise(t.content)) for t in stored]
    i_keys = [(t.role, normalise(t.content)) for t in incoming]
    positions: dict[tuple[str, str], list[int]] = {}
    for pos, key in enumerate(s_keys):
        positions.setdefault(key, []).append(pos)
    candidates = {0}
    for j, key in enumerate(i_keys[:3]):
        candidates.update(p - j for p in positions.get(key, []) if p - j >= 0)
    n = len(stored)
    best, best_score = n, 0
    for offset in sorted(candidates):
        overlap = min(n - offset, len(incoming))
        if overlap <= 0:
            continue
        score = sum(1 for j in range(overlap) if s_keys[offset + j] == i_keys[j])
        anchored = s_keys[offset] == i_keys[0]
        # Half a match is enough only when the first incoming turn lines up; otherwise a
        # repeated short reply ("OK") would pass a restarted conversation off as old.
        if score > best_score and (score * 2 > overlap or (anchored and score * 2 >= overlap)):
            best, best_score = offset, score
    fresh = incoming[n - best :] if best < n else incoming
    used = {t.id for t in stored}
    out = []
    for k, turn in enumerate(fresh, 1):
        turn_id, rev = f"t{n + k:04d}", 1
        while turn_id in used:
            rev += 1
            turn_id = f"t{n + k:04d}+{rev}"
        used.add(turn_id)
        out.append(turn.model_copy(update={"id": turn_id}))
    return out


def capture(memory: "Memory", event: EndEvent) -> dict[str, Any]:
    """The built-in session_end: ingest (L3 first), distill this session, refresh the summary."""
    from ..models import Session

    report: dict[str, Any] = {"session_id": event.session_id, "agent_id": event.agent_id, "reason": event.reason, "new_turns": 0}
    sid = event.session_id
    if sid is None:
        if not event.turns:
            return report
        from ..ingest.formats import derive_session_id

        sid = report["session_id"] = derive_session_id(event.turns)
    if not memory.dirs.initialized():
        if not event.turns:
            report["distilled"] = False
            return report
        memory.init()  # first capture on a fresh install
    stored = memory.raw.load(sid)
    from ..redact import for_alignment

    incoming = for_alignment(memory, sid, stored.agent_id if stored else event.agent_id, event.turns)
    fresh = follow_content(stored.turns if stored else [], new_turns(stored.turns if stored else [], incoming))
    fresh = _within_parent(memory, event, fresh)
    if fresh:
        # the title may be injected (recent sessions): never the words of an untrusted sender,
        # nor an order someone pasted (safety/instructions.py)
        first_user = next((t.content for t in [*(stored.turns if stored else []), *fresh]
                           if t.role == "user" and t.origin in INJECTABLE_ORIGINS and not looks_like_instruction(t.content)), "")
        session = Session(
            id=sid,
            agent_id=stored.agent_id if stored else event.agent_id,
            started_at=(stored.started_at if stored else None)
            or next((t.timestamp for t in event.turns if t.timestamp), None)
            or clock.now().isoformat(timespec="seconds"),
            title=(stored.title if stored else None) or (" ".join(first_user.split())[:_TITLE_CHARS] or None),
            source_format="openclaw-hook",
            turns=fresh,
            kind=event.run.kind,
            channel=event.run.channel,
            parent=safe_id(event.run.parent, "session") if event.run.parent else None,
        )
        ingested = memory.ingest(session)  # runs the store filters (secret redaction)
        if ingested.forgotten:  # the user forgot this session: its transcript is not kept again
            report.update(forgotten=True, distilled=False)
            return report
        report["new_turns"] = ingested.new_turns
        report["total_turns"] = ingested.total_turns
    elif stored is None:
        report["distilled"] = False
        return report
    else:
        report["total_turns"] = len(stored.turns)
    agent = stored.agent_id if stored else event.agent_id
    report["distilled"] = False
    if memory.config.hook.distill_at_end and _distill_later is not None:
        # the warm daemon answers now, the turns stored, and distils this session in the
        # background (issue 33): the Session node's distilled_turns < turn_count marks it
        # pending, so what a crash interrupts the next daemon or introspect picks up
        if fresh:
            _distill_later(sid, agent)
            report["distilling"] = "queued"
        return report
    if memory.config.hook.distill_at_end:
        try:
            with hook_deadline(memory):  # a model-backed distill must not outlast the hook
                result = memory.distill(sid)
            report["distilled"] = True
            report["cards"] = result.cards
        except Exception as exc:  # noqa: BLE001 - the transcript is stored; introspect retries
            if isinstance(exc, OSError) and exc.errno in UNWRITABLE:  # not a model's failure: say so (exit 1)
                raise UnwritableError(
                    f"{exc.filename or memory.dirs.root}: {exc.strerror}; session {sid} is stored ({report['total_turns']} "
                    "turns) but not distilled: that waits for room (the next capture or `alaya introspect` does it)"
                ) from None
            print(f"alaya: warning: distilling {sid} failed, left pending: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
    try:
        from . import summary

        summary.refresh(memory, [agent])
    except Exception as exc:  # noqa: BLE001 - a cache; the next session-start recomputes it
        print(f"alaya: warning: summary not refreshed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return report


# Set by the daemon (cli/distill_queue.py): session id, agent → distil later, in the background.
_distill_later: Callable[[str, str], None] | None = None


def distill_later(queue: Callable[[str, str], None] | None) -> None:
    """Hand capture's distilling to `queue` (the daemon's background queue, issue 33), or
    (None) distil inside the capture again."""
    global _distill_later
    _distill_later = queue


def tool_caller(memory: "Memory", event: dict[str, Any]) -> tuple[str, str]:
    """(agent, origin) of an agent tool call (`alaya hook tool`): the call
    inherits its session's standing (ingest/provenance.py `standing`): the run's own, as its
    provenance keys give it (a group chat's stranger, a cron prompt, a sub-agent), and
    `untrusted` once a stranger has spoken in the stored session. The owner's own session
    writes `manual`. A stored session's channel stands in for one the event leaves out."""
    provenance = memory.config.provenance
    run = run_provenance(event, owner_ids=provenance.owner_ids, trusted_tools=provenance.trusted_tools)
    sid = session_of(event)
    stored = memory.raw.load(sid) if sid and memory.dirs.initialized() else None
    if stored is not None and run.channel is None and stored.channel:
        run.channel = stored.channel
    origin = least_trusted([standing(stored.turns if stored else [], run), parent_standing(memory, run)]) or "owner"
    return agent_of(event), "manual" if origin == "owner" else origin


def parent_standing(memory: "Memory", run: RunProvenance) -> str | None:
    """A sub-agent works on its parent's behalf: the parent session's standing (`untrusted`
    when a stranger talks there), or None (not a sub-agent, no parent stored)."""
    if run.kind != "subagent" or not run.parent or not memory.dirs.initialized():
        return None
    parent = memory.raw.load(safe_id(run.parent, "session") or "")
    return standing(parent.turns) if parent is not None else None


def _within_parent(memory: "Memory", event: EndEvent, fresh: list[Turn]) -> list[Turn]:
    """A sub-agent's turns are no more trusted than its parent's standing (a task spawned from
    a group chat a stranger talks in is untrusted)."""
    cap = parent_standing(memory, event.run) if fresh else None
    if cap is None:
        return fresh
    return [t.model_copy(update={"origin": least_trusted([t.origin, cap])}) for t in fresh]


def hook_deadline(memory: "Memory"):
    """A hook must answer in time: model calls inside it give up after `hook.llm_deadline_seconds`
    (the distiller then leaves the session pending for introspect). Offline: nothing to cap."""
    import contextlib

    if memory.config.distill.llm_provider == "heuristic" and memory.config.embedding.provider == "hash":
        return contextlib.nullcontext()
    from ..llm.client import deadline

    return deadline(memory.config.hook.llm_deadline_seconds)
