"""The upkeep port on PostgreSQL (issue 34; store/ports/upkeep.py): maintenance's whole-graph
reads and bulk rewrites as SQL, inside the write hold's one transaction. Mixed into
`PostgresGraph` (graph.py), whose `_rows`/`_one`/`_many` run the statements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ..ports.upkeep import CardCensus, CardEdge, CardProvenance, CardRow
from .rows import CARD_FIELDS, card_columns, card_from, cited

if TYPE_CHECKING:
    from ...models import Card, Link

_ROW_COLUMNS = [f.name for f in fields(CardRow)]
# what a card stored without a value reads as (CardRow's docstring): numbers when NULL, text when empty
_NUMBER_DEFAULTS = {"importance": 0.5, "temperature": 0.5, "access_count": 0}
_TEXT_DEFAULTS = {"tier": "WARM", "type": "concept", "scope": "shared", "title": "", "content": ""}
_EDGE = "SELECT e.src, e.rel, e.dst, e.weight, e.created_at, e.reason FROM edges e WHERE e.store_id = %(s)s"


class UpkeepSql:
    """Upkeep operations for a graph with `_rows`, `_one` and `_many` (graph.py)."""

    # --- reads ------------------------------------------------------------------------------

    def card_rows(self, ids: list[str] | None = None) -> list[CardRow]:
        cols = ", ".join(f"c.{f}" for f in _ROW_COLUMNS)
        chosen = "" if ids is None else " AND c.id = ANY(%(ids)s)"
        out = []
        for row in self._rows(f"SELECT {cols} FROM cards c WHERE c.store_id = %(s)s{chosen} ORDER BY c.id", {"ids": ids}):
            d = dict(zip(_ROW_COLUMNS, row))
            d.update({k: v for k, v in _NUMBER_DEFAULTS.items() if d[k] is None})
            d.update({k: v for k, v in _TEXT_DEFAULTS.items() if not d[k]})
            d["importance"], d["temperature"] = float(d["importance"]), float(d["temperature"])
            d["access_count"], d["origin"] = int(d["access_count"]), d["origin"] or None
            out.append(CardRow(**d))
        return out

    def present_ids(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        return {r[0] for r in self._rows("SELECT id FROM cards WHERE store_id = %(s)s AND id = ANY(%(ids)s)", {"ids": ids})}

    def card_edges(self, ids: list[str] | None = None, *,
                   reasons: dict[tuple[str, str, str], str] | None = None) -> list[CardEdge]:
        if ids is None:
            rows = self._rows(f"{_EDGE} ORDER BY e.src, e.rel, e.dst")
        else:
            rows = self._rows(f"{_EDGE} AND (e.src = ANY(%(ids)s) OR e.dst = ANY(%(ids)s)) ORDER BY e.src, e.rel, e.dst",
                              {"ids": ids})
        edges = []
        for src, rel, dst, w, created, reason in rows:
            edges.append(CardEdge(src, rel, dst, float(w if w is not None else 1.0), created))
            if reasons is not None and reason:
                reasons[(src, rel, dst)] = reason
        return edges

    def forwards_to(self, ids: list[str]) -> dict[str, str]:
        return dict(self._rows("SELECT id, target FROM forwards WHERE store_id = %(s)s AND target = ANY(%(ids)s)",
                               {"ids": ids})) if ids else {}

    def similar_linked(self) -> set[tuple[str, str]]:
        return {(min(a, b), max(a, b)) for a, b in self._rows(
            "SELECT src, dst FROM edges WHERE store_id = %(s)s AND rel = 'SIMILAR_TO'")}

    def depended_on(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT DISTINCT dst FROM edges WHERE store_id = %(s)s"
                                         " AND rel IN ('DEPENDS_ON', 'CAUSED_BY') AND src <> dst")}

    def tier_counts(self) -> dict[str | None, int]:
        return dict(self._rows("SELECT tier, count(*) FROM cards WHERE store_id = %(s)s GROUP BY tier"))

    def card_census(self) -> list[CardCensus]:
        rows = self._rows("SELECT id, type, origin, session_kind, tier, created_at, access_count FROM cards"
                          " WHERE store_id = %(s)s ORDER BY id")
        return [CardCensus(*row[:6], int(row[6] or 0)) for row in rows]

    def temperatures(self) -> list[float]:
        return [r[0] for r in self._rows("SELECT temperature FROM cards WHERE store_id = %(s)s"
                                         " AND temperature IS NOT NULL ORDER BY id")]

    def session_times(self) -> list[tuple[str | None, str | None]]:
        return [(a, b) for a, b in self._rows("SELECT started_at, ingested_at FROM graph_sessions"
                                              " WHERE store_id = %(s)s ORDER BY id")]

    def card_provenance(self) -> list[CardProvenance]:
        rows = self._rows("SELECT id, tier, sources, title, created_at FROM cards WHERE store_id = %(s)s ORDER BY id")
        return [CardProvenance(cid, tier, title, created, cited(sources)) for cid, tier, sources, title, created in rows]

    def extraction_edges(self) -> list[tuple[str, str]]:
        return [(c, s) for c, s in self._rows("SELECT card_id, session_id FROM card_sessions WHERE store_id = %(s)s"
                                              " ORDER BY card_id, session_id")]

    def titled_cards(self) -> list["Card"]:
        return [card_from(row) for row in self._rows(
            f"SELECT {card_columns()} FROM cards c WHERE c.store_id = %(s)s AND coalesce(c.title, '') <> '' ORDER BY c.id")]

    def cards_from_source_format(self, source_format: str) -> list[tuple[str, str | None, str | None]]:
        return [(cid, title, session_title) for cid, title, session_title in self._rows(
            "SELECT c.id, c.title, g.title FROM card_sessions x JOIN cards c ON c.store_id = x.store_id AND c.id = x.card_id"
            " JOIN graph_sessions g ON g.store_id = x.store_id AND g.id = x.session_id"
            " WHERE x.store_id = %(s)s AND g.source_format = %(f)s ORDER BY c.id", {"f": source_format})]

    def current_card_ids_with_entities(self, scopes: list[str]) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT id FROM cards WHERE store_id = %(s)s AND scope = ANY(%(scopes)s) AND coalesce(valid_until, '') = ''"
            " AND cardinality(entities) > 0 ORDER BY id", {"scopes": scopes})]

    # --- bulk writes ------------------------------------------------------------------------

    def set_card_columns(self, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
        """Each of `columns` a row gives (not None) SET on its card."""
        wanted = [k for k in columns if k != "id"]
        unknown = set(wanted) - set(CARD_FIELDS)
        if unknown:
            raise ValueError(f"set_card_columns: no card column {sorted(unknown)}")
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in rows:
            keys = tuple(k for k in wanted if row.get(k) is not None)
            if keys:
                groups.setdefault(keys, []).append({"id": row["id"], **{k: row[k] for k in keys}})
        for keys, group in groups.items():
            sets = ", ".join(f"{k} = %({k})s" for k in keys)
            self._many(f"UPDATE cards SET {sets} WHERE store_id = %(s)s AND id = %(id)s", group)

    def remove_cards(self, ids: list[str]) -> None:
        """The cards; their edges, mentions and EXTRACTED_FROM go with them (ON DELETE CASCADE)."""
        if ids:
            self._rows("DELETE FROM cards WHERE store_id = %(s)s AND id = ANY(%(ids)s)", {"ids": ids})
            self.drop_forwards_to(ids)

    def remove_unmentioned_entities(self) -> int:
        # a category of the hierarchy ("connection pooler", issue 35) stays while an entity a
        # card mentions is related to it; the other unmentioned ones go with their relations
        return len(self._rows(
            "DELETE FROM entities e WHERE e.store_id = %(s)s AND NOT EXISTS (SELECT 1 FROM card_mentions m"
            " WHERE m.store_id = e.store_id AND m.entity = e.name) AND NOT EXISTS (SELECT 1 FROM entity_links l"
            " JOIN card_mentions m ON m.store_id = l.store_id AND m.entity = CASE WHEN l.src = e.name THEN l.dst ELSE l.src END"
            " WHERE l.store_id = e.store_id AND (l.src = e.name OR l.dst = e.name)) RETURNING e.name"))

    def add_missing_links(self, links: list["Link"]) -> None:
        self._insert_links(links, "DO NOTHING")

    def add_accesses(self, counts: Mapping[str, int], last_seen: Mapping[str, str]) -> int:
        if not counts:
            return 0
        ids = list(counts)
        return len(self._rows(
            "UPDATE cards c SET access_count = coalesce(c.access_count, 0) + u.n,"
            " last_accessed = CASE WHEN c.last_accessed IS NULL OR c.last_accessed < u.seen THEN u.seen"
            " ELSE c.last_accessed END FROM unnest(%(ids)s::text[], %(n)s::bigint[], %(seen)s::text[]) AS u(id, n, seen)"
            " WHERE c.store_id = %(s)s AND c.id = u.id RETURNING c.id",
            {"ids": ids, "n": [counts[i] for i in ids], "seen": [last_seen[i] for i in ids]}))

    # --- rebuild and reembed ---------------------------------------------------------------

    def card_count(self) -> int:
        return self._one("SELECT count(*) FROM cards WHERE store_id = %(s)s")

    def all_card_ids(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT id FROM cards WHERE store_id = %(s)s")}

    def l1_card_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM cards WHERE store_id = %(s)s ORDER BY id")]

    def delete_sessions(self, ids: list[str]) -> None:
        if ids:
            self._rows("DELETE FROM graph_sessions WHERE store_id = %(s)s AND id = ANY(%(ids)s)", {"ids": ids})
