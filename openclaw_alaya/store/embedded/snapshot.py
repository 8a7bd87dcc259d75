"""An in-memory copy of what recall reads from the graph, for a process that recalls more than
once (`alaya serve`, an application calling `Alaya.recall` in a loop).

A recall on Kuzu at 100k cards spends most of its time there: opening the database read-only
(~10 ms), one primary-key lookup per card it returns and per card it explores from (~0.5 ms
each), closing it. A snapshot answers the same six questions (`get_cards`, `neighbours`,
`fanout`, `card_ids_mentioning`, `card_times`, `resolve_ids`) from memory: the cards as one Arrow
table (~70 MB at 100k), the card-card edges as numpy arrays sorted both ways, the entity
mentions, when each session started, and the forwards of merged card ids.

It is only used while the graph is the one it was read from: `graph_store.version` (the
generation every read-write open bumps, and the file's identity) is compared under the read
lock before each use, and the snapshot is read again (about a second at 100k cards, a few
milliseconds at 1k) when it differs. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ...models import Card
from ..card_rows import first_source
from .graph import (
    CARD_FIELDS,
    CARD_RELATIONS,
    CUSTOM,
    ENTITY_LINK,
    CardTimes,
    Edge,
    GraphStore,
    card_from_row,
    count_fanout,
    distinct_edges,
    version,
)
from .native import release_freed_memory


class GraphSnapshot:
    """The cards, card-card edges, entity mentions, session starts and forwards of one version of the graph."""

    def __init__(self, graph: GraphStore) -> None:
        self._read_cards(graph)
        self._read_edges(graph)
        self._read_mentions(graph)
        self._session_starts: dict[str, str | None] = dict(graph.query("MATCH (s:Session) RETURN s.id, s.started_at"))
        self._forwards: dict[str, str] = dict(graph.optional("MATCH (f:Forward) RETURN f.id, f.target"))

    def _read_cards(self, graph: GraphStore) -> None:
        columns = ", ".join(f"c.{f} AS {f}" for f in CARD_FIELDS)
        self._cards = graph.arrow(f"MATCH (c:Card) RETURN offset(id(c)) AS at, {columns}")
        ids = self._cards.column("id").to_pylist()
        self._at = self._cards.column("at").to_numpy()
        self._row_of = {cid: row for row, cid in enumerate(ids)}
        self._ids = np.empty(int(self._at.max()) + 1 if ids else 0, dtype=object)  # card id by node offset
        self._ids[self._at] = ids

    def _read_edges(self, graph: GraphStore) -> None:
        """Both directions of every card-card edge in one list sorted by the end a walk starts
        from, so the edges touching a card are one contiguous slice."""
        edges = graph.arrow(
            f"MATCH (a:Card)-[e:{'|'.join([*CARD_RELATIONS, CUSTOM])}]->(b:Card)"
            " RETURN offset(id(a)) AS a, label(e) AS label, e.type AS type, offset(id(b)) AS b, e.weight AS w,"
            " e.reason AS why"
        )
        names = [t if label == CUSTOM else label for label, t in
                 zip(edges.column("label").to_pylist(), edges.column("type").to_pylist())]
        self._rel_names = sorted(set(names))
        code = {name: i for i, name in enumerate(self._rel_names)}
        src = edges.column("a").to_numpy().astype(np.int64)
        dst = edges.column("b").to_numpy().astype(np.int64)
        rel = np.fromiter((code[n] for n in names), dtype=np.int32, count=len(names))
        weight = np.nan_to_num(edges.column("w").to_numpy(zero_copy_only=False).astype(np.float64), nan=1.0)
        start = np.concatenate([src, dst])
        order = np.argsort(start, kind="stable")
        self._from = start[order]
        self._to = np.concatenate([dst, src])[order]
        self._rel = np.concatenate([rel, rel])[order]
        self._weight = np.concatenate([weight, weight])[order]
        self._out = np.concatenate([np.ones(len(src), bool), np.zeros(len(dst), bool)])[order]  # stored from `_from`
        why = edges.column("why").to_pylist()  # the few edges with a reason, by node offsets
        self._reasons = {(int(src[i]), names[i], int(dst[i])): why[i] for i in range(len(why)) if why[i]}

    def _read_mentions(self, graph: GraphStore) -> None:
        """Lower-cased entity name -> node offsets of the cards that mention it."""
        mentions = graph.arrow("MATCH (c:Card)-[:MENTIONS]->(e:Entity) RETURN lower(e.name) AS name, offset(id(c)) AS at")
        self._mentions: dict[str, list[int]] = {}
        for name, at in zip(mentions.column("name").to_pylist(), mentions.column("at").to_pylist()):
            self._mentions.setdefault(name, []).append(at)
        self._entity_links = [(a, rel, b) for a, rel, b in
                              graph.optional(f"MATCH (a:Entity)-[r:{ENTITY_LINK}]->(b:Entity) RETURN a.name, r.type, b.name")]
        for alias, name in graph.aliases().items():  # an entity's other names find its cards too
            if alias not in self._mentions:
                self._mentions[alias] = self._mentions.get(name.lower(), [])

    def get_cards(self, ids: Iterable[str]) -> dict[str, Card]:
        rows = [self._row_of[cid] for cid in dict.fromkeys(ids) if cid in self._row_of]
        if not rows:
            return {}
        found = self._cards.take(rows).drop_columns(["at"]).to_pylist()
        return {row["id"]: card_from_row(row) for row in found}

    def card_times(self, ids: Iterable[str]) -> dict[str, CardTimes]:
        """As `GraphStore.card_times`."""
        rows = [self._row_of[cid] for cid in dict.fromkeys(ids) if cid in self._row_of]
        if not rows:
            return {}
        found = self._cards.take(rows).select(["id", "valid_from", "created_at", "sources"]).to_pylist()
        starts = self._session_starts
        return {row["id"]: CardTimes(row["valid_from"] or None, starts.get(first_source(row["sources"])) or None,
                                     row["created_at"] or None) for row in found}

    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]:
        """As `GraphStore.neighbours`."""
        return distinct_edges(self._edges_from(ids), self._ids.__getitem__, relations)

    def directed_neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float, bool]]:
        """As `GraphStore.directed_neighbours`."""
        return distinct_edges(self._edges_from(ids), self._ids.__getitem__, relations, directed=True)

    def fanout(self, ids: list[str]) -> dict[str, int]:
        """As `GraphStore.fanout`."""
        return count_fanout(self._edges_from(ids), {self._offset(cid) for cid in ids} - {None})

    def edge_reasons(self, pairs: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        """As `GraphStore.edge_reasons`."""
        found = {}
        for a, rel, b in pairs:
            at_a, at_b = self._offset(a), self._offset(b)
            reason = self._reasons.get((at_a, rel, at_b)) or self._reasons.get((at_b, rel, at_a))
            if reason:
                found[(a, rel, b)] = reason
        return found

    def card_ids_mentioning(self, names: list[str]) -> list[str]:
        found: dict[str, None] = {}
        for name in names:
            found.update(dict.fromkeys(self._ids[at] for at in self._mentions.get(name.lower(), [])))
        return list(found)

    def entity_links(self, names: list[str]) -> list[tuple[str, str, str]]:
        """As `GraphStore.entity_links`."""
        wanted = {n.lower() for n in names}
        return [link for link in self._entity_links if link[0].lower() in wanted or link[2].lower() in wanted]

    def resolve_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """As `GraphStore.resolve_ids`."""
        return {old: self._forwards[old] for old in dict.fromkeys(ids)
                if old not in self._row_of and self._forwards.get(old) in self._row_of}

    def _offset(self, card_id: str) -> int | None:
        row = self._row_of.get(card_id)
        return None if row is None else int(self._at[row])

    def _edges_from(self, ids: list[str]) -> Iterator[Edge]:
        """Every edge touching each of the cards (in order, each card once)."""
        for card_id in dict.fromkeys(ids):
            at = self._offset(card_id)
            if at is None:
                continue
            lo, hi = np.searchsorted(self._from, [at, at + 1])
            for i in range(lo, hi):
                yield card_id, self._rel_names[self._rel[i]], int(self._to[i]), float(self._weight[i]), bool(self._out[i])


GraphView = GraphStore | GraphSnapshot  # what recall reads: both answer the same six questions


class SnapshotKeeper:
    """Keeps one snapshot per data directory in a process that recalls more than once (from
    its second recall, or at once when `resident`); a one-shot CLI process reads Kuzu directly,
    since reading the snapshot costs more than one recall."""

    def __init__(self, graph_path: Path) -> None:
        self.graph_path = graph_path
        self.resident = False
        self._snapshot: GraphSnapshot | None = None
        self._version: Any = None
        self._uses = 0

    def empty(self) -> bool:
        return self._snapshot is None

    def stale(self) -> bool:
        """A snapshot is kept and the graph has changed since it was read."""
        return self._snapshot is not None and version(self.graph_path) != self._version

    @contextmanager
    def view(self, open_graph: Callable[[], GraphStore]) -> Iterator[GraphView]:
        """Call under the read lock: the snapshot when it is current, else the graph itself
        (and a fresh snapshot read from it when this process keeps one)."""
        current = version(self.graph_path)
        if self._snapshot is not None and current == self._version:
            yield self._snapshot
            return
        self._snapshot = None
        self._uses += 1
        if not (self.resident or self._uses > 1):
            with open_graph() as graph:
                yield graph
            return
        with open_graph() as graph:
            snapshot = GraphSnapshot(graph)
        release_freed_memory()  # what Kuzu's scan of every card left behind
        self._snapshot, self._version = snapshot, current
        yield snapshot
