"""What a current card replaced, for a question about history (issue 31's knowledge update).

A changed fact is kept as a chain: when the resolver finds a newer value of the same setting
("our billing DB pool size is 20" → 40 → 80), the new card is linked `CONTRADICTS` to the old
one and the old card's `valid_until` is set (distill/resolver.py, distill/batch.py). Recall ranks
the valid card first; asked "what was it before?" it also says, on that card, which values it
replaced, newest first (`RecallNode.replaces`): the superseded cards reached from it over
`CONTRADICTS` through superseded cards only, so the chain of one setting is followed and a
current card linked to another current one is not.

Only a question about history asks for the chain (one more graph read, for the returned
cards): "before", "previous", "earlier", "used to", "history", "changed", 之前, 以前, 原来….
"""

from __future__ import annotations

import re

from ..models import Card, RecallNode, Replaced
from ..store.ports.graph import GraphReads

MAX_REPLACED = 12  # values shown per card: a setting changed more often is cut to its latest ones

_ASKS_HISTORY = re.compile(
    r"\b(?:before|previous(?:ly)?|earlier|used to|history|historical|changed?|changes|old(?:er)? values?|replaced|"
    r"formerly|originally|at first)\b|之前|以前|原来|原先|历史|改之前|变更",
    re.IGNORECASE,
)


def asks_history(query: str | None) -> bool:
    """Whether the question asks what a fact was before (its phrasing; no model)."""
    return bool(query and _ASKS_HISTORY.search(query))


def fill_replaced(nodes: list[RecallNode], graph: GraphReads) -> None:
    """Set `replaces` on each returned card that is still valid and superseded others."""
    roots = {n.card_id: n for n in nodes if not n.valid_until}
    chains: dict[str, list[Card]] = {root: [] for root in roots}
    # card id -> the returned cards whose chains it is on (two may share an older value)
    frontier: dict[str, set[str]] = {root: {root} for root in roots}
    seen = {(root, root) for root in roots}
    while frontier and any(len(chain) < MAX_REPLACED for chain in chains.values()):
        edges = graph.neighbours(list(frontier), ["CONTRADICTS"])
        reached: dict[str, set[str]] = {}
        for src, _rel, dst, _weight in edges:
            here, other = (src, dst) if src in frontier else (dst, src)
            for root in frontier.get(here, ()):
                if (root, other) not in seen:
                    reached.setdefault(other, set()).add(root)
        cards = graph.get_cards(reached) if reached else {}
        frontier = {}
        for card_id, on in reached.items():
            card = cards.get(card_id)
            if card is not None and card.valid_until:  # superseded: an older value of the chain
                for root in on:
                    seen.add((root, card_id))
                    chains[root].append(card)
                frontier[card_id] = on
    for root, chain in chains.items():
        chain.sort(key=lambda c: c.valid_until or "", reverse=True)
        roots[root].replaces = [Replaced(card_id=c.id, title=c.title, content=c.content, valid_from=c.valid_from,
                                         valid_until=c.valid_until) for c in chain[:MAX_REPLACED]] or None
