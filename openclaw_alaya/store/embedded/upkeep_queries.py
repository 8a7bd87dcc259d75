"""Kuzu's side of the upkeep port (store/ports/upkeep.py): the Cypher behind maintenance's
bulk reads and rewrites. Mixed into `GraphStore`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..ports.upkeep import CardCensus, CardEdge, CardProvenance, CardRow
from . import bulk
from .columns import CARD_FIELDS, CARD_RELATIONS, CUSTOM, card_from_row

if TYPE_CHECKING:
    from ...models import Card, Link

_CARD_COLUMNS = [f.name for f in fields(CardRow)]


class UpkeepQueries:
    """Upkeep operations on an open Kuzu connection (`self._rows`, `self.optional`)."""

    # --- reads ------------------------------------------------------------------------------

    def card_rows(self, ids: list[str] | None = None) -> list[CardRow]:
        cols = ", ".join(f"c.{f}" for f in _CARD_COLUMNS)
        if ids is None:
            rows = self._rows(f"MATCH (c:Card) RETURN {cols} ORDER BY c.id")
        else:  # LOAD FROM: a long `IN $ids` list is a scan per id in Kuzu 0.11
            rows = self._rows(f"LOAD FROM $rows MATCH (c:Card {{id: want}}) RETURN {cols} ORDER BY c.id",
                              {"rows": bulk.id_table(ids)})
        out = []
        for row in rows:
            d = dict(zip(_CARD_COLUMNS, row))
            d["importance"] = float(d["importance"] if d["importance"] is not None else 0.5)
            d["temperature"] = float(d["temperature"] if d["temperature"] is not None else 0.5)
            d["tier"] = d["tier"] or "WARM"
            d["access_count"] = int(d["access_count"] or 0)
            d["type"] = d["type"] or "concept"
            d["scope"] = d["scope"] or "shared"
            d["title"] = d["title"] or ""
            d["content"] = d["content"] or ""
            d["origin"] = d["origin"] or None
            out.append(CardRow(**d))
        return out

    def present_ids(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        return {r[0] for r in self._rows("LOAD FROM $rows MATCH (c:Card {id: want}) RETURN c.id",
                                         {"rows": bulk.id_table(ids)})}

    def card_edges(self, ids: list[str] | None = None, *,
                   reasons: dict[tuple[str, str, str], str] | None = None) -> list[CardEdge]:
        ret = "RETURN a.id, label(e), e.type, b.id, e.weight, e.created_at, e.reason"
        if ids is None:
            rows = self._rows(f"MATCH (a:Card)-[e]->(b:Card) {ret}")
        else:
            table = bulk.id_table(ids)
            found = self._rows(f"LOAD FROM $rows MATCH (a:Card {{id: want}})-[e]->(b:Card) {ret}", {"rows": table})
            found += self._rows(f"LOAD FROM $rows MATCH (a:Card)-[e]->(b:Card {{id: want}}) {ret}", {"rows": table})
            rows = list({(r[0], r[1], r[2], r[3]): r for r in found}.values())
        edges = []
        for src, label, custom, dst, w, created, reason in rows:
            name = custom if label == CUSTOM else label
            edges.append(CardEdge(src, name, dst, float(w if w is not None else 1.0), created))
            if reasons is not None and reason:
                reasons[(src, name, dst)] = reason
        return edges

    def forwards_to(self, ids: list[str]) -> dict[str, str]:
        rows = self.optional("UNWIND $ids AS want MATCH (f:Forward) WHERE f.target = want RETURN f.id, f.target",
                             {"ids": ids}) if ids else []
        return dict(rows)

    def similar_linked(self) -> set[tuple[str, str]]:
        return {(min(a, b), max(a, b)) for a, b in self._rows("MATCH (a:Card)-[:SIMILAR_TO]->(b:Card) RETURN a.id, b.id")}

    def depended_on(self) -> set[str]:
        found = {r[0] for r in self._rows("MATCH (a:Card)-[:DEPENDS_ON]->(b:Card) WHERE a.id <> b.id RETURN DISTINCT b.id")}
        found |= {r[0] for r in self._rows("MATCH (a:Card)-[:CAUSED_BY]->(b:Card) WHERE a.id <> b.id RETURN DISTINCT b.id")}
        return found

    def tier_counts(self) -> dict[str | None, int]:
        return dict(self._rows("MATCH (c:Card) RETURN c.tier, count(*)"))

    def card_census(self) -> list[CardCensus]:
        rows = self._rows("MATCH (c:Card) RETURN c.id, c.type, c.origin, c.session_kind, c.tier, c.created_at,"
                          " c.access_count ORDER BY c.id")
        return [CardCensus(*row[:6], int(row[6] or 0)) for row in rows]

    def temperatures(self) -> list[float]:
        return [r[0] for r in self._rows("MATCH (c:Card) RETURN c.temperature") if r[0] is not None]

    def session_times(self) -> list[tuple[str | None, str | None]]:
        return [(started, ingested) for started, ingested in self._rows("MATCH (s:Session) RETURN s.started_at, s.ingested_at")]

    def card_provenance(self) -> list[CardProvenance]:
        rows = self._rows("MATCH (c:Card) RETURN c.id, c.tier, c.sources, c.title, c.created_at")
        return [CardProvenance(cid, tier, title, created, _cited(sources)) for cid, tier, sources, title, created in rows]

    def extraction_edges(self) -> list[tuple[str, str]]:
        return [(cid, sid) for cid, sid in self._rows("MATCH (c:Card)-[:EXTRACTED_FROM]->(s:Session) RETURN c.id, s.id")]

    def titled_cards(self) -> list["Card"]:
        cols = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        return [card_from_row(dict(zip(CARD_FIELDS, row))) for row in self._rows(
            f"MATCH (c:Card) WHERE c.title IS NOT NULL AND c.title <> '' RETURN {cols} ORDER BY c.id")]

    def cards_from_source_format(self, source_format: str) -> list[tuple[str, str | None, str | None]]:
        rows = self._rows(
            "MATCH (c:Card)-[e:EXTRACTED_FROM]->(s:Session) WHERE s.source_format = $f RETURN c.id, c.title, s.title",
            {"f": source_format})
        return [(cid, title, session_title) for cid, title, session_title in rows]

    def current_card_ids_with_entities(self, scopes: list[str]) -> list[str]:
        return [r[0] for r in self._rows(
            "MATCH (c:Card) WHERE c.scope IN $scopes AND (c.valid_until IS NULL OR c.valid_until = '')"
            " AND size(c.entities) > 0 RETURN c.id", {"scopes": scopes})]

    # --- bulk writes ------------------------------------------------------------------------

    def set_card_columns(self, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
        # a None value is left out: Kuzu 0.11.3 can corrupt a STRING column written NULL (columns.py)
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in rows:
            keys = tuple(k for k in columns if k != "id" and row.get(k) is not None)
            if keys:
                groups.setdefault(keys, []).append({"id": row["id"], **{k: row[k] for k in keys}})
        for keys, group in groups.items():
            sets = ", ".join(f"c.{k} = {k}" for k in keys)
            bulk.load(self._rows, f"LOAD FROM $rows MATCH (c:Card {{id: id}}) SET {sets}", group,
                      bulk.card_column_types(["id", *keys]))

    def remove_cards(self, ids: list[str]) -> None:
        if ids:
            bulk.load(self._rows, "LOAD FROM $rows MATCH (c:Card {id: id}) DETACH DELETE c", [{"id": i} for i in ids],
                      {"id": pa.string()})
            self.drop_forwards_to(ids)

    def remove_unmentioned_entities(self) -> int:
        # a category of the hierarchy ("connection pooler", issue 35) stays while an entity a
        # card mentions is related to it; the other unmentioned ones go with their relations
        unused = ("MATCH (e:Entity) WHERE NOT EXISTS { MATCH (:Card)-[:MENTIONS]->(e) }"
                  " AND NOT EXISTS { MATCH (e)-[:ENTITY_LINK]-(o:Entity)<-[:MENTIONS]-(:Card) }")
        gone = self._rows(f"{unused} RETURN e.name")
        if gone:
            self._rows(f"{unused} DETACH DELETE e")
        return len(gone)

    def add_missing_links(self, links: list["Link"]) -> None:
        # the MERGE of GraphStore.add_links, without its ON MATCH: an existing edge is kept as it is
        by_table: dict[str, list[dict[str, Any]]] = {}
        for link in links:
            table = link.rel if link.rel in CARD_RELATIONS else CUSTOM
            by_table.setdefault(table, []).append(
                {"src": link.src, "dst": link.dst, "rel": link.rel, "weight": float(link.weight),
                 "created_at": link.created_at, "reason": link.reason or ""})
        types = {"src": pa.string(), "dst": pa.string(), "rel": pa.string(), "weight": pa.float64(),
                 "created_at": pa.string(), "reason": pa.string()}
        for table, rows in by_table.items():
            edge = f"[e:{CUSTOM} {{type: rel}}]" if table == CUSTOM else f"[e:{table}]"
            bulk.load(self._rows, f"LOAD FROM $rows MATCH (a:Card {{id: src}}) MATCH (b:Card {{id: dst}}) MERGE (a)-{edge}->(b)"
                                  " ON CREATE SET e.weight = weight, e.created_at = created_at, e.reason = reason", rows, types)

    def add_accesses(self, counts: Mapping[str, int], last_seen: Mapping[str, str]) -> int:
        if not counts:
            return 0
        rows = pa.Table.from_pylist(
            [{"id": cid, "n": n, "seen": last_seen[cid]} for cid, n in counts.items()],
            schema=pa.schema([("id", pa.string()), ("n", pa.int64()), ("seen", pa.string())]))
        # ISO times in UTC with the same shape compare as strings; a card merged or forgotten since
        # it was recalled matches nothing
        return self._rows(
            "LOAD FROM $rows MATCH (c:Card {id: id}) SET c.access_count = coalesce(c.access_count, 0) + n,"
            " c.last_accessed = CASE WHEN c.last_accessed IS NULL OR c.last_accessed < seen THEN seen"
            " ELSE c.last_accessed END RETURN count(*)", {"rows": rows})[0][0]

    # --- rebuild and reembed (store/ports/upkeep.py, the block of the same name) ------------

    def card_count(self) -> int:
        return self._rows("MATCH (c:Card) RETURN count(c)")[0][0]

    def all_card_ids(self) -> set[str]:
        return {r[0] for r in self._rows("MATCH (c:Card) RETURN c.id")}

    def l1_card_ids(self) -> list[str]:
        cypher = "MATCH (c:Card) RETURN c.id ORDER BY c.id"
        return [r[0] for r in self._rows(cypher)]

    def delete_sessions(self, ids: list[str]) -> None:
        self._rows("MATCH (s:Session) WHERE s.id IN $ids DETACH DELETE s", {"ids": ids})


def _cited(sources: str | None) -> frozenset[str] | None:
    """The sessions a card's stored sources JSON names; None when it cannot be read."""
    try:
        return frozenset(s["session_id"] for s in json.loads(sources or "[]"))
    except (ValueError, TypeError, KeyError):
        return None
