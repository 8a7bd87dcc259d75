"""Trace a card back to the turns it was distilled from (L3 is the truth)."""

from __future__ import annotations

from typing import Any

from ..models import CardRecord, TraceResult, TraceSession
from ..store.raw import RawStore

CONTEXT_TURNS = 2  # turns shown before and after each source turn


def build_trace(card: CardRecord, sessions: dict[str, dict[str, Any] | None], raw: RawStore) -> TraceResult:
    found = []
    for source in card.sources:
        session = raw.load(source.session_id)
        if session is None:
            continue
        wanted = set(source.turn_ids)
        positions = [i for i, turn in enumerate(session.turns) if turn.id in wanted]
        around = sorted(
            {j for i in positions for j in range(i - CONTEXT_TURNS, i + CONTEXT_TURNS + 1) if 0 <= j < len(session.turns)}
        )
        path = raw.find(source.session_id)
        node = sessions.get(source.session_id) or {}
        found.append(
            TraceSession(
                session_id=session.id,
                path=str(path) if path else node.get("path") or "",
                started_at=session.started_at,
                turns=[session.turns[i] for i in positions],
                context=[session.turns[i] for i in around],
            )
        )
    return TraceResult(card_id=card.id, title=card.title, content=card.content, type=card.type, sessions=found,
                       forwarded_from=card.forwarded_from)
