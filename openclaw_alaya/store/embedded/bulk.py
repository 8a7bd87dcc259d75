"""Bulk writes to the graph for maintenance, through `LOAD FROM` an Arrow table: about ten
times faster in Kuzu 0.11 than `UNWIND $list` (3.4 s → 0.1 s for 2,800 edges on 10,000 cards),
which is what keeps introspect's write-lock holds short. Each MATCH is its own clause: one
combined `MATCH (a …), (b …)` after LOAD FROM is planned as a join over all cards."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..models import Link
from ..store.embedded.graph import CARD_RELATIONS, CUSTOM

_CHUNK = 20_000


def _table(rows: list[dict[str, Any]], types: dict[str, pa.DataType]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=pa.schema([(k, t) for k, t in types.items()]))


def _load(graph: Any, cypher: str, rows: list[dict[str, Any]], types: dict[str, pa.DataType]) -> None:
    for start in range(0, len(rows), _CHUNK):
        graph.query(cypher, {"rows": _table(rows[start:start + _CHUNK], types)})


def set_cards(graph: Any, rows: list[dict[str, Any]], types: dict[str, pa.DataType]) -> None:
    """rows: {"id", column: value…}; every column other than id is SET on the card. A None value
    leaves that field as it is (Kuzu 0.11.3 can corrupt a STRING column written NULL)."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        keys = tuple(k for k in types if k != "id" and row.get(k) is not None)
        if keys:
            groups.setdefault(keys, []).append({"id": row["id"], **{k: row[k] for k in keys}})
    for keys, group in groups.items():
        sets = ", ".join(f"c.{k} = {k}" for k in keys)
        _load(graph, f"LOAD FROM $rows MATCH (c:Card {{id: id}}) SET {sets}", group,
              {"id": pa.string(), **{k: types[k] for k in keys}})


def delete_cards(graph: Any, ids: list[str]) -> None:
    """The cards, their edges, and the forwards of merged ids to them (GraphStore.forward)."""
    if ids:
        _load(graph, "LOAD FROM $rows MATCH (c:Card {id: id}) DETACH DELETE c", [{"id": i} for i in ids], {"id": pa.string()})
        graph.drop_forwards_to(ids)


def add_links(graph: Any, links: list[Link]) -> None:
    """Like GraphStore.add_links (MERGE: an existing edge is kept as it is), in bulk."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        table = link.rel if link.rel in CARD_RELATIONS else CUSTOM
        by_table.setdefault(table, []).append(
            {"src": link.src, "dst": link.dst, "rel": link.rel, "weight": float(link.weight), "created_at": link.created_at,
             "reason": link.reason or ""})
    types = {"src": pa.string(), "dst": pa.string(), "rel": pa.string(), "weight": pa.float64(), "created_at": pa.string(),
             "reason": pa.string()}
    for table, rows in by_table.items():
        edge = f"[e:{CUSTOM} {{type: rel}}]" if table == CUSTOM else f"[e:{table}]"
        _load(graph, f"LOAD FROM $rows MATCH (a:Card {{id: src}}) MATCH (b:Card {{id: dst}}) MERGE (a)-{edge}->(b)"
                     " ON CREATE SET e.weight = weight, e.created_at = created_at, e.reason = reason", rows, types)
