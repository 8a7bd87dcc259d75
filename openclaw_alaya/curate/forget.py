"""`alaya forget` and `alaya purge`: taking memory out on purpose.

By card id, by session (and that session is never captured again, as `openclaw memory forget`
does), by criteria (`purge`: subject, relation, date — all that are given must hold; none is
refused, it would forget everything) or by query (the cards recall ranks first that say one of its words; `--dry-run`
shows them first). What goes is written as tombstones (what, when, why, and a digest of the
text, never the text); curate/purge.py carries them out, crash-safe, from every file and every
derived text: the cards out of L2 and L1 and their context copies out of L3; `purge_raw` also
blanks the source turns in the session files (a whole session's files are deleted). A rebuild,
a re-capture or an import does not bring anything back (store/tombstones.py).

A card introspect forgot is out of L2 but its copy is kept for `alaya restore` (issue 31,
curate/restore.py): by id, by session and by criteria the owner's forget finds those copies
too, and curate/purge.py deletes them with the rest, so the text lingers nowhere. (A query
finds only what recall finds: cards in L2.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..distill.deliberate import NOTE_FORMAT
from ..errors import InputError, NotFoundError
from ..models import Card, RecallNode, check_id, now_iso
from ..store import forgotten, tombstones
from ..text import content_words
from .purge import carry_out

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

MAX_QUERY_CARDS = 50


class Criteria(BaseModel):
    """What `purge` matches (the TrulyMEM `memory_purge` criteria)."""

    subject_contains: str | None = Field(None, min_length=1, max_length=200)
    relation_type: str | None = Field(None, min_length=1, max_length=64)
    time_before: str | None = Field(None, min_length=4, max_length=40)

    def given(self) -> bool:
        return any(v is not None for v in (self.subject_contains, self.relation_type, self.time_before))


class Forgotten(BaseModel):
    dry_run: bool
    cards: list[dict[str, str]] = Field(default_factory=list)  # id and title of each card (to be) forgotten
    sessions: list[str] = Field(default_factory=list)
    purged_turns: int = 0


def forget_cards(memory: "Memory", ids: list[str], *, reason: str | None = None, purge_raw: bool = False,
                 dry_run: bool = False) -> Forgotten:
    for cid in ids:
        check_id(cid, "card id")
    if not ids:
        raise InputError("name at least one card to forget")
    with memory.reading("forget (finding the cards)") as graph:
        cards = graph.get_cards(ids)
    cards |= _saved(memory, [cid for cid in ids if cid not in cards])
    missing = [cid for cid in ids if cid not in cards]
    if missing:
        raise NotFoundError(f"no card {missing[0]!r}")
    return _forget(memory, list(cards.values()), reason=reason or "forgotten by request", purge_raw=purge_raw,
                   dry_run=dry_run, notes=_notes_of(memory, cards.values()))


def forget_session(memory: "Memory", session_id: str, *, reason: str | None = None, purge_raw: bool = False,
                   dry_run: bool = False) -> Forgotten:
    """The session's cards (those it alone is the source of; others lose it as a source) and the
    session itself; its transcript is refused from now on."""
    check_id(session_id, "session id")
    with memory.reading("forget (finding the session)") as graph:
        known = graph.get_session(session_id)
        ids = graph.session_card_ids(session_id)
        cards = graph.get_cards(ids)
    if known is None and memory.raw.find(session_id) is None:
        raise NotFoundError(f"no session {session_id!r}")
    saved = [Card.model_validate(c["card"]) for c in forgotten.all_copies(memory.dirs.state)]
    only = [c for c in cards.values() if {s.session_id for s in c.sources} <= {session_id}]
    only += [c for c in saved if {s.session_id for s in c.sources} == {session_id}]
    report = _forget(memory, only, reason=reason or "session forgotten by request", purge_raw=False, dry_run=dry_run,
                     session=session_id, purge_session=purge_raw)
    return report


def purge(memory: "Memory", criteria: Criteria, *, reason: str | None = None, purge_raw: bool = False,
          dry_run: bool = False) -> Forgotten:
    if not criteria.given():
        raise InputError("purge needs at least one criterion (subject_contains, relation_type, time_before): "
                         "without one it would forget everything")
    with memory.reading("purge (matching cards)") as graph:
        cards = _matching(memory, graph, criteria)
    return _forget(memory, cards, reason=reason or _purge_reason(criteria), purge_raw=purge_raw, dry_run=dry_run,
                   notes=_notes_of(memory, cards))


def _purge_reason(criteria: Criteria) -> str:
    """The tombstone's reason for a purge: which criteria, never the subject's words (the
    tombstone outlives the purge, and those words are what was meant to go)."""
    given = criteria.model_dump(exclude_none=True)
    return "purged by " + ", ".join(key if key == "subject_contains" else f"{key} {value}" for key, value in given.items())


def forget_query(memory: "Memory", query: str, *, limit: int = 5, reason: str | None = None, purge_raw: bool = False,
                 dry_run: bool = False, scope: str | None = None) -> Forgotten:
    if not query.strip():
        raise InputError("the query is empty")
    if not 1 <= limit <= MAX_QUERY_CARDS:
        raise InputError(f"limit must be 1-{MAX_QUERY_CARDS}")
    found = memory.recall(query, top_k=limit, depth=0, scope=scope, log_access=False)  # no use (issue 31)
    asked = set(content_words(query, stemming=True))
    ids = [n.card_id for n in found.nodes if _says_any(asked, n)][:limit]
    if not ids:
        return Forgotten(dry_run=dry_run)
    return forget_cards(memory, ids, reason=reason or "forgotten by query", purge_raw=purge_raw,
                        dry_run=dry_run)


def _says_any(asked: set[str], node: RecallNode) -> bool:
    """The relevance floor of a forget by query (issue 33): the card says one of the query's
    content words (stemmed; CJK bigrams) in its title, text, tags or entities. Recall ranks
    every card by similarity, so without it a dry run listed the whole store as candidates,
    and the model was told to forget by those ids."""
    said = f"{node.title}\n{node.content}\n{' '.join(node.tags)}\n{' '.join(node.entities)}"
    return bool(asked & set(content_words(said, stemming=True)))


def _notes_of(memory: "Memory", cards: "Iterable[Card]") -> list[str]:
    """The note sessions (`alaya remember`, memory_store) whose every card is among `cards`.
    Such a session holds nothing but the note, and its title is the note's text: left in L2, the
    forgotten words came back in session start's "Recent sessions" (issue 33), so it goes too."""
    going = {c.id: c for c in cards}
    sids = sorted({s.session_id for c in going.values() for s in c.sources})
    with memory.reading("forget (finding notes)") as graph:
        rows = graph.get_sessions(sids)
        return [sid for sid in sids if (rows.get(sid) or {}).get("source_format") == NOTE_FORMAT
                and set(graph.session_card_ids(sid)) <= going.keys()]


def _forget(memory: "Memory", cards: list[Card], *, reason: str, purge_raw: bool, dry_run: bool,
            session: str | None = None, purge_session: bool = False, notes: list[str] = ()) -> Forgotten:
    listed = [{"id": c.id, "title": c.title} for c in cards]
    report = Forgotten(dry_run=dry_run, cards=listed, sessions=[session] if session else [])
    if dry_run or not (cards or session):
        return report
    memory.raw.refuse_linked([*([session] if session else []), *notes], cards)
    stamp = now_iso()
    records = [{"kind": "card", "id": c.id, "ts": stamp, "reason": reason, "type": c.type, "digest": tombstones.digest(c.content),
                "sources": [s.model_dump() for s in c.sources], "purged_raw": purge_raw} for c in cards]
    if session:
        records.append({"kind": "session", "id": session, "ts": stamp, "reason": reason, "purged_raw": purge_session})
    # a note's turn is blanked by its cards' records when purge_raw: the session record only takes it out of L2
    records += [{"kind": "session", "id": sid, "ts": stamp, "reason": reason, "purged_raw": False} for sid in notes]
    operation = f"forget {len(cards)} cards" + (f" and session {session}" if session else "")
    report.purged_turns = carry_out(memory, records, operation)
    return report


def _saved(memory: "Memory", ids: list[str]) -> dict[str, Card]:
    """The cards of `ids` whose saved copy is kept (introspect forgot them)."""
    return {cid: Card.model_validate(c["card"]) for cid, c in forgotten.load(memory.dirs.state, ids).items()}


def _matching(memory: "Memory", graph: "CardGraph", criteria: Criteria) -> list[Card]:
    """Cards meeting every given criterion: an entity or the title containing the subject
    (ignoring case); an edge of the relation (or a triplet of it); dated before the time. In L2,
    and among the saved copies of cards introspect forgot."""
    from ..distill.dates import iso_of, parse_when
    from ..models import normalise_relation

    before = None
    if criteria.time_before:
        before = iso_of(parse_when(criteria.time_before))
        if before is None:
            raise InputError(f"time_before {criteria.time_before!r} is not a date (e.g. 2026-11-01)")
    subject = criteria.subject_contains.lower() if criteria.subject_contains else None
    relation = normalise_relation(criteria.relation_type) if criteria.relation_type else None
    ids = graph.cards_matching_purge(subject=subject, before=before, relation=relation)
    saved = [c for c in forgotten.all_copies(memory.dirs.state) if _copy_matches(c, subject, before, relation)]
    return [*graph.get_cards(ids).values(), *(Card.model_validate(c["card"]) for c in saved)]


def _copy_matches(copy: dict[str, Any], subject: str | None, before: str | None, relation: str | None) -> bool:
    """`cards_matching_purge`'s criteria on a saved copy (its card and its edges)."""
    card = copy["card"]
    named = [card.get("title") or "", *(card.get("entities") or [])]
    return ((subject is None or any(subject in name.lower() for name in named))
            and (before is None or str(card.get("valid_from") or card.get("created_at") or "") < before)
            and (relation is None or f"rel:{relation}" in (card.get("tags") or [])
                 or any(e.get("rel") == relation for e in copy.get("edges") or [])))
