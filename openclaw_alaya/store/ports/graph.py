"""The card graph (L2) as named operations: cards, sessions, links, walks, counts.

`GraphReads` is what recall reads, and what a backend's in-memory snapshot of the graph answers
as well as the graph itself (the embedded one: `GraphSnapshot` and `GraphStore`); `CardGraph` is
the whole port a graph handle offers: recall's reads, the general reads and writes below, and
curation's and upkeep's operations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ...models import INJECTABLE_ORIGINS
from .curation import CurationGraph
from .upkeep import UpkeepGraph

if TYPE_CHECKING:
    from ...models import Card, Link


class CardTimes(NamedTuple):
    """What a card is dated by, best first (`recall/periods.first_moment` picks): its
    `valid_from`, the start of the session it was first distilled from, its `created_at`."""

    valid_from: str | None
    session_start: str | None
    created_at: str | None


class GraphReads(Protocol):
    """Recall's questions to the graph: cards by id, dates, walks, mentions, forwards."""

    def get_cards(self, ids: Iterable[str]) -> dict[str, "Card"]:
        """The cards of `ids` that exist, by id."""
        ...

    def card_times(self, ids: Iterable[str]) -> dict[str, CardTimes]:
        """What dates each of these cards."""
        ...

    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]:
        """(from id, relation name, to id, weight) for card-card edges touching `ids`, both ways."""
        ...

    def directed_neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float, bool]]:
        """As `neighbours`, each with whether the edge is stored from that card of `ids` to the
        other (True) or points at it (False): a walk following a relation's synonym in the sense
        that means the named one, LED_TO into a card for its causes (issue 35)."""
        ...

    def fanout(self, ids: list[str]) -> dict[str, int]:
        """Relation name → how many cards outside `ids` it leads to from them."""
        ...

    def edge_reasons(self, pairs: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        """The reasons recorded on these (card, relation, card) edges, in either direction."""
        ...

    def card_ids_mentioning(self, names: list[str]) -> list[str]:
        """Cards linked to any of these entity names or aliases (case-insensitive)."""
        ...

    def resolve_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """Old id → current id, for ids of cards merged into another."""
        ...

    def entity_links(self, names: list[str]) -> list[tuple[str, str, str]]:
        """(entity, relation, entity) edges between entities touching any of these names
        (case-insensitive), as stored: IS_A / PART_OF hierarchy and the like (issue 35)."""
        ...


class CardGraph(GraphReads, CurationGraph, UpkeepGraph, Protocol):
    """What `Memory.reading` / `Memory.writing` hand out: every named L2 operation. A write
    hold's handle is one transaction; `with graph:` inside commits it early (L2 before L1)."""

    def __enter__(self) -> "CardGraph": ...

    def __exit__(self, exc_type: object, *exc: object) -> None: ...

    # --- schema -----------------------------------------------------------------------------

    def create_schema(self) -> None:
        """The tables of a new store (init; safe to run again)."""
        ...

    # --- sessions ---------------------------------------------------------------------------

    def upsert_session(self, row: dict[str, Any]) -> None:
        """Insert or update a Session by id (`ingest.sessions.session_row`)."""
        ...

    def upsert_sessions(self, rows: list[dict[str, Any]]) -> None:
        """`upsert_session` for many rows."""
        ...

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The Session's columns, or None."""
        ...

    def get_sessions(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """`get_session` for many ids."""
        ...

    def sessions(self) -> list[dict[str, Any]]:
        """Every Session's columns."""
        ...

    # --- cards ------------------------------------------------------------------------------

    def upsert_cards(self, cards: list["Card"]) -> None:
        """Insert or replace cards by id (content replaced, usage kept)."""
        ...

    def update_provenance(self, cards: list["Card"]) -> None:
        """What a merge changes on stored cards (sources, tags, entities…)."""
        ...

    def aliases(self) -> dict[str, str]:
        """Lower-cased alias → the entity's name."""
        ...

    def forward(self, merged: dict[str, str]) -> None:
        """Record merges (dropped id → kept id), so dropped ids keep resolving."""
        ...

    def drop_forwards_to(self, ids: list[str]) -> None:
        """Forwards to cards being deleted."""
        ...

    def supersede(self, card_id: str, until: str, now: str) -> None:
        """Set a card's `valid_until` unless already set."""
        ...

    def set_confidence(self, card_id: str, value: float, expected: float | None) -> bool:
        """An opinion's confidence, set only while it is still `expected`; whether it was."""
        ...

    # --- links ------------------------------------------------------------------------------

    def add_links(self, links: list["Link"]) -> None:
        """Card → card edges (replacing an edge of the same key)."""
        ...

    def link_entities(self, links: list[tuple[str, str, str]]) -> None:
        """Entity → entity edges (entity, relation, entity), entities created as needed, each
        edge once (distill/entity_links.py, issue 35)."""
        ...

    def link_to_sessions(self, rows: list[dict[str, Any]]) -> None:
        """EXTRACTED_FROM edges; rows are {card, session, turns}."""
        ...

    # --- what session-start injects ---------------------------------------------------------

    def top_cards(self, scopes: list[str], *, by: str, limit: int, now: str,
                  origins: Sequence[str] = INJECTABLE_ORIGINS, types: Sequence[str] = ()) -> list["Card"]:
        """Current cards of these scopes and origins (and of these types, when given), hottest
        (`by="hot"`), most important (`by="importance"`) or newest first."""
        ...

    def superseded_since(self, scopes: list[str], *, since: str, now: str, limit: int,
                         origins: Sequence[str] = INJECTABLE_ORIGINS) -> list["Card"]:
        """Cards of these scopes and origins whose fact ended (`valid_until`) between `since`
        and `now`, latest first: what changed recently (the integrated summary, issue 33)."""
        ...

    def session_cards(self, session_id: str, scopes: list[str], *, limit: int, now: str,
                      origins: Sequence[str] = INJECTABLE_ORIGINS) -> list["Card"]:
        """Current cards distilled from one session, newest first."""
        ...

    def overview(self, scopes: list[str], *, top: int, sessions: int,
                 origins: Sequence[str] = INJECTABLE_ORIGINS) -> dict[str, Any]:
        """Counts for the integrated summary (types, tags, entities, recent sessions)."""
        ...

    # --- counts -----------------------------------------------------------------------------

    def freshness(self) -> list[Any]:
        """[newest session `ingested_at`, number of cards]: what a cache of the graph is keyed on."""
        ...

    def counts(self) -> dict[str, int]:
        """Nodes and edges per kind (status)."""
        ...

    def type_counts(self) -> dict[str, int]:
        """Cards per type."""
        ...

    def provenance_counts(self) -> dict[str, dict[str, int]]:
        """Cards per origin and per session kind, sessions per kind."""
        ...

    def provenance_count(self) -> int:
        """EXTRACTED_FROM edges."""
        ...

    def relation_counts(self) -> dict[str, int]:
        """Card → card edges per relation name."""
        ...


class GraphViews(Protocol):
    """How a backend keeps recall's reads of the graph quick in a long-lived process (the
    embedded one: an in-memory snapshot, checked against the generation before each use)."""

    resident: bool  # a long-lived process: keep the copy from the first read on

    def empty(self) -> bool:
        """No copy is kept now."""
        ...

    def stale(self) -> bool:
        """A copy is kept and the graph has changed since it was taken."""
        ...
