"""Cards by id and pages of cards by filter (`alaya get`, `alaya list`): plain reads of the
graph, no index and no walk. An id of a card since merged into another (introspect's
consolidate) resolves to the card it went into (the graph's `resolve_ids`), so ids an agent
noted down earlier keep working.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import InputError, NotFoundError
from ..models import CardPage, CardRecord, check_id
from .navigate import SHARED_SCOPE
from .periods import aware, window
from .tags import SEP, path

if TYPE_CHECKING:
    from ..store.ports.graph import CardGraph

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000
TIERS = ("HOT", "WARM", "COLD")


def find_cards(graph: "CardGraph", ids: list[str]) -> list[CardRecord]:
    """The cards in the order asked; a merged id gives the card it went into, with
    `forwarded_from` set to it. The first id that names nothing is a NotFoundError."""
    forwarded = graph.resolve_ids(ids)
    cards = graph.get_cards([forwarded.get(i, i) for i in ids])
    for wanted in ids:
        if forwarded.get(wanted, wanted) not in cards:
            raise NotFoundError(f"no card {wanted!r}")
    return [CardRecord(**cards[forwarded.get(i, i)].model_dump(), forwarded_from=i if i in forwarded else None)
            for i in ids]


@dataclass(frozen=True)
class ListRequest:
    """What `list` filters on, checked (`checked`). Times are compared with the card's
    `created_at` (UTC ISO stamps, so as strings): `since` included, `before` excluded."""

    type: str | None = None
    tag: str | None = None
    entity: str | None = None
    since: str | None = None
    before: str | None = None
    tier: str | None = None
    scope: str | None = None
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    @classmethod
    def checked(cls, *, type: str | None = None, tag: str | None = None, entity: str | None = None,
                since: str | None = None, until: str | None = None, tier: str | None = None,
                scope: str | None = None, limit: int | None = None, offset: int | None = None,
                now: datetime | None = None) -> "ListRequest":
        """From what a caller gave: an empty filter is no filter, `since`/`until` read as
        recall reads them (periods.window: `--until 2026-03-01` keeps that day, `7d`, `last
        week`), and a bad value is an InputError naming it."""
        limit = DEFAULT_LIMIT if limit is None else limit
        offset = offset or 0
        if not _count(limit) or limit > MAX_LIMIT:
            raise InputError(f"list: limit must be 0 to {MAX_LIMIT} (got {limit!r})")
        if not _count(offset):
            raise InputError(f"list: offset must be 0 or more (got {offset!r})")
        if tier and tier.upper() not in TIERS:
            raise InputError(f"list: unknown tier {tier!r} (use {', '.join(TIERS)})")
        period = window(since or None, until or None, aware(now))
        return cls(type=type or None, tag=tag or None, entity=entity or None,
                   since=_stamp(period.start) if period else None, before=_stamp(period.end) if period else None,
                   tier=tier.upper() if tier else None, scope=check_id(scope, "scope") if scope else None,
                   limit=limit, offset=offset)


def list_cards(graph: "CardGraph", request: ListRequest) -> CardPage:
    """Newest first (`created_at`, then id), the total matching beside the page. Tags and
    entities match whatever the case; an entity by its name or one of its aliases (the graph's
    `aliases`: none in a store not migrated yet); a scope as recall's: the agent's own cards
    and the shared ones."""
    entities = None
    if request.entity:
        name = request.entity.lower()
        entities = sorted({name, graph.aliases().get(name, name).lower()})
    tag = SEP.join(path(request.tag)) if request.tag else None  # 技术/前端 also lists 技术/前端/React
    return graph.card_page(type=request.type, tag=tag or None, entities=entities,
                           since=request.since, before=request.before, tier=request.tier,
                           scopes=[request.scope, SHARED_SCOPE] if request.scope else None,
                           limit=request.limit, offset=request.offset)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _stamp(moment: datetime | None) -> str | None:
    """As cards store their times (models.now_iso): UTC, to the second."""
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds") if moment else None
