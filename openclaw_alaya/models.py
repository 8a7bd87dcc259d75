"""The data shapes every layer agrees on: sessions and turns (L3), cards and links (L2),
and the results handed back to callers (recall, trace).

They are pydantic models so that whatever is parsed from a file or stdin is validated once,
at the edge, and `model_dump()` is exactly the JSON the CLI prints.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from .errors import InputError

# Ids end up in file names and Cypher parameters: keep them boring. A leading
# alphanumeric rules out "..", "-x" and hidden files; no "/" rules out traversal.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$")

CORE_RELATIONS: dict[str, str] = {
    "CAUSES": "the source card is a cause of the target card",
    "CAUSED_BY": "the source card happened because of the target card",
    "DEPENDS_ON": "the source card needs or relies on the target card",
    "SIMILAR_TO": "the two cards are about the same thing (symmetric)",
    "CONTRADICTS": "the two cards state conflicting facts (symmetric)",
    "TEMPORAL_NEXT": "the target card came right after the source card in a session",
    "EXTRACTED_FROM": "the card was distilled from this session",
}
SYMMETRIC_RELATIONS = frozenset({"SIMILAR_TO", "CONTRADICTS"})
INVERSE_RELATIONS = {"CAUSES": "CAUSED_BY", "CAUSED_BY": "CAUSES"}
CARD_TYPES: dict[str, str] = {
    "concept": "what something is: a definition, a fact about a system or a person",
    "pattern": "how something is usually done: a procedure, a habit, a recipe",
    "gotcha": "a pitfall: an error, its cause and how to avoid it",
    "decision": "a choice that was made, with its reason",
    "preference": "what someone likes, wants or insists on",
    "fact": "a dated or numeric statement about the world or the user",
}


def check_id(value: str, what: str) -> str:
    """Refuse ids that are unsafe to store (InputError is a ValueError, so pydantic accepts it)."""
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        shown = repr(value)[:60]
        raise InputError(
            f"invalid {what} {shown}: use 1-128 letters, digits or . _ : @ + -, starting with a letter or digit"
        )
    return value


def _safe(what: str) -> AfterValidator:
    """A field validator that applies `check_id` with a message naming `what`."""
    return AfterValidator(lambda value: check_id(value, what))


class Turn(BaseModel):
    """One message of a session. `id` is stable across re-ingests of the same session."""

    id: Annotated[str, _safe("turn id")]
    role: str = "user"
    name: str | None = None
    content: str
    timestamp: str | None = None


class Session(BaseModel):
    """A conversation as ingested (L3). `agent_id` is the scope its cards get."""

    id: Annotated[str, _safe("session id")]
    agent_id: Annotated[str, _safe("agent id")] = "shared"
    started_at: str | None = None
    title: str | None = None
    source_format: str = "session-json"
    turns: list[Turn] = Field(default_factory=list)


class SourceRef(BaseModel):
    """Where a card's content came from: only the turns that carry it."""

    session_id: str
    turn_ids: list[str]


class CardDraft(BaseModel):
    """A card as a distiller proposes it, before it has an id or a place in the graph."""

    key: str  # distiller-local handle, used by LinkDraft; stable for the same input
    title: str
    content: str
    type: str = "concept"
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    importance: float = 0.5
    turn_ids: list[str]
    valid_from: str | None = None


class LinkDraft(BaseModel):
    """A typed relation between two drafts (by key) proposed by a distiller."""

    src: str
    dst: str
    rel: str
    weight: float = 1.0


class DistillResult(BaseModel):
    cards: list[CardDraft] = Field(default_factory=list)
    links: list[LinkDraft] = Field(default_factory=list)


class Card(BaseModel):
    """A knowledge card in L2 (and its row in L1)."""

    id: str
    title: str
    content: str
    type: str = "concept"
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    importance: float = 0.5
    scope: str = "shared"
    sources: list[SourceRef] = Field(default_factory=list)
    created_at: str
    updated_at: str
    valid_from: str | None = None
    valid_until: str | None = None
    temperature: float = 0.5
    tier: Literal["HOT", "WARM", "COLD"] = "WARM"
    access_count: int = 0
    last_accessed: str | None = None


class Link(BaseModel):
    src: str
    dst: str
    rel: str
    weight: float = 1.0
    created_at: str | None = None


class RecallNode(BaseModel):
    card_id: str
    title: str
    content: str
    score: float
    h_distance: float
    matched_rel: str | None
    rel_similarity: float
    type: str
    tags: list[str]
    tier: str
    sources: list[SourceRef]
    valid_until: str | None = None  # set when a later card contradicted this one
    superseded: bool = False  # true once valid_until has passed: recall ranks it below the valid card


class Explorable(BaseModel):
    rel: str
    count: int
    rel_sim_to_query: float


class RecallResult(BaseModel):
    nodes: list[RecallNode] = Field(default_factory=list)
    explorable: list[Explorable] = Field(default_factory=list)
    h_distance_avg: float = 0.0


class TraceSession(BaseModel):
    session_id: str
    path: str
    started_at: str | None
    turns: list[Turn]  # the card's source turns, in session order
    context: list[Turn]  # source turns plus their neighbours, for reading them in place


class TraceResult(BaseModel):
    card_id: str
    title: str
    content: str
    type: str
    sessions: list[TraceSession]
