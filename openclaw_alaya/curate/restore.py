"""`alaya restore`: a card introspect forgot, put back as it was (issue 31: forgetting that is
reversible until purged).

Introspect's forget step (maintenance/forget.py, maintenance/batch.py) saves a copy of each
card before it takes it out of L2 and L1 (`copies_of`, store/forgotten.py): the card with every
field (usage, tier and validity too), its card → card edges with weights and reasons, and the
merged-away ids that resolved to it. `restore` puts the copy back under one write-lock hold —
in the order of every deliberate write: the `{"op": "restore"}` record in `raw/curation.jsonl`
(L3, so `alaya rebuild` keeps the card), the card, its entities, its EXTRACTED_FROM edges and
its edges to cards that still exist (L2, one transaction; an edge to a card still forgotten
goes into that card's copy: `hand_over`), its L1 row (its vector computed before the lock),
and only then is the copy deleted. A kill at any point leaves the card
forgotten with its copy, or back (a copy whose card is in L2 is stale: not listed, purged with
the others). A restored card is the owner's choice: introspect never forgets it again by age
(`restored`).

The copies last `introspect.forget_purge_after_days`; then `purge_expired` deletes them and the
forget is for good (a rebuild still leaves the card out). An owner's forget deletes the copy at
once (curate/purge.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..errors import InputError, NotFoundError
from ..models import Card, Link, check_id, index_row, index_text, now_iso
from ..store import forgotten, tombstones
from ..store.raw import CURATION_LOG

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

Copy = dict[str, Any]


class Restored(BaseModel):
    cards: list[dict[str, str]] = Field(default_factory=list)  # id and title of each card put back
    links: int = 0  # edges put back (those to cards still forgotten wait in their copies)


def copies_of(graph: "CardGraph", reasons: dict[str, str], stamp: str) -> list[Copy]:
    """What restoring each of these cards needs, read before they are removed."""
    cards = graph.get_cards(list(reasons))
    notes: dict[tuple[str, str, str], str] = {}
    edges = graph.card_edges(list(cards), reasons=notes)
    forwards = graph.forwards_to(list(cards))
    return [{"card": card.model_dump(), "reason": reasons[cid], "forgotten_at": stamp,
             "edges": [{"src": e.src, "rel": e.rel, "dst": e.dst, "weight": e.weight, "created_at": e.created_at,
                        "reason": notes.get((e.src, e.rel, e.dst))} for e in edges if cid in (e.src, e.dst)],
             "forwards": sorted(old for old, target in forwards.items() if target == cid)}
            for cid, card in cards.items()]


def put_back(graph: "CardGraph", copies: list[Copy]) -> list[Card]:
    """The copies' cards in L2 again, with what linked them (a session or card gone meanwhile
    is left out: the edges match existing nodes only)."""
    cards = [Card.model_validate(c["card"]) for c in copies]
    graph.upsert_cards(cards)
    graph.link_to_sessions([{"card": card.id, "session": s.session_id, "turns": s.turn_ids}
                            for card in cards for s in card.sources])
    graph.add_links([Link.model_validate(e) for c in copies for e in c.get("edges") or []])
    graph.forward({old: c["card"]["id"] for c in copies for old in c.get("forwards") or []})
    return cards


def hand_over(back: list[Copy], waiting: dict[str, Copy]) -> list[str]:
    """The edges of cards put back that lead to cards still forgotten (`waiting`: their copies,
    by id) go into those copies, so restoring one later brings the edge back too (it was read
    off the graph after this card had left it). The ids of the copies that changed."""
    changed = set()
    for copy in back:
        for edge in copy.get("edges") or []:
            other = waiting.get(edge["dst"] if edge["src"] == copy["card"]["id"] else edge["src"])
            if other is not None and edge not in other.setdefault("edges", []):
                other["edges"].append(edge)
                changed.add(other["card"]["id"])
    return sorted(changed)


def fates(memory: "Memory") -> dict[str, str]:
    """Card → the last of "forget" (introspect's) and "restore" the curation log holds for it."""
    return {str(r["card"]): str(r["op"]) for r in memory.raw.read_log(CURATION_LOG)
            if r.get("op") in ("forget", "restore") and r.get("card")}


def restored(memory: "Memory") -> set[str]:
    """Cards put back by `restore`: the owner wants them, introspect spares them from then on."""
    return {cid for cid, op in fates(memory).items() if op == "restore"}


def restore(memory: "Memory", ids: list[str]) -> Restored:
    ids = list(dict.fromkeys(ids))
    for cid in ids:
        check_id(cid, "card id")
    if not ids:
        raise InputError("name at least one card to restore (`alaya restore --list` shows them)")
    with memory.reading("restore (finding the copies)") as graph:
        copies = _restorable(memory, graph, ids)
    cards = [Card.model_validate(c["card"]) for c in copies.values()]
    vectors = memory.embedder.embed([index_text(c) for c in cards])  # slow work before the lock
    with memory.writing(f"restore {len(ids)} cards") as graph:
        with graph:
            if _restorable(memory, graph, ids).keys() != copies.keys():  # an owner's forget or a purge meanwhile
                raise NotFoundError("the saved copies changed meanwhile; run `alaya restore` again")
            stamp = now_iso()
            memory.raw.append_log(CURATION_LOG, [{"op": "restore", "card": cid, "ts": stamp,
                                                  "reason": copies[cid].get("reason")} for cid in ids])
            put_back(graph, list(copies.values()))
            edges = {(e["src"], e["rel"], e["dst"]) for c in copies.values() for e in c.get("edges") or []}
            ends = {end for src, _rel, dst in edges for end in (src, dst)}
            there = graph.present_ids(sorted(ends))
            links = sum(1 for src, _rel, dst in edges if src in there and dst in there)
            waiting = forgotten.load(memory.dirs.state, sorted(ends - set(ids)))
            forgotten.save(memory.dirs.state, [waiting[cid] for cid in hand_over(list(copies.values()), waiting)])
        memory.index.upsert_cards([index_row(c) for c in cards], vectors)
        forgotten.erase(memory.dirs.state, ids)
    return Restored(cards=[{"id": c.id, "title": c.title} for c in cards], links=links)


def _restorable(memory: "Memory", graph: "CardGraph", ids: list[str]) -> dict[str, Copy]:
    """The copies of `ids`; a one-line NotFoundError naming the first that has none, and why."""
    copies = forgotten.load(memory.dirs.state, ids)
    live = graph.present_ids(ids)
    for cid in ids:
        if cid in live:
            raise InputError(f"card {cid!r} is not forgotten")
        if cid not in copies:
            raise NotFoundError(_why_none(memory, cid))
    return copies


def _why_none(memory: "Memory", cid: str) -> str:
    if cid in tombstones.forgotten(memory.raw, "card"):
        return f"card {cid!r} was forgotten on purpose: nothing of it is kept to restore"
    if fates(memory).get(cid) == "forget":
        return (f"card {cid!r} is gone for good: its saved copy was purged "
                f"(introspect.forget_purge_after_days, {memory.config.introspect.forget_purge_after_days:g} days)")
    return f"no forgotten card {cid!r} (`alaya restore --list` shows what can be restored)"


def listing(memory: "Memory") -> list[dict[str, Any]]:
    """What can be restored, oldest forget first: id, title, reason, when, and until when."""
    copies = forgotten.all_copies(memory.dirs.state)
    with memory.reading("restore --list") as graph:
        live = graph.present_ids([c["card"]["id"] for c in copies])
    days = memory.config.introspect.forget_purge_after_days
    return [{"card": c["card"]["id"], "title": c["card"].get("title", ""), "reason": c.get("reason"),
             "forgotten_at": c.get("forgotten_at"), "restorable_until": until(c.get("forgotten_at"), days)}
            for c in copies if c["card"]["id"] not in live]


def until(stamp: str | None, days: float) -> str | None:
    """When a copy saved at `stamp` is purged (ISO, UTC)."""
    try:
        moment = datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return (moment + timedelta(days=days)).isoformat(timespec="seconds")


def purge_expired(memory: "Memory", moment: datetime, *, dry_run: bool = False) -> list[str]:
    """Delete the copies older than the purge window, and stale ones: a card in L2 whose last
    logged fate is not a forget (a restore or a forget killed before its log line); one whose
    log says forgotten keeps its copy (killed between the log line and L2's commit: a rebuild
    would drop the card, the copy can still bring it back). The ids whose copy went (or would)."""
    days = memory.config.introspect.forget_purge_after_days
    stamp = moment.isoformat(timespec="seconds")
    copies = forgotten.all_copies(memory.dirs.state)
    due = [c["card"]["id"] for c in copies if (until(c.get("forgotten_at"), days) or "") <= stamp]
    if dry_run or not copies:
        return due
    ids = [c["card"]["id"] for c in copies]
    with memory.reading("introspect forget (saved copies)") as graph:
        stale = _stale(memory, graph, ids)
    if due or stale:  # the write hold only when there is something to delete
        with memory.writing("introspect forget (purging saved copies)", change_graph=False) as graph:
            forgotten.erase(memory.dirs.state, sorted(set(due) | _stale(memory, graph, ids)))
    return due


def _stale(memory: "Memory", graph: "CardGraph", ids: list[str]) -> set[str]:
    fate = fates(memory)
    return {cid for cid in graph.present_ids(ids) if fate.get(cid) != "forget"}
