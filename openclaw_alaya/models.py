"""The data shapes every layer agrees on: sessions and turns (L3), cards and links (L2),
relation names, and the results handed back to callers (ingest, distill, link, recall, trace,
get, list).

They are pydantic models so that whatever is parsed from a file or stdin is validated once,
at the edge, and `model_dump()` is exactly the JSON the CLI prints.
"""

from __future__ import annotations

import hashlib
import re
from datetime import timezone
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_serializer

from . import clock
from .errors import InputError

# Ids end up in file names and Cypher parameters: keep them boring. A leading
# alphanumeric rules out "..", "-x" and hidden files; no "/" rules out traversal. Always
# `fullmatch`: `$` would let a trailing newline through ("evil\n" → a file named `evil\n.json`).
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")


class Shape(BaseModel):
    """The base of the shapes below. Each builds its validator on first use (`defer_build`):
    a process pays only for the shapes it uses, about 25 ms less per cold call."""

    model_config = ConfigDict(defer_build=True)


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

# Where a turn came from (docs/provenance.md). Most trusted first: a card distilled from
# several turns gets the least trusted of their origins (`least_trusted`).
ORIGINS = ("manual", "owner", "agent", "system", "untrusted")
# Cards of these origins may be injected on their own at session start; the others are reached
# only by asking (recall, memory_search), with their origin shown.
INJECTABLE_ORIGINS = ("manual", "owner", "agent")
# What the owner stated: these origins, or none recorded (a card stored before provenance may
# be either). Never forgotten by age (maintenance/forget.py); a standing preference or decision
# of the integrated summary (bridge/summary.py).
OWNER_STATED = frozenset({"owner", "manual", None, ""})
# What kind of run produced a session or a turn.
SESSION_KINDS = ("interactive", "cron", "heartbeat", "subagent", "import")


def check_choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    """`value` when it is one of `allowed`, else an InputError naming the allowed values."""
    if not isinstance(value, str) or value not in allowed:
        raise InputError(f"unknown {what} {str(value)[:40]!r}: use one of {', '.join(allowed)}")
    return value


def least_trusted(origins: "list[str | None]") -> str | None:
    """The least trusted of these origins (None: none known, a turn stored before provenance)."""
    known = [o for o in origins if o in ORIGINS]
    return max(known, key=ORIGINS.index) if known else None


def most_trusted(origins: "list[str | None]") -> str | None:
    known = [o for o in origins if o in ORIGINS]
    return min(known, key=ORIGINS.index) if known else None


def trust_class(origin: str | None) -> str:
    """`injectable` (manual, owner, agent, and cards stored before provenance) or `reachable`
    (system, untrusted). Cards are merged only within a class, and a `reachable` card never
    supersedes an `injectable` one: a stranger cannot rewrite or retract what the owner said."""
    return "reachable" if origin in ("system", "untrusted") else "injectable"


def may_supersede(older: str | None, newer: str | None) -> bool:
    return trust_class(newer) == "injectable" or trust_class(older) == "reachable"


def now_iso() -> str:
    """The time stamps stored everywhere: UTC, to the second."""
    return clock.now().astimezone(timezone.utc).isoformat(timespec="seconds")


def query_key(query: str | None, concepts: list[str] | None = None) -> str | None:
    """A recall's question as a short key (the access log's `q`): case, spacing and the
    concepts' order do not change it, so "distinct queries" can be counted without storing the
    words; None when there is no question (a walk from given cards)."""
    words = " ".join((query or "").split()).casefold()
    named = sorted({" ".join(c.split()).casefold() for c in concepts or [] if c.strip()})
    if not words and not named:
        return None
    return hashlib.sha256("\x00".join([words, *named]).encode("utf-8", "replace")).hexdigest()[:16]


def check_id(value: str, what: str) -> str:
    """Refuse ids that are unsafe to store (InputError is a ValueError, so pydantic accepts it)."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        shown = repr(value)[:60]
        raise InputError(
            f"invalid {what} {shown}: use 1-128 letters, digits or . _ : @ + -, starting with a letter or digit"
        )
    return value


def _safe(what: str) -> AfterValidator:
    """A field validator that applies `check_id` with a message naming `what`."""
    return AfterValidator(lambda value: check_id(value, what))


def _one_of(allowed: tuple[str, ...], what: str) -> AfterValidator:
    return AfterValidator(lambda value: None if value is None else check_choice(value, allowed, what))


Origin = Annotated[str | None, _one_of(ORIGINS, "origin")]
SessionKind = Annotated[str | None, _one_of(SESSION_KINDS, "session kind")]


class Turn(Shape):
    """One message of a session. `id` is stable across re-ingests of the same session."""

    id: Annotated[str, _safe("turn id")]
    role: str = "user"
    name: str | None = None
    content: str
    timestamp: str | None = None
    # provenance (docs/provenance.md): None on turns stored before it was recorded
    origin: Origin = None
    kind: SessionKind = None  # the kind of run that said it (a heartbeat in an interactive session)
    sender: str | None = None  # the channel's sender id, when known
    # what the seed session format gives per turn, kept in L3 where present (None: not given)
    tokens: int | None = Field(None, ge=0)
    tool_calls: list[Any] | None = None


class Session(Shape):
    """A conversation as ingested (L3). `agent_id` is the scope its cards get."""

    id: Annotated[str, _safe("session id")]
    agent_id: Annotated[str, _safe("agent id")] = "shared"
    started_at: str | None = None
    title: str | None = None
    source_format: str = "session-json"
    turns: list[Turn] = Field(default_factory=list)
    # what a deliberate note or triplet commit was stored with (distill/deliberate.py), or what
    # a session JSON file says about itself (its `metadata` object)
    metadata: dict[str, Any] | None = None
    kind: SessionKind = None  # None: stored before provenance was recorded
    channel: str | None = None  # where it happened (telegram, discord, …), when known
    parent: str | None = None  # a sub-agent's: the session (id or key) that spawned it


class SourceRef(Shape):
    """Where a card's content came from: only the turns that carry it. A card from a workspace
    file (docs/workspace.md) cites `<version turn>:L<start>-L<end>` and names the file's path
    in the workspace (`path`, left out of the JSON when None)."""

    session_id: str
    turn_ids: list[str]
    path: str | None = None

    @model_serializer(mode="wrap")
    def _without_empty_path(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if isinstance(data, dict) and data.get("path") is None:
            data.pop("path", None)
        return data


# a line range of one version of a workspace file, as a turn id: `v3:L12-L14`
LINE_REF = re.compile(r"(?P<turn>[A-Za-z0-9][A-Za-z0-9._@+-]*):L(?P<start>\d+)-L(?P<end>\d+)")
# what a workspace card is (docs/workspace.md): a Retain line's letter W, B, O, S
CARD_KINDS = ("world", "experience", "opinion", "observation")
# the type of reflect's summary of one entity, kept as a card (maintenance/reflect.py): what
# the entity recall shape puts first; never evidence for reflect itself. A type of its own, so
# consolidate (which merges only cards of one type) never merges it into a fact
ENTITY_TYPE = "entity"


def source_of(sources: "list[SourceRef]") -> str | None:
    """`memory/2025-11-27.md#L12` (or `#L12-L14`) for a card from a workspace file, the page's
    path for one that cites a whole page (reflect's entity summary), else None."""
    for source in sources:
        for turn_id in source.turn_ids:
            found = LINE_REF.fullmatch(turn_id)
            if source.path and found:
                start, end = found.group("start"), found.group("end")
                return f"{source.path}#L{start}" + (f"-L{end}" if end != start else "")
        if source.path and not source.turn_ids:
            return source.path
    return None


def line_turn(session: "Session", turn_id: str, context: int = 0) -> "Turn | None":
    """The lines `turn_id` (`v3:L12-L14`) names in that version of a workspace file, as a turn
    (`context` lines more on each side), or None when it names no stored version."""
    found = LINE_REF.fullmatch(turn_id)
    if not found:
        return None
    base = next((t for t in session.turns if t.id == found.group("turn")), None)
    if base is None:
        return None
    lines = base.content.split("\n")
    start = max(int(found.group("start")) - context, 1)
    end = min(int(found.group("end")) + context, len(lines))
    return base.model_copy(update={"id": turn_id, "content": "\n".join(lines[start - 1:end]),
                                   "name": f"{base.name or session.title or session.id}#L{start}-L{end}"})


class CardDraft(Shape):
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


class LinkDraft(Shape):
    """A typed relation between two drafts (by key) proposed by a distiller."""

    src: str
    dst: str
    rel: str
    weight: float = 1.0
    reason: str | None = None  # why, when the distiller says (an LLM's proposed reason)


class DistillResult(Shape):
    cards: list[CardDraft] = Field(default_factory=list)
    links: list[LinkDraft] = Field(default_factory=list)
    summary: str | None = None  # one line about the session, when the distiller gives one


class Card(Shape):
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
    temperature: float = 1.0  # a new card starts HOT; introspect's cool-down recomputes both
    tier: Literal["HOT", "WARM", "COLD"] = "HOT"
    access_count: int = 0
    last_accessed: str | None = None
    origin: Origin = None  # the least trusted origin of its source turns; None: stored before provenance
    session_kind: SessionKind = None
    # cards from workspace files (docs/workspace.md); None on others
    kind: str | None = None  # world | experience | opinion | observation (CARD_KINDS)
    confidence: float | None = None  # an opinion's confidence, 0..1 (reflect may update it)
    occurred: str | None = None  # when it happened: a date, or a range `start/end` (ISO 8601)


class Link(Shape):
    src: str
    dst: str
    rel: str
    weight: float = 1.0
    created_at: str | None = None
    reason: str | None = None  # why the two are related (`alaya link --reason`, an LLM distiller)


class Replaced(Shape):
    """An earlier value a returned card superseded (recall/history.py, issue 31)."""

    card_id: str
    title: str
    content: str  # what it said
    valid_from: str | None = None
    valid_until: str | None = None


class RecallNode(Shape):
    card_id: str
    title: str
    content: str
    score: float
    h_distance: float
    matched_rel: str | None
    rel_similarity: float
    matched_reason: str | None = None  # the reason recorded on the edge it was reached by
    type: str
    tags: list[str]
    tier: str
    sources: list[SourceRef]
    valid_until: str | None = None  # set when a later card contradicted this one
    superseded: bool = False  # true once valid_until has passed: recall ranks it below the valid card
    origin: str | None = None  # where the card came from (ORIGINS); None: stored before provenance
    session_kind: str | None = None
    entities: list[str] = Field(default_factory=list)
    # cards from workspace files (docs/workspace.md); None on others
    kind: str | None = None  # world | experience | opinion | observation
    confidence: float | None = None  # an opinion's confidence
    source: str | None = None  # `memory/2025-11-27.md#L12-L14`
    timestamp: str | None = None  # the note's date or the range its text gives
    # an opinion's evidence as reflect counted it (raw/curation.jsonl); None on other cards
    supporting: list[str] | None = None
    contradicting: list[str] | None = None
    # asked about history: the values this card replaced, newest first (recall/history.py)
    replaces: list[Replaced] | None = None

    def evidence(self) -> str | None:
        """`confidence 0.95 · supporting: … · contradicting: …` for an opinion (the text renders
        show it), None for other cards."""
        if self.kind != "opinion":
            return None
        c = "unstated" if self.confidence is None else f"{self.confidence:g}"
        return (f"confidence {c} · supporting: {', '.join(self.supporting or []) or 'none'}"
                f" · contradicting: {', '.join(self.contradicting or []) or 'none'}")


class Explorable(Shape):
    rel: str
    count: int
    rel_sim_to_query: float


class RecallResult(Shape):
    nodes: list[RecallNode] = Field(default_factory=list)
    explorable: list[Explorable] = Field(default_factory=list)
    h_distance_avg: float = 0.0
    # from_nodes given by the id of a card since merged into another: old id → the card
    # navigated from instead
    forwarded: dict[str, str] = Field(default_factory=dict)


class TraceSession(Shape):
    session_id: str
    path: str
    started_at: str | None
    turns: list[Turn]  # the card's source turns, in session order
    context: list[Turn]  # source turns plus their neighbours, for reading them in place


class TraceResult(Shape):
    card_id: str
    title: str
    content: str
    type: str
    sessions: list[TraceSession]
    forwarded_from: str | None = None  # the id asked for, when that card was merged into this one
    origin: str | None = None  # docs/provenance.md; None: stored before provenance


class CardRecord(Card):
    """A card as `get` returns it."""

    forwarded_from: str | None = None  # the id asked for, when that card was merged into this one


class CardPage(Shape):
    """One page of `list`: the cards from `offset`, at most `limit`, of `total` that match."""

    cards: list[Card]
    total: int
    offset: int
    limit: int


class Distiller(Protocol):
    """What `distill.llm_provider` names: turns a session (from turn `start`) into drafts."""

    name: str

    def distill(self, session: Session, start: int = 0) -> DistillResult: ...


CONCEPT_TAG = "about/"  # a concept tag's head (distill/concepts.py, issue 32): `about/nervousness`
STANCE_WORD = "about_stance"  # the index word of the tag of a card that states a stance


def index_text(card: Card) -> str:
    """What the index sees of a card and its vector is made of: its words, tags and entity
    names; not its concept tags, which are the full-text row's alone (`index_row`): in the
    vector too they diluted its words (LoCoMo dev evidence @500 0.782 with them in the
    full-text row alone, 0.774 in the vector as well)."""
    tags = [t for t in card.tags if not t.startswith(CONCEPT_TAG)]
    return "\n".join([card.title, card.content, " ".join(tags), " ".join(card.entities)])


def concept_words(card: Card) -> str:
    """The concept tags of a card that states a stance (`about/stance`: a cause, goal, value or
    lasting state), as the full-text index holds them: each one word of its own
    (`about_nervousness`), so that searching a concept finds the cards filed under it and not
    every card that says "nervous", and no question's word matches one. Only those cards: a
    situation is searched for them alone, and the words added to every row moved LoCoMo's
    full-text ranking (longer rows), evidence @1000 0.863 -> 0.860."""
    tags = [t.replace("/", "_") for t in card.tags if t.startswith(CONCEPT_TAG)]
    return " ".join(tags) if STANCE_WORD in tags else ""


def index_row(card: Card) -> dict[str, str]:
    text = "\n".join(filter(None, [index_text(card), concept_words(card)]))
    return {"id": card.id, "text": text, "scope": card.scope, "type": card.type}


# --- results of the engine's operations ------------------------------------------------------


class IngestResult(Shape):
    session_id: str
    new_turns: int
    total_turns: int
    path: str
    forgotten: bool = False  # the session was forgotten on purpose: nothing of it was stored again


class DistillReport(Shape):
    sessions: int = 0
    cards: int = 0
    links: int = 0
    merged: int = 0  # new cards merged into stored ones (distill/resolver.py)
    contradicted: int = 0  # stored cards superseded by a new one
    pending_embedding: int = 0  # cards stored without a vector while the embedder was down


class LinkResult(Shape):
    src: str
    dst: str
    rel: str
    custom: bool
    edges: int
    reason: str | None = None


# --- relation names: normalising what users and distillers write, and storing links both ways
# where the relation's meaning requires it (symmetric ones, CAUSES/CAUSED_BY) ----------------

_RELATION_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
RESERVED = {"EXTRACTED_FROM", "MENTIONS"}  # card→session / card→entity, not between cards


def normalise_relation(name: str) -> str:
    """`depends on` → `DEPENDS_ON`; anything else that is not a tidy name is refused."""
    cleaned = re.sub(r"[\s\-]+", "_", str(name).strip()).upper()
    if not _RELATION_NAME.fullmatch(cleaned):
        raise InputError(
            f"invalid relation name {str(name)[:40]!r}: use letters, digits and _ (up to 64), starting with a letter"
        )
    if cleaned in RESERVED:
        raise InputError(f"{cleaned} is maintained by alaya itself and cannot be linked by hand")
    return cleaned


def is_custom(name: str) -> bool:
    return name not in CORE_RELATIONS


def expand_link(src: str, dst: str, rel: str, weight: float, created_at: str, reason: str | None = None) -> list[Link]:
    """The stored edges for one stated relation: the edge itself plus its mirror if any."""
    links = [Link(src=src, dst=dst, rel=rel, weight=weight, created_at=created_at, reason=reason)]
    if rel in SYMMETRIC_RELATIONS:
        links.append(Link(src=dst, dst=src, rel=rel, weight=weight, created_at=created_at, reason=reason))
    elif rel in INVERSE_RELATIONS:
        links.append(Link(src=dst, dst=src, rel=INVERSE_RELATIONS[rel], weight=weight, created_at=created_at, reason=reason))
    return links


def relation_description(name: str) -> str:
    """The text a relation is embedded from, so that names cluster by meaning."""
    words = name.replace("_", " ").lower()
    return f"{words}: {CORE_RELATIONS.get(name, 'custom relation')}"
