"""`alaya introspect --session ID` (the TrulyMEM `memory_introspect` tool): what one session
put into memory — the entities it discussed, how densely its cards are linked, and its
hotspots (the cards most connected to the rest of memory)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..models import check_id

if TYPE_CHECKING:
    from ..memory import Memory

HOTSPOTS = 5
TOP_ENTITIES = 15


def session_report(memory: "Memory", session_id: str) -> dict[str, Any]:
    check_id(session_id, "session id")
    with memory.reading("introspect session") as graph:
        session = graph.get_session(session_id)
        if session is None:
            raise NotFoundError(f"no session {session_id!r}")
        ids = graph.session_card_ids(session_id)
        cards = graph.get_cards(ids)
        edges = graph.neighbours(ids, None) if ids else []
    inside = set(ids)
    relations = Counter(rel for _src, rel, _dst, _w in edges)
    internal = sum(1 for src, _rel, dst, _w in edges if src in inside and dst in inside)
    degree = Counter(src for src, _rel, _dst, _w in edges)
    entities = Counter(e for c in cards.values() for e in c.entities)
    return {
        "session_id": session_id,
        "title": session.get("title"),
        "started_at": session.get("started_at"),
        "turns": session.get("turn_count"),
        "cards": len(cards),
        "types": dict(Counter(c.type for c in cards.values()).most_common()),
        "entities": [{"name": n, "cards": k} for n, k in entities.most_common(TOP_ENTITIES)],
        "relations": dict(relations.most_common()),
        # edges between this session's cards per card, and edges leading out of the session
        "relation_density": round(internal / 2 / len(cards), 3) if cards else 0.0,  # each edge is seen from both ends
        "links_out": sum(1 for src, _rel, dst, _w in edges if src in inside and dst not in inside),
        "hotspots": [{"id": cid, "title": cards[cid].title, "links": n}
                     for cid, n in degree.most_common() if cid in cards][:HOTSPOTS],
    }
