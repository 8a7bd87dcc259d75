"""`alaya commit`: facts as triplets `{subject, relation, object, confidence}`.

A commit is a session in L3 (`source_format: triplets`, a turn per triplet, the structure in
its metadata) distilled by its own distiller into one `fact` card per triplet (subject and
object become typed entities). Then, under the write lock:

- a triplet already stored and valid (same subject, relation and object) is not stored twice:
  it is left out before anything is written, and reported as `unchanged`;
- a triplet with the subject and relation of a stored valid one but another object supersedes
  it (`valid_until` = the new one's `temporal_tag`, else now) and is linked `CONTRADICTS` to it,
  unless the relation can hold many objects at once (`MULTI_VALUED`: likes, knows, uses, …) or
  the triplet says `"replaces": false`;
- the new card is linked by its relation to the stored facts about its object, and the facts
  whose object is its subject to it, so the graph can be walked along the relations.

Everything done under the lock is recorded in `raw/curation.jsonl` for rebuild.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ..distill.deliberate import TRIPLET_TAG, TRIPLETS_FORMAT, triplet_text
from ..models import Card, Link, Session, Turn, check_id, expand_link, may_supersede, normalise_relation, now_iso
from ..store.raw import CURATION_LOG
from . import entities
from .common import cards_of, session_id

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

MAX_TRIPLETS = 200
MULTI_VALUED = frozenset({
    "LIKES", "LOVES", "DISLIKES", "KNOWS", "USES", "HAS", "OWNS", "VISITED", "MET", "ATTENDED", "SPEAKS", "READ",
    "PLAYS", "FRIEND_OF", "MEMBER_OF", "PARTICIPATED_IN", "RELATES_TO", "RELATED_TO", "MENTIONS", "CONTAINS",
    "DEPENDS_ON", "PREFERS", "WORKED_ON", "WROTE", "SUPPORTS", "INCLUDES", "PART_OF", "TAGGED",
})
Name = Annotated[str, Field(min_length=1, max_length=200)]


class Triplet(BaseModel):
    subject: Name
    relation: Annotated[str, Field(min_length=1, max_length=64)]
    object: Name
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    replaces: bool | None = None  # None: by the relation (MULTI_VALUED or not)

    @field_validator("subject", "object")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is empty")
        return " ".join(value.split())

    @field_validator("relation")
    @classmethod
    def _relation_name(cls, value: str) -> str:
        return normalise_relation(value)

    @property
    def exclusive(self) -> bool:
        return self.replaces if self.replaces is not None else self.relation not in MULTI_VALUED


class Commit(BaseModel):
    """The TrulyMEM `memory_commit` request. `entity_types`: `{name: type}`, a list of
    `{"name", "type"}`, or a list of types in the order the entities first appear.
    `temporal_tag`: when the facts hold; a date (`2026`, `2026-11`, `2026-11-30`) becomes the
    cards' `valid_from`, other text (`"since the reorg"`) is kept in their content."""

    triplets: list[Triplet] = Field(min_length=1, max_length=MAX_TRIPLETS)
    entity_types: dict[str, str] | list[Any] = Field(default_factory=dict)
    temporal_tag: Annotated[str, Field(max_length=64)] | None = None
    agent: str | None = None
    origin: Literal["manual", "untrusted"] = "manual"  # untrusted: a caller who is not the owner (an MCP agent token)

    @field_validator("agent")
    @classmethod
    def _safe_agent(cls, value: str | None) -> str | None:
        return check_id(value, "agent id") if value else None

    @model_validator(mode="after")
    def _types_by_name(self) -> "Commit":
        names = list(dict.fromkeys(n for t in self.triplets for n in (t.subject, t.object)))
        given = self.entity_types
        if isinstance(given, list):
            if all(isinstance(v, str) for v in given):
                given = dict(zip(names, given))
            elif all(isinstance(v, dict) and isinstance(v.get("name"), str) and isinstance(v.get("type"), str) for v in given):
                given = {v["name"]: v["type"] for v in given}
            else:
                raise ValueError("entity_types must be {name: type}, a list of {name, type}, or a list of types")
        for kind in given.values():
            entities.check_type(kind)
        self.entity_types = {" ".join(str(k).split()): v.strip().lower() for k, v in given.items()}
        return self


class Committed(BaseModel):
    session_id: str | None
    cards: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)  # triplets already stored: their cards
    superseded: list[str] = Field(default_factory=list)
    links: int = 0
    entities: list[str] = Field(default_factory=list)


def commit(memory: "Memory", request: Commit) -> Committed:
    memory.dirs.require()
    with memory.reading("commit (stored facts)") as graph:
        stored = _facts_about(graph, {n for t in request.triplets for n in (t.subject, t.object)})
    fresh, unchanged = [], []
    for triplet in request.triplets:
        same = [c for c in stored if _key(c) == (triplet.subject.lower(), triplet.relation, triplet.object.lower())]
        (unchanged if same else fresh).append(same[0].id if same else triplet)
    names = list(dict.fromkeys(n for t in request.triplets for n in (t.subject, t.object)))
    result = Committed(session_id=None, unchanged=unchanged, entities=names)
    if fresh:
        result = _store(memory, request, fresh, result)
    types = {name: request.entity_types[name] for name in names if name in request.entity_types}
    if types:
        entities.set_types(memory, types)
    return result


def _store(memory: "Memory", request: Commit, fresh: list[Triplet], result: Committed) -> Committed:
    sid = session_id("commit", request.agent or "shared", *(triplet_text(t.model_dump()) for t in fresh))
    stamp = now_iso()
    session = Session(
        id=sid, agent_id=request.agent or "shared", started_at=stamp, title=triplet_text(fresh[0].model_dump()),
        source_format=TRIPLETS_FORMAT,
        turns=[Turn(id=f"t{i}", role="user", name="commit", content=triplet_text(t.model_dump()), timestamp=stamp,
                    origin=request.origin) for i, t in enumerate(fresh)],
        kind="interactive",
        metadata={"triplets": [t.model_dump() for t in fresh], "temporal_tag": request.temporal_tag},
    )
    memory.ingest(session)
    memory.distill(sid)
    with memory.writing(f"commit {sid}") as graph:
        with graph:
            ids = cards_of(graph, sid, [f"triplet:t{i}" for i in range(len(fresh))])
            new = [c for c in graph.get_cards(ids).values() if TRIPLET_TAG in c.tags]
            stored = [c for c in _facts_about(graph, {n for c in new for n in c.entities}) if c.id not in ids]
            records, links, superseded = _relate(new, stored, fresh, stamp)
            memory.raw.append_log(CURATION_LOG, records)  # L3 before L2
            for card, until in superseded:
                graph.supersede(card, until, stamp)
            graph.add_links(links)
            # and those the resolver superseded while distilling (a fact pattern it knows)
            replaced = graph.superseded_by(ids)
    return result.model_copy(update={"session_id": sid, "cards": ids, "superseded": replaced, "links": len(links)})


def _relate(new: list[Card], stored: list[Card], triplets: list[Triplet], stamp: str):
    """Supersedes and links for the new fact cards against the stored ones (docstring above)."""
    exclusive = {(t.subject.lower(), t.relation) for t in triplets if t.exclusive}
    records: list[dict[str, Any]] = []
    links: list[Link] = []
    superseded: list[tuple[str, str]] = []
    for card in new:
        subject, relation, obj = _key(card)
        until = card.valid_from or stamp
        for old in stored:
            old_subject, old_relation, old_obj = _key(old)
            if (subject, relation) in exclusive and (old_subject, old_relation) == (subject, relation) and old_obj != obj \
                    and old.valid_until is None and may_supersede(old.origin, card.origin):
                superseded.append((old.id, until))
                links += expand_link(card.id, old.id, "CONTRADICTS", 1.0, stamp)
                records += [{"op": "link", "src": card.id, "dst": old.id, "rel": "CONTRADICTS", "weight": 1.0, "ts": stamp,
                             "by": "commit"},
                            {"op": "supersede", "card": old.id, "valid_until": until, "by_card": card.id, "ts": stamp}]
            pairs = []
            if old_subject == obj:  # what the new fact points at is known: walk on to it
                pairs.append((card, old, relation))
            if old_obj == subject:  # a stored fact points at the new fact's subject
                pairs.append((old, card, old_relation))
            for src, dst, rel in pairs:
                links += expand_link(src.id, dst.id, rel, card.importance, stamp)
                records.append({"op": "link", "src": src.id, "dst": dst.id, "rel": rel, "weight": card.importance,
                                "ts": stamp, "by": "commit"})
    return records, links, superseded


def _key(card: Card) -> tuple[str, str, str]:
    """(subject, RELATION, object) of a triplet card: its first two entities and its rel: tag."""
    relation = next((t[4:] for t in card.tags if t.startswith("rel:")), "")
    subject = card.entities[0] if card.entities else ""
    obj = card.entities[1] if len(card.entities) > 1 else subject
    return subject.lower(), relation, obj.lower()


def _facts_about(graph: "CardGraph", names: set[str]) -> list[Card]:
    """Stored triplet cards that mention any of these entities (or their aliases)."""
    if not names:
        return []
    ids = graph.card_ids_mentioning(sorted(names))
    return [c for c in graph.get_cards(ids).values() if TRIPLET_TAG in c.tags]

