"""`alaya remember` and `alaya correct`: a fact or a note stored as a card now.

A note is a one-turn session in L3 (`source_format: note`) distilled at once by its own
deterministic distiller (distill/deliberate.py), so it is indexed, resolved against what is
stored (the same note twice is one card; a note that contradicts a stored fact supersedes it)
and derived again by a rebuild. `correct` stores the corrected text as a note and supersedes
the card it corrects: the old card stays, marked no longer valid, so recall ranks the new one
first and trace still shows where the old one came from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field, field_validator

from ..distill.deliberate import NOTE_FORMAT, NOTE_IMPORTANCE
from ..distill.heuristic import trim_title
from ..errors import InputError, NotFoundError
from ..models import ORIGINS, Session, Turn, check_choice, check_id, expand_link, now_iso
from ..store.raw import CURATION_LOG
from .common import cards_of, session_id

if TYPE_CHECKING:
    from ..memory import Memory

MAX_NOTE_CHARS = 20_000
_TYPE = re.compile(r"[a-z][a-z0-9_-]{0,31}")


class Note(BaseModel):
    """What `remember` takes (the MCP `save_memory` tool's `metadata` too)."""

    text: str = Field(min_length=1, max_length=MAX_NOTE_CHARS)
    type: str | None = None
    tags: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(default_factory=list, max_length=32)
    subjects: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(default_factory=list, max_length=32)
    importance: float = Field(NOTE_IMPORTANCE, ge=0.0, le=1.0)
    agent: str | None = None
    # who stored it: `manual` (the owner, or an agent in the owner's own session); a tool call
    # from another session stores with that session's standing (tools/openclaw.py `Caller`)
    origin: str = "manual"

    @field_validator("origin")
    @classmethod
    def _known_origin(cls, value: str) -> str:
        return check_choice(value, ORIGINS, "origin")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text is empty")
        return value.strip()

    @field_validator("type")
    @classmethod
    def _tidy_type(cls, value: str | None) -> str | None:
        if value is not None and not _TYPE.fullmatch(value.strip().lower()):
            raise ValueError(f"type {value[:40]!r} is not a word (letters, digits, _ or -, up to 32)")
        return value.strip().lower() if value else None

    @field_validator("agent")
    @classmethod
    def _safe_agent(cls, value: str | None) -> str | None:
        return check_id(value, "agent id") if value else None


class Remembered(BaseModel):
    card_id: str
    session_id: str
    title: str
    merged: bool  # the same thing was stored already: the note went into that card
    superseded: list[str] = Field(default_factory=list)  # cards this note made no longer valid


def remember(memory: "Memory", note: Note) -> Remembered:
    """Store the note (L3), distill it (L2, L1) and say which card holds it."""
    stamp = now_iso()
    # the origin is part of the id: a stranger's note never lands in the owner's session of the same text
    sid = session_id("note", note.agent or "shared", note.text, *([note.origin] if note.origin != "manual" else []))
    session = Session(
        id=sid, agent_id=note.agent or "shared", started_at=stamp, title=trim_title(note.text.split("\n", 1)[0]),
        source_format=NOTE_FORMAT, turns=[Turn(id="note", role="user", name="remember", content=note.text, timestamp=stamp,
                                               origin=note.origin)],
        kind="interactive",
        metadata={"type": note.type, "tags": note.tags, "subjects": note.subjects, "importance": note.importance},
    )
    memory.ingest(session)
    report = memory.distill(sid)
    with memory.reading("remember (finding the card)") as graph:
        found = cards_of(graph, sid, ["note:note"])
        if not found:
            raise InputError("the note had nothing to store once secrets were taken out")
        card = graph.get_cards(found[:1])[found[0]]
        superseded = graph.superseded_by([card.id])
    return Remembered(card_id=card.id, session_id=sid, title=card.title, merged=bool(report.merged), superseded=superseded)


def correct(memory: "Memory", card: str, text: str, *, reason: str | None = None) -> Remembered:
    """Store `text` as what is true now and supersede `card` with it (CONTRADICTS link, the old
    card's `valid_until` set), both recorded in L3 for rebuild."""
    check_id(card, "card id")
    with memory.reading("correct (reading the card)") as graph:
        old = graph.get_cards([card]).get(card)
    if old is None:
        raise NotFoundError(f"no card {card!r}")
    new = remember(memory, Note(text=text, type=old.type, tags=old.tags, subjects=old.entities, agent=old.scope,
                                importance=max(old.importance, NOTE_IMPORTANCE)))
    if new.card_id == card:  # the correction says what the card said: nothing to supersede
        return new
    stamp = now_iso()
    with memory.writing(f"correct {card}") as graph:
        with graph:
            memory.raw.append_log(CURATION_LOG, [
                {"op": "link", "src": new.card_id, "dst": card, "rel": "CONTRADICTS", "weight": 1.0, "ts": stamp,
                 "by": "correct"},
                {"op": "supersede", "card": card, "valid_until": stamp, "by_card": new.card_id, "ts": stamp,
                 "reason": reason or "corrected"},
            ])
            graph.supersede(card, stamp, stamp)
            graph.add_links(expand_link(new.card_id, card, "CONTRADICTS", 1.0, stamp))
    return new.model_copy(update={"superseded": sorted({*new.superseded, card})})
