"""The conversation's own decision (issue 35): "which database did we pick?" is answered by the
decision that closed the discussion of the database ("Kuzu for the card graph, LanceDB for …"),
and that card rarely says "database" or "pick": the cards that match are the options weighed
before it ("Kuzu allows one read-write opener … per database file"). So for a question a decision
answers (intent.py), the nearest decision along the session (`TEMPORAL_NEXT`, either way, up to
`REACH` cards) from one of the best entries joins at that entry's score when it names a thing the
entry names and the question does not. Things the question names weigh in its words already
(LoCoMo's questions name the person, whose every card would qualify). Decisions only: a
preference is said on its own and names its object ("I prefer pnpm over npm"), and joining the
nearest preference put the demo's indentation rule, which names TypeScript as the matching setup
card does, over pnpm for "which package manager?".
"""

from __future__ import annotations

from typing import Protocol

from ..models import Card
from .context import SESSION_NEXT

DECISION = "decision"
ENTRIES = 3  # the best entries whose stances join
REACH = 6  # cards along the session: the demo's Kuzu decision is four after the card that matches


class _Reads(Protocol):
    def get_cards(self, ids: list[str]) -> dict[str, Card]: ...
    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]: ...


def _along(graph: _Reads, starts: list[str]) -> dict[str, dict[str, int]]:
    """Entry → {card: how many cards along its session from the entry}, up to REACH."""
    seen = {s: {s: 0} for s in starts}
    frontier = {(s, s) for s in starts}  # (card, the entry it was reached from)
    for hop in range(1, REACH + 1):
        by_card: dict[str, set[str]] = {}
        for card, entry in frontier:
            by_card.setdefault(card, set()).add(entry)
        reached = set()
        for src, _rel, dst, _w in graph.neighbours(list(by_card), [SESSION_NEXT]):
            for entry in by_card.get(src, ()):
                if dst not in seen[entry]:
                    seen[entry][dst] = hop
                    reached.add((dst, entry))
        frontier = reached
        if not frontier:
            break
    return seen


def session_decisions(graph: _Reads, scores: dict[str, float], question: str) -> dict[str, tuple[float, str]]:
    """Card id → (score, the entry it answers for) for the nearest decision along each of the
    `ENTRIES` best cards' sessions that names what the entry names and the question does not."""
    best = sorted(scores, key=scores.__getitem__, reverse=True)[:ENTRIES]
    entries = graph.get_cards(best)
    asked = question.lower()
    named = {cid: {e.lower() for e in card.entities if e.lower() not in asked} for cid, card in entries.items()}
    starts = [cid for cid in best if named.get(cid)]
    if not starts:
        return {}
    along = _along(graph, starts)
    cards = graph.get_cards(list({cid for reached in along.values() for cid in reached} - set(starts)))
    found: dict[str, tuple[float, str]] = {}
    for entry in starts:
        decisions = [(hops, cid) for cid, hops in along[entry].items() if cid in cards
                   and cards[cid].type == DECISION and named[entry] & {e.lower() for e in cards[cid].entities}]
        nearest = min((hops for hops, _ in decisions), default=None)
        for hops, cid in decisions:
            if hops == nearest and scores[entry] > found.get(cid, (0.0, ""))[0]:
                found[cid] = (scores[entry], entry)
    return found
