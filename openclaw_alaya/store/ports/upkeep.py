"""The card graph's upkeep operations: what maintenance reads and rewrites in bulk
(docs/architecture.md, "Storage backends"; the steps in "Cards, relations, temperature"), and
what `alaya status` asks a backend about its size on disk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from ...models import Card, Link


@dataclass
class CardRow:
    """The columns maintenance needs of a card, without parsing sources/entities; a value the
    store lacks reads as its default (importance and temperature 0.5, tier WARM…)."""

    id: str
    type: str
    scope: str
    title: str
    content: str
    importance: float
    created_at: str | None
    updated_at: str | None
    valid_until: str | None
    temperature: float
    tier: str
    access_count: int
    last_accessed: str | None
    origin: str | None = None


class CardCensus(NamedTuple):
    """What `alaya metrics` counts of a card (issue 31): one lean row per card, no text. Values
    as stored: None or "" where unset."""

    id: str
    type: str | None
    origin: str | None
    session_kind: str | None
    tier: str | None
    created_at: str | None
    access_count: int


class CardEdge(NamedTuple):
    """A card → card edge as maintenance reads it (`rel`: the relation's name, core or custom)."""

    src: str
    rel: str
    dst: str
    weight: float
    created_at: str | None


class CardProvenance(NamedTuple):
    """What `alaya verify` checks of a card against L1 and L3. `cited`: the sessions its
    sources name, None when the stored sources cannot be read."""

    id: str
    tier: str | None
    title: str | None
    created_at: str | None
    cited: frozenset[str] | None


class StorageBytes(NamedTuple):
    """Bytes a backend keeps: per layer, its own state (`state/`), and everything together."""

    l1: int
    l2: int
    l3: int
    state: int
    total: int


class Footprint(Protocol):
    """What a backend answers about its size (status's "layers"); part of the backend."""

    def footprint(self) -> StorageBytes:
        """The bytes each layer takes now."""
        ...


class UpkeepGraph(Protocol):
    """Named operations maintenance/ needs of L2: whole-graph reads for planning, and bulk
    rewrites applied in one write-lock hold."""

    # --- reads ------------------------------------------------------------------------------

    def card_rows(self, ids: list[str] | None = None) -> list[CardRow]:
        """The cards (all, or those of `ids` that exist), by id."""
        ...

    def present_ids(self, ids: list[str]) -> set[str]:
        """Those of `ids` that are cards (not removed meanwhile by a merge or forget)."""
        ...

    def card_edges(self, ids: list[str] | None = None, *,
                   reasons: dict[tuple[str, str, str], str] | None = None) -> list[CardEdge]:
        """Card → card edges, all or those touching `ids`; `reasons`, when given, gets
        (src, relation name, dst) → the edge's reason, for those with one."""
        ...

    def forwards_to(self, ids: list[str]) -> dict[str, str]:
        """Old id → card id, for the merged-away ids that resolve to these cards (a forget
        drops them with the card; a restore puts them back: curate/restore.py)."""
        ...

    def similar_linked(self) -> set[tuple[str, str]]:
        """Card pairs already linked SIMILAR_TO, each as (smaller id, larger id)."""
        ...

    def depended_on(self) -> set[str]:
        """Cards another card depends on (forget spares them): targets of DEPENDS_ON / CAUSED_BY."""
        ...

    def tier_counts(self) -> dict[str | None, int]:
        """Cards per tier (None: a card stored without one)."""
        ...

    def card_census(self) -> list[CardCensus]:
        """Every card's type, provenance, tier, creation time and access count (metrics)."""
        ...

    def temperatures(self) -> list[float]:
        """Every card's temperature (cards without one left out)."""
        ...

    def session_times(self) -> list[tuple[str | None, str | None]]:
        """(started_at, ingested_at) of every session; a missing time may read as ""."""
        ...

    def card_provenance(self) -> list[CardProvenance]:
        """Every card node's tier, title, creation time and cited sessions (verify)."""
        ...

    def extraction_edges(self) -> list[tuple[str, str]]:
        """(card id, session id) of every EXTRACTED_FROM edge."""
        ...

    def titled_cards(self) -> list["Card"]:
        """Every card with a title (not a bare node left by a partial write), by id."""
        ...

    def cards_from_source_format(self, source_format: str) -> list[tuple[str, str | None, str | None]]:
        """(card id, card title, session title) for cards distilled from sessions of this
        `source_format` (memex notes)."""
        ...

    def current_card_ids_with_entities(self, scopes: list[str]) -> list[str]:
        """Cards in these scopes, not invalidated, that mention at least one entity (reflect)."""
        ...

    # --- bulk writes (under the write lock) -------------------------------------------------

    def set_card_columns(self, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
        """rows: {"id", column: value…}; each of `columns` a row gives is SET on the card. A None
        value leaves that field as it is."""
        ...

    def remove_cards(self, ids: list[str]) -> None:
        """The cards, their edges, and the forwards of merged ids to them."""
        ...

    def remove_unmentioned_entities(self) -> int:
        """Entities no card mentions any more (their names came from forgotten cards), with
        their entity relations, except a category a still-mentioned entity is related to
        (IS_A "connection pooler", issue 35); how many."""
        ...

    def add_missing_links(self, links: list["Link"]) -> None:
        """The links not in the graph yet; an existing edge is kept as it is (weight, reason)."""
        ...

    def add_accesses(self, counts: Mapping[str, int], last_seen: Mapping[str, str]) -> int:
        """Add `counts` to the cards' access counts and move `last_accessed` up to `last_seen`
        (ISO, UTC); how many of the cards exist."""
        ...

    # --- rebuild and reembed ---------------------------------------------------------------

    def card_count(self) -> int:
        """How many cards the graph holds."""
        ...

    def all_card_ids(self) -> set[str]:
        """Every card's id."""
        ...

    def l1_card_ids(self) -> list[str]:
        """Ids of the cards that belong in L1 (every card, COLD too: issue 31), sorted."""
        ...

    def delete_sessions(self, ids: list[str]) -> None:
        """The sessions `ids` and their edges (forgotten sessions a rebuild must not keep)."""
        ...
