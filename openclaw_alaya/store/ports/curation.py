"""The card graph's curation operations: entities, and the matching behind forget and purge;
also the plain reads behind `alaya list`, the time buckets and `memory_introspect`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from ...models import CardPage


class Entity(NamedTuple):
    """An entity as `alaya entities` shows it (`type` None: not typed yet)."""

    name: str
    type: str | None
    aliases: list[str]


class EntityMentions(NamedTuple):
    """An entity and how many cards mention it (`alaya entities list`)."""

    name: str
    type: str | None
    aliases: list[str]
    mentions: int


class MentioningCard(NamedTuple):
    """A card that mentions an entity (`alaya entities show`); `valid_until` "" or None: still valid."""

    id: str
    title: str | None
    type: str | None
    created_at: str | None
    valid_until: str | None


class CardHeadline(NamedTuple):
    """What the time buckets count of a card (values as stored: None or "" where unset)."""

    id: str
    title: str | None
    type: str | None
    importance: float | None
    tags: list[str] | None
    origin: str | None = None  # docs/provenance.md: only injectable cards give highlights


class CurationGraph(Protocol):
    """Named operations curate/, recall/listing, recall/buckets and ingest/ need of L2."""

    # --- entities ---------------------------------------------------------------------------

    def entities_named(self, name: str) -> list[Entity]:
        """Entities called `name` ignoring case, or with `name` among their aliases (exactly or
        ignoring case); a store not migrated yet matches by name alone, untyped, without aliases."""
        ...

    def entity_count(self, kind: str | None = None) -> int:
        """How many entities there are (of type `kind` when given)."""
        ...

    def entity_type_counts(self) -> dict[str | None, int]:
        """Entities per type (None: not typed yet; all of them in a store not migrated yet)."""
        ...

    def entities_by_mentions(self, kind: str | None = None, *, limit: int, offset: int) -> list[EntityMentions]:
        """A page of entities (of type `kind` when given: none in a store not migrated yet), most
        mentioned first, then by name."""
        ...

    def entity_cards(self, name: str) -> list[MentioningCard]:
        """The cards mentioning the entity called exactly `name`, newest first (then by id)."""
        ...

    def set_entity_type(self, name: str, kind: str) -> None:
        """The entity's type ("" for none), the entity made (without aliases) if missing."""
        ...

    def add_entity_alias(self, name: str, alias: str) -> None:
        """One more alias for the entity called exactly `name` (nothing if there is none)."""
        ...

    def merge_entities(self, keep: str, drop: str) -> list[str]:
        """`drop` into `keep`: its mentions move to `keep`, it and its aliases become aliases of
        `keep` (whose type, when unset, becomes its), the cards' entity lists name `keep` where
        they named `drop` (any case), `drop` is deleted. The ids of those cards; nothing is
        done (and none returned) unless both exist and differ."""
        ...

    def rename_entity(self, name: str, new: str) -> list[str]:
        """`merge_entities(new, name)`, `new` made (untyped) first if missing; nothing when
        there is no entity `name`."""
        ...

    # --- sessions and supersedes -------------------------------------------------------------

    def session_card_ids(self, session_id: str) -> list[str]:
        """The cards distilled from this session (EXTRACTED_FROM)."""
        ...

    def newest_session_id(self) -> str | None:
        """The session ingested last (ties: the smallest id); None with no session."""
        ...

    def superseded_by(self, ids: list[str]) -> list[str]:
        """Cards outside `ids` that cards of `ids` contradict (CONTRADICTS) and that are no
        longer valid, sorted."""
        ...

    # --- forget and purge --------------------------------------------------------------------

    def cards_matching_purge(self, *, subject: str | None = None, before: str | None = None,
                             relation: str | None = None) -> list[str]:
        """Ids (sorted) of the cards meeting every given criterion: the title or a mentioned
        entity's name containing `subject` (ignoring case; give it lower-cased); dated (its
        `valid_from`, else `created_at`) before the ISO time `before`; an edge of the relation
        `relation` (normalised name, core or custom) or its `rel:` tag. None given: none."""
        ...

    # --- listing and buckets -----------------------------------------------------------------

    def card_page(self, *, type: str | None = None, tag: str | None = None, entities: list[str] | None = None,
                  since: str | None = None, before: str | None = None, tier: str | None = None,
                  scopes: list[str] | None = None, limit: int, offset: int) -> "CardPage":
        """A page of the cards meeting every given filter, newest first (`created_at`, then id),
        with the total that match: a `type`, a tag or a child of it (`tag` lower-cased, any
        case matches; `a/b` also keeps `a/b/c`: recall/tags.py), a
        mention of an entity named (lower-cased) one of `entities`, `created_at` from `since`
        and before `before`, a tier, one of `scopes`."""
        ...

    def card_headlines(self) -> list[CardHeadline]:
        """Every card's id, title, type, importance and tags (the time buckets)."""
        ...
