"""Session context (issue 18): a conversation is read turn by turn, and what answers a question
often sits in the turn right before or after the one that shares its words ("How did you feel
watching the meteor shower?" — "Tiny, and in awe of the universe."). So the cards next to the
best entries in their session (`TEMPORAL_NEXT`, either way) gain a share of that entry's
score: a card that matches and sits next to another match rises, one that does not match
joins below its neighbour. Measured on the LoCoMo tune half and on bench/ranking.py, adding the
share beat keeping the better of the two scores and beat summing both neighbours' shares.
The distiller writes a question/answer card and then the reply's own card, so the turn after a
reply is often two cards along: the walk goes on past the first card at a smaller share
(`recall.context_reach`, `context_further`).

A best entry with no session neighbour at all (a note stored with `remember`, a workspace line,
a one-card session) is its own context (issue 35): it gains the share of its own score, as a card
whose neighbour matches as well as it does. Without that, every card of a conversation could
outscore the note that answers a question word for word ("db-stage-2" ranked the just-remembered
fact third, behind two incident cards raised by their neighbours). Half its own score (`ALONE`):
on bench/ranking.py's tune half hit@1 was 0.818 at 0.25, 0.5 and 1.0, and 0.5 kept the 67
earlier questions at or above their figures; 1.0 let a short note that shares one word
("staging database") outrank the decision that answers "which graph database did we choose".
"""

from __future__ import annotations

import heapq
from typing import Protocol

SESSION_NEXT = "TEMPORAL_NEXT"
ALONE = 0.5  # a lone entry's context per its own score (issue 35): measured on bench/ranking.py, see below


class _Edges(Protocol):
    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]: ...


def session_neighbours(graph: _Edges, scores: dict[str, float], parents: int, share: float,
                       reach: int = 1, further: float = 0.0) -> dict[str, tuple[float, str]]:
    """Card id → (score, the entry it neighbours) for the session neighbours of the `parents`
    best-scored cards: `share` × that entry's score for the card next to it, and × `further`
    more for each card further along, up to `reach` cards away; the best entry winning. Past
    the first card the walk stops at the other best entries, which give their own shares."""
    if parents <= 0 or share <= 0 or not scores:
        return {}
    best = heapq.nlargest(parents, scores, key=scores.__getitem__)
    entries = set(best)
    found: dict[str, tuple[float, str]] = {}
    frontier = {cid: (scores[cid], cid) for cid in best}  # card → (score it passes on, its entry)
    factor = share
    for hop in range(reach):
        reached: dict[str, tuple[float, str]] = {}
        edges = graph.neighbours(list(frontier), [SESSION_NEXT])
        if hop == 0:
            linked = {src for src, *_ in edges} | {dst for _, _, dst, _ in edges}
            reached.update({cid: (scores[cid] * share * ALONE, cid) for cid in best if cid not in linked})
        for src, _rel, dst, _weight in edges:
            carried, entry = frontier[src]
            if hop and dst in entries:  # back at an entry: it gives its own share
                continue
            score = carried * factor
            if score > max(found.get(dst, (0.0, ""))[0], reached.get(dst, (0.0, ""))[0]):
                reached[dst] = (score, entry)
        found.update(reached)
        frontier, factor = reached, further
        if not frontier or factor <= 0:
            break
    return found
