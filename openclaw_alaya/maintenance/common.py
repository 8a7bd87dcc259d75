"""Helpers shared by the maintenance modules: clocks and bulk reads of the graph."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from ..store.embedded.graph import GraphStore

CARD_COLUMNS = [
    "id", "type", "scope", "title", "content", "importance", "created_at", "updated_at",
    "valid_until", "temperature", "tier", "access_count", "last_accessed", "origin",
]


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def as_datetime(value: datetime | float | str | None) -> datetime:
    """`now` as given by a caller: a datetime, a POSIX timestamp, an ISO string, or None."""
    if value is None:
        return utcnow()
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc)
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError(f"not a time: {value!r}")
    return parsed


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


@dataclass
class CardRow:
    """The columns maintenance needs of a card, without parsing sources/entities."""

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


def card_rows(graph: "GraphStore", ids: list[str] | None = None) -> list[CardRow]:
    fields = ", ".join(f"c.{f}" for f in CARD_COLUMNS)
    if ids is None:
        rows = graph.query(f"MATCH (c:Card) RETURN {fields} ORDER BY c.id")
    else:  # LOAD FROM: a long `IN $ids` list is a scan per id in Kuzu 0.11
        rows = graph.query(f"LOAD FROM $rows MATCH (c:Card {{id: want}}) RETURN {fields} ORDER BY c.id",
                           {"rows": _id_table(ids)})
    out = []
    for row in rows:
        d = dict(zip(CARD_COLUMNS, row))
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


def present_ids(graph: "GraphStore", ids: list[str]) -> set[str]:
    """Those of `ids` that are cards in the graph (e.g. cards to re-index that a merge or
    forget removed meanwhile are not)."""
    if not ids:
        return set()
    return {r[0] for r in graph.query("LOAD FROM $rows MATCH (c:Card {id: want}) RETURN c.id", {"rows": _id_table(ids)})}


def _id_table(ids: list[str]) -> pa.Table:
    """`ids` as a table for LOAD FROM: a long `IN $ids` list is a scan per id in Kuzu 0.11."""
    return pa.Table.from_pylist([{"want": i} for i in ids], schema=pa.schema([("want", pa.string())]))


def card_edges(graph: "GraphStore", ids: list[str] | None = None, *, reasons: dict | None = None,
               ) -> list[tuple[str, str, str, float, str | None]]:
    """(src, relation name, dst, weight, created_at) for card→card edges, all or touching `ids`;
    `reasons`, when given, gets (src, relation name, dst) → the edge's reason, for those with one."""
    ret = "RETURN a.id, label(e), e.type, b.id, e.weight, e.created_at, e.reason"
    if ids is None:
        rows = graph.query(f"MATCH (a:Card)-[e]->(b:Card) {ret}")
    else:
        table = _id_table(ids)
        found = graph.query(f"LOAD FROM $rows MATCH (a:Card {{id: want}})-[e]->(b:Card) {ret}", {"rows": table})
        found += graph.query(f"LOAD FROM $rows MATCH (a:Card)-[e]->(b:Card {{id: want}}) {ret}", {"rows": table})
        rows = list({(r[0], r[1], r[2], r[3]): r for r in found}.values())
    edges = []
    for src, label, custom, dst, w, created, reason in rows:
        name = custom if label == "CUSTOM" else label
        edges.append((src, name, dst, float(w if w is not None else 1.0), created))
        if reasons is not None and reason:
            reasons[(src, name, dst)] = reason
    return edges
