"""Trace a card back to the turns it was distilled from (L3 is the truth)."""

from __future__ import annotations

from typing import Any

from ..models import CardRecord, Session, TraceResult, TraceSession, line_turn
from ..store.raw import RawStore

CONTEXT_TURNS = 2  # turns shown before and after each source turn


def build_trace(card: CardRecord, sessions: dict[str, dict[str, Any] | None], raw: RawStore) -> TraceResult:
    found = []
    for source in card.sources:
        session = raw.load(source.session_id)
        if session is not None:
            found.append(turns_in_place(session, source.turn_ids, raw, sessions.get(source.session_id)))
    return TraceResult(card_id=card.id, title=card.title, content=card.content, type=card.type, sessions=found,
                       forwarded_from=card.forwarded_from, origin=card.origin)


def turns_in_place(session: Session, turn_ids: list[str], raw: RawStore,
                   node: dict[str, Any] | None = None) -> TraceSession:
    """The turns `turn_ids` of `session`, in session order, with CONTEXT_TURNS around each (a
    card's sources, or one `session#turn` the memory_get tool asks for)."""
    lines = [t for t in (line_turn(session, i) for i in turn_ids) if t is not None]
    if lines:  # a workspace file's lines (docs/workspace.md): those lines, and a few around them
        path = raw.find(session.id)
        return TraceSession(session_id=session.id, path=str(path) if path else (node or {}).get("path") or "",
                            started_at=session.started_at, turns=lines,
                            context=[t for t in (line_turn(session, i, CONTEXT_TURNS) for i in turn_ids) if t])
    wanted = set(turn_ids)
    positions = [i for i, turn in enumerate(session.turns) if turn.id in wanted]
    around = sorted(
        {j for i in positions for j in range(i - CONTEXT_TURNS, i + CONTEXT_TURNS + 1) if 0 <= j < len(session.turns)}
    )
    path = raw.find(session.id)
    return TraceSession(
        session_id=session.id,
        path=str(path) if path else (node or {}).get("path") or "",
        started_at=session.started_at,
        turns=[session.turns[i] for i in positions],
        context=[session.turns[i] for i in around],
    )
