"""What the deliberate operations share: ids for the sessions they store, and the cards a
session became (a note the resolver merged into a stored card lives on in that card)."""

from __future__ import annotations

import hashlib
from datetime import timezone
from typing import TYPE_CHECKING

from .. import clock
from ..distill.plan import card_id

if TYPE_CHECKING:
    from ..store.ports.graph import CardGraph


def session_id(kind: str, *parts: str) -> str:
    """`note-20261130T201502-3f2a9c1b`: sortable by time, distinct per content and scope."""
    stamp = clock.now().astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S")
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "replace")).hexdigest()[:8]
    return f"{kind}-{stamp}-{digest}"


def cards_of(graph: "CardGraph", session: str, keys: list[str]) -> list[str]:
    """The card each key of this session ended up as: its own id, or, when the resolver merged
    it into a stored card, that card (the one citing the session)."""
    planned = [card_id(session, key) for key in keys]
    present = graph.get_cards(planned)
    if len(present) == len(planned):
        return planned
    citing = sorted(graph.session_card_ids(session))
    found = [cid for cid in planned if cid in present]
    return found + [cid for cid in citing if cid not in found]
