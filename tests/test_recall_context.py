"""Session context in recall (issue 18, recall/context.py): the turn right after the one that
matches a question's words is found with it, though it shares none of them, and only plain
queries read it so."""

from __future__ import annotations

from helpers import session_json

from openclaw_alaya.recall.context import SESSION_NEXT, session_neighbours

MATCH = "Last night we watched the Perseid meteor shower from the lake with the whole family."
ANSWER = "Honestly I felt tiny and in awe of the universe, lying there on the blanket."
OTHERS = [
    "The quarterly budget review moves to Thursday because finance needs more time.",
    "Our billing service now retries webhook deliveries three times with backoff.",
]


def _ids(memory) -> dict[str, str]:
    memory.ingest(session_json("s-sky", [("user", MATCH), ("user", ANSWER)]))
    memory.ingest(session_json("s-work", [("user", t) for t in OTHERS]))
    memory.distill()
    return {text: memory.recall(text, top_k=1).nodes[0].card_id for text in (MATCH, ANSWER)}


def test_the_next_turn_comes_with_the_match(memory):
    ids = _ids(memory)
    nodes = memory.recall("Perseid meteor shower").nodes
    assert [n.card_id for n in nodes[:2]] == [ids[MATCH], ids[ANSWER]]
    assert nodes[1].matched_rel == SESSION_NEXT and nodes[1].score < nodes[0].score


def test_off_and_for_structured_recall_the_neighbour_stays_out(memory):
    ids = _ids(memory)
    memory.config.recall.context_share = 0
    assert ids[ANSWER] not in {n.card_id for n in memory.recall("Perseid meteor shower").nodes}
    memory.config.recall.context_share = 0.5
    walked = memory.recall("Perseid meteor shower", relations=["CAUSED_BY"], depth=1).nodes
    assert ids[ANSWER] not in {n.card_id for n in walked}  # a walk follows the relations it names


class _Chain:
    """a — b — c — d, as TEMPORAL_NEXT edges seen from either end."""

    order = ["a", "b", "c", "d"]

    def neighbours(self, ids, relations):
        assert relations == [SESSION_NEXT]
        pairs = list(zip(self.order, self.order[1:]))
        return [(s, SESSION_NEXT, d, 1.0) for x, y in pairs for s, d in ((x, y), (y, x)) if s in ids]


def test_the_best_neighbour_gives_the_share_and_only_the_best_entries_give():
    scores = {"a": 1.0, "c": 0.4, "d": 0.2}
    # b neighbours a and c: a's share wins; d is only c's (d itself is not among the best two)
    assert session_neighbours(_Chain(), scores, parents=2, share=0.5) == {"b": (0.5, "a"), "d": (0.2, "c")}
    assert session_neighbours(_Chain(), scores, parents=0, share=0.5) == {}


def test_the_walk_goes_on_at_a_smaller_share_and_stops_at_other_entries():
    scores = {"a": 1.0}
    # c is two cards from a: 1.0 × 0.5 × 0.6; d is past the reach
    assert session_neighbours(_Chain(), scores, parents=1, share=0.5, reach=2, further=0.6) == {
        "b": (0.5, "a"), "c": (0.3, "a")}
    # c is an entry of its own among the best: a's walk stops there and c gives its own share
    near = session_neighbours(_Chain(), {"a": 1.0, "c": 0.8}, parents=2, share=0.5, reach=3, further=0.6)
    assert near == {"b": (0.5, "a"), "d": (0.4, "c")}
