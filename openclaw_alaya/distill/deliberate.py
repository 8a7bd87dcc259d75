"""Distillers for what was stored on purpose: a note (`alaya remember`) and a commit of
triplets (`alaya commit`). Both are sessions in L3 like a conversation, so a rebuild derives
their cards again; unlike a conversation, what the card says was decided by whoever stored it,
so these distillers only shape it, deterministically, whatever `distill.llm_provider` says.

`plan.prepare` picks them by the session's `source_format`.
"""

from __future__ import annotations

import re
from typing import Any

from ..models import CardDraft, DistillResult, Session, Turn
from .dates import iso_of, parse_when
from .entities import extract_entities
from .heuristic import classify, trim_title

NOTE_FORMAT = "note"
TRIPLETS_FORMAT = "triplets"
NOTE_IMPORTANCE = 0.7  # above what a conversation's card starts with: someone asked to keep it
TRIPLET_TAG = "triplet"


def relation_words(relation: str) -> str:
    """`WORKS_AT` → `works at`: how a triplet reads as a sentence."""
    return relation.replace("_", " ").lower()


def triplet_text(triplet: dict[str, Any]) -> str:
    return f"{triplet['subject']} {relation_words(triplet['relation'])} {triplet['object']}"


class NoteDistiller:
    """One card per note turn, as written: type, tags, subjects and importance as given."""

    name = "note"

    def distill(self, session: Session, start: int = 0) -> DistillResult:
        meta = session.metadata or {}
        cards = []
        for turn in session.turns[start:]:
            text = turn.content.strip()
            if not text:
                continue
            given = meta.get("type")
            kind = given if isinstance(given, str) and given else classify(text, bool(re.search(r"\d", text)), False)
            subjects = [str(s) for s in meta.get("subjects") or []]
            entities = list(dict.fromkeys(subjects + extract_entities(text, set(subjects))))
            cards.append(CardDraft(
                key=f"note:{turn.id}", title=trim_title(text.split("\n", 1)[0]), content=text,
                type=kind, tags=[str(t) for t in meta.get("tags") or []],
                entities=entities, importance=float(meta.get("importance", NOTE_IMPORTANCE)),
                turn_ids=[turn.id], valid_from=meta.get("valid_from"),
            ))
        return DistillResult(cards=cards)


class TripletDistiller:
    """One `fact` card per triplet: the sentence it reads as, its two entities (subject first),
    tagged with its relation so that a later contradicting triplet finds it
    (curate/triplets.py)."""

    name = "triplets"

    def distill(self, session: Session, start: int = 0) -> DistillResult:
        meta = session.metadata or {}
        triplets = meta.get("triplets") or []
        when = tag_date(meta.get("temporal_tag"))
        cards = []
        for turn in session.turns[start:]:
            triplet = _triplet_of(turn, triplets)
            if triplet is None:
                continue
            text = triplet_text(triplet)
            tag = meta.get("temporal_tag")
            cards.append(CardDraft(
                key=f"triplet:{turn.id}", title=trim_title(text), content=text + (f" (as of {tag})" if tag else "."),
                type="fact", tags=[TRIPLET_TAG, relation_tag(triplet["relation"])],
                entities=list(dict.fromkeys([triplet["subject"], triplet["object"]])),
                importance=float(triplet.get("confidence", 1.0)), turn_ids=[turn.id], valid_from=when,
            ))
        return DistillResult(cards=cards)


def tag_date(tag: str | None) -> str | None:
    """A commit's `temporal_tag` as a date where it is one: `2026`, `2026-11`, or any date
    `parse_when` reads; None for other text."""
    if not tag:
        return None
    found = re.fullmatch(r"\s*(\d{4})(?:-(\d{1,2}))?\s*", tag)
    if found and 1 <= int(found.group(2) or 1) <= 12:
        return f"{found.group(1)}-{int(found.group(2) or 1):02d}-01"
    return iso_of(parse_when(tag))


def relation_tag(relation: str) -> str:
    return f"rel:{relation}"


def _triplet_of(turn: Turn, triplets: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The triplet a turn `t<i>` stands for (turns are what trace shows; metadata the structure)."""
    if not turn.id.startswith("t") or not turn.id[1:].isdigit():
        return None
    at = int(turn.id[1:])
    return triplets[at] if at < len(triplets) else None


_BY_FORMAT = {NOTE_FORMAT: NoteDistiller(), TRIPLETS_FORMAT: TripletDistiller()}


def distiller_for(session: Session, default: Any) -> Any:
    """The distiller a session needs: its own for notes and triplets, `default` otherwise."""
    return _BY_FORMAT.get(session.source_format, default)

