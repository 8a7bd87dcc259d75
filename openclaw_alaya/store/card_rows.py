"""What both graph backends (store/embedded, store/postgres) make of a card's stored columns, so
that Kuzu and PostgreSQL answer the ports alike: the session a card came from, its dates, the
names an entity lookup asks for, the filters a listing was given."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .ports.graph import CardTimes

# (card id, valid_from, created_at, sources JSON): what card_times reads of each card
TimeRow = tuple[str, str | None, str | None, str | None]


def first_source(sources: str | None) -> str | None:
    """The session a card was first distilled from, out of its stored `sources` JSON."""
    found = json.loads(sources or "[]")
    return found[0]["session_id"] if found else None


def card_times_of(rows: Iterable[TimeRow], session_starts: Callable[[list[str]], dict[str, str]]
                  ) -> dict[str, CardTimes]:
    """Each card's CardTimes; `session_starts` gives the start of each named session."""
    rows = list(rows)
    firsts = {cid: first_source(sources) for cid, _valid, _created, sources in rows}
    sessions = sorted(set(firsts.values()) - {None})
    starts = session_starts(sessions) if sessions else {}
    return {cid: CardTimes(valid or None, starts.get(firsts[cid]) or None, created or None)
            for cid, valid, created, _sources in rows}


def names_with_aliases(names: list[str], aliases: dict[str, str]) -> list[str]:
    """The lower-cased names, and the entity each is an alias of (`aliases`: alias → name)."""
    wanted = {n.lower() for n in names} | {aliases[n.lower()].lower() for n in names if n.lower() in aliases}
    return sorted(wanted)


def listing_filters(**given: Any) -> dict[str, Any]:
    """A card listing's filters (type, tag, entities, since, before, tier, scopes) that were given."""
    return {key: value for key, value in given.items() if value}
