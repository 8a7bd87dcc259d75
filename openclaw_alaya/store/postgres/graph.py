"""L2 on PostgreSQL (issue 34): the card graph as relational tables (migrations/0003_graph.sql)
behind the graph port (store/ports/graph.py), with the meaning the embedded graph gives each
operation. A walk is set-based: each hop of recall's breadth-first walk (`--rel`, `--depth`,
`from_nodes`, the session neighbours) is one query for the edges touching the whole frontier,
both ways (`neighbours`), and `explorable` one count over it (`fanout`).

A handle runs on its hold's pinned connection (db.py): inside a write hold, every statement is
part of the hold's one transaction (coordinator.py), so `with graph:` has nothing to commit
early; a host killed mid-write leaves nothing of it. Every statement names the memory
(`store_id = %(s)s`); text compared ignoring case is lowered under the database's collation
(`low`), the columns themselves being code-point ordered (COLLATE "C")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...models import INJECTABLE_ORIGINS, Card, Link
from ..card_rows import card_times_of, names_with_aliases
from ..ports.graph import CardTimes
from .curation import CurationSql
from .rows import (CARD_FIELDS, SESSION_FIELDS, USAGE, card_columns, card_from, card_values,
                   low, session_columns, session_from)
from .upkeep import UpkeepSql

if TYPE_CHECKING:
    from .db import Database

# a card of one of `origins`, or one stored before origins were recorded
_ORIGIN_IN = "(c.origin = ANY(%(origins)s) OR coalesce(c.origin, '') = '')"
_CURRENT = "(coalesce(c.valid_until, '') = '' OR c.valid_until > %(now)s)"
_SESSION_UPDATES = ", ".join(f"{f} = EXCLUDED.{f}" for f in SESSION_FIELDS[1:])


class PostgresGraph(CurationSql, UpkeepSql):
    """One memory's graph in the database, through the connection of the hold it is used in."""

    def __init__(self, db: "Database") -> None:
        self.db = db

    def __enter__(self) -> "PostgresGraph":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        return None  # the hold's transaction commits or rolls back as a whole

    # --- running statements -----------------------------------------------------------------

    def _rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of `sql`, with `%(s)s` this memory's id."""
        with self.db.connection() as conn:
            cur = conn.execute(sql, {"s": self.db.store_id, **(params or {})})
            return cur.fetchall() if cur.description else []

    def _one(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        return self._rows(sql, params)[0][0]

    def _many(self, sql: str, rows: list[dict[str, Any]]) -> None:
        """`sql` once per row (in the hold's transaction, else one of its own)."""
        if rows:
            with self.db.connection() as conn, conn.transaction(), conn.cursor() as cur:
                cur.executemany(sql, [{"s": self.db.store_id, **row} for row in rows])

    # --- schema -----------------------------------------------------------------------------

    def create_schema(self) -> None:
        """The tables are the migrations' (schema.py): nothing to make per memory."""

    # --- sessions ---------------------------------------------------------------------------

    def upsert_session(self, row: dict[str, Any]) -> None:
        self.upsert_sessions([row])

    def upsert_sessions(self, rows: list[dict[str, Any]]) -> None:
        names = ", ".join(SESSION_FIELDS)
        values = ", ".join(f"%({f})s" for f in SESSION_FIELDS)
        self._many(f"INSERT INTO graph_sessions (store_id, {names}) VALUES (%(s)s, {values})"
                   f" ON CONFLICT (store_id, id) DO UPDATE SET {_SESSION_UPDATES}",
                   [{**dict.fromkeys(SESSION_FIELDS), **row} for row in rows])

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        return self.get_sessions([session_id]).get(session_id)

    def get_sessions(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        rows = self._rows(f"SELECT {session_columns()} FROM graph_sessions s WHERE s.store_id = %(s)s"
                          " AND s.id = ANY(%(ids)s)", {"ids": list(dict.fromkeys(ids))})
        return {row[0]: session_from(row) for row in rows}

    def sessions(self) -> list[dict[str, Any]]:
        rows = self._rows(f"SELECT {session_columns()} FROM graph_sessions s WHERE s.store_id = %(s)s ORDER BY s.id")
        return [session_from(row) for row in rows]

    # --- cards ------------------------------------------------------------------------------

    def upsert_cards(self, cards: list[Card]) -> None:
        """Insert or replace by id: content replaced, usage (`USAGE`) kept for an existing card."""
        names = ", ".join(CARD_FIELDS)
        values = ", ".join(f"%({f})s" for f in CARD_FIELDS)
        updates = ", ".join(f"{f} = EXCLUDED.{f}" for f in CARD_FIELDS[1:] if f not in USAGE)
        self._many(f"INSERT INTO cards (store_id, {names}) VALUES (%(s)s, {values})"
                   f" ON CONFLICT (store_id, id) DO UPDATE SET {updates}", [card_values(c) for c in cards])
        self._mention(cards)

    def update_provenance(self, cards: list[Card]) -> None:
        """What a merge changes on stored cards (resolver.merged_card), not the whole row."""
        fields = ["sources", "tags", "entities", "importance", "updated_at", "origin"]
        sets = ", ".join(f"{f} = %({f})s" for f in fields)
        self._many(f"UPDATE cards SET {sets} WHERE store_id = %(s)s AND id = %(id)s", [card_values(c) for c in cards])
        self._mention(cards)

    def _mention(self, cards: list[Card]) -> None:
        """MENTIONS from the cards to their entities (made as needed); a name that is another
        entity's alias mentions that entity."""
        aliases = self.aliases() if any(c.entities for c in cards) else {}
        mentions = list(dict.fromkeys((c.id, aliases.get(e.lower(), e)) for c in cards for e in c.entities))
        if not mentions:
            return
        self._rows("INSERT INTO entities (store_id, name) SELECT %(s)s, n FROM unnest(%(names)s::text[]) AS n"
                   " ON CONFLICT DO NOTHING", {"names": sorted({name for _, name in mentions})})
        self._rows("INSERT INTO card_mentions (store_id, card_id, entity)"
                   " SELECT %(s)s, m.card, m.name FROM unnest(%(cards)s::text[], %(names)s::text[]) AS m(card, name)"
                   " JOIN cards c ON c.store_id = %(s)s AND c.id = m.card ON CONFLICT DO NOTHING",
                   {"cards": [c for c, _ in mentions], "names": [n for _, n in mentions]})

    def get_cards(self, ids: Iterable[str]) -> dict[str, Card]:
        """By id, in the order asked."""
        rows = self._by_ids(card_columns(), ids)
        cards = [card_from(row) for row in rows]
        return {card.id: card for card in cards}

    def _by_ids(self, columns: str, ids: Iterable[str]) -> list[tuple[Any, ...]]:
        """`columns` of the cards `c` of `ids` that exist, in the order of `ids`."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        return self._rows(f"SELECT {columns} FROM unnest(%(ids)s::text[]) WITH ORDINALITY AS w(id, n)"
                          " JOIN cards c ON c.store_id = %(s)s AND c.id = w.id ORDER BY w.n", {"ids": wanted})

    def card_times(self, ids: Iterable[str] | None = None) -> dict[str, CardTimes]:
        """What dates each of these cards (every card when None)."""
        columns = "c.id, c.valid_from, c.created_at, c.sources"
        rows = self._rows(f"SELECT {columns} FROM cards c WHERE c.store_id = %(s)s") if ids is None \
            else self._by_ids(columns, ids)
        return card_times_of(rows, lambda sessions: dict(self._rows(
            "SELECT id, started_at FROM graph_sessions WHERE store_id = %(s)s AND id = ANY(%(ids)s)",
            {"ids": sessions})))

    def card_ids_mentioning(self, names: list[str]) -> list[str]:
        """Cards linked to any of these entity names or aliases (case-insensitive)."""
        wanted = names_with_aliases(names, self.aliases())
        return [r[0] for r in self._rows(
            f"SELECT DISTINCT m.card_id FROM card_mentions m WHERE m.store_id = %(s)s AND {low('m.entity')} = ANY(%(names)s)"
            " ORDER BY m.card_id", {"names": wanted})]

    def link_entities(self, links: list[tuple[str, str, str]]) -> None:
        """Entity → entity edges (entity, relation, entity), the entities created as needed;
        an edge already there is kept once (issue 35)."""
        if not links:
            return
        aliases = self.aliases()
        rows = [{"a": aliases.get(a.lower(), a), "rel": rel, "b": aliases.get(b.lower(), b)} for a, rel, b in links]
        names = list(dict.fromkeys(n for r in rows for n in (r["a"], r["b"])))
        self._rows("INSERT INTO entities (store_id, name) SELECT %(s)s, n FROM unnest(%(names)s::text[]) AS n"
                   " ON CONFLICT DO NOTHING", {"names": names})
        self._many("INSERT INTO entity_links (store_id, src, rel, dst) VALUES (%(s)s, %(a)s, %(rel)s, %(b)s)"
                   " ON CONFLICT DO NOTHING", rows)

    def entity_links(self, names: list[str]) -> list[tuple[str, str, str]]:
        """(entity, relation, entity) edges touching these names (case-insensitive), as stored."""
        wanted = sorted({n.lower() for n in names})
        if not wanted:
            return []
        rows = self._rows(f"SELECT src, rel, dst FROM entity_links WHERE store_id = %(s)s"
                          f" AND ({low('src')} = ANY(%(names)s) OR {low('dst')} = ANY(%(names)s)) ORDER BY src, rel, dst",
                          {"names": wanted})
        return [(a, rel, b) for a, rel, b in rows]

    def aliases(self) -> dict[str, str]:
        """Lower-cased alias → the entity's name."""
        rows = self._rows(f"SELECT {low('a')}, e.name FROM entities e, unnest(e.aliases) AS a"
                          " WHERE e.store_id = %(s)s ORDER BY e.name")
        return {alias: name for alias, name in rows}

    # --- forwards: merged-away card ids ----------------------------------------------------

    def forward(self, merged: dict[str, str]) -> None:
        """Record merges (dropped id → kept id); forwards that led to a dropped card lead on to its keeper."""
        rows = [{"id": drop, "target": keep} for drop, keep in merged.items()]
        self._many("UPDATE forwards SET target = %(target)s WHERE store_id = %(s)s AND target = %(id)s", rows)
        self._many("INSERT INTO forwards (store_id, id, target) VALUES (%(s)s, %(id)s, %(target)s)"
                   " ON CONFLICT (store_id, id) DO UPDATE SET target = EXCLUDED.target", rows)

    def drop_forwards_to(self, ids: list[str]) -> None:
        if ids:
            self._rows("DELETE FROM forwards WHERE store_id = %(s)s AND target = ANY(%(ids)s)", {"ids": ids})

    def resolve_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """Old id → current id, for ids that name no card but one merged into a card that exists."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return dict(self._rows(
            "SELECT f.id, f.target FROM forwards f JOIN cards t ON t.store_id = f.store_id AND t.id = f.target"
            " WHERE f.store_id = %(s)s AND f.id = ANY(%(ids)s)"
            " AND NOT EXISTS (SELECT 1 FROM cards o WHERE o.store_id = f.store_id AND o.id = f.id)", {"ids": wanted}))

    def supersede(self, card_id: str, until: str, now: str) -> None:
        """Set `valid_until` unless already set: the first supersede wins."""
        self._rows("UPDATE cards SET valid_until = %(until)s, updated_at = %(now)s WHERE store_id = %(s)s"
                   " AND id = %(id)s AND coalesce(valid_until, '') = ''", {"id": card_id, "until": until, "now": now})

    def set_confidence(self, card_id: str, value: float, expected: float | None) -> bool:
        """Set only while the confidence is still `expected` (None: unstated); whether it was."""
        rows = self._rows("SELECT confidence FROM cards WHERE store_id = %(s)s AND id = %(id)s", {"id": card_id})
        if not rows:
            return False
        current = rows[0][0]
        if (current is None) != (expected is None) or (current is not None and abs(current - expected) > 1e-9):
            return False
        self._rows("UPDATE cards SET confidence = %(c)s WHERE store_id = %(s)s AND id = %(id)s",
                   {"id": card_id, "c": float(value)})
        return True

    # --- links ------------------------------------------------------------------------------

    def add_links(self, links: list[Link]) -> None:
        """An edge made again keeps its weight; a reason given now replaces the old one."""
        self._insert_links(links, "DO UPDATE SET reason = CASE WHEN EXCLUDED.reason = '' THEN edges.reason"
                                  " ELSE EXCLUDED.reason END")

    def _insert_links(self, links: list[Link], on_conflict: str) -> None:
        """The links between cards that exist (a link to a missing card makes nothing, as a MATCH would)."""
        rows = [{"src": link.src, "dst": link.dst, "rel": link.rel, "weight": float(link.weight),
                 "created_at": link.created_at, "reason": link.reason or ""} for link in links]
        self._many("INSERT INTO edges (store_id, src, rel, dst, weight, created_at, reason)"
                   " SELECT %(s)s, %(src)s, %(rel)s, %(dst)s, %(weight)s, %(created_at)s, %(reason)s"
                   " WHERE EXISTS (SELECT 1 FROM cards WHERE store_id = %(s)s AND id = %(src)s)"
                   " AND EXISTS (SELECT 1 FROM cards WHERE store_id = %(s)s AND id = %(dst)s)"
                   f" ON CONFLICT (store_id, src, rel, dst) {on_conflict}", rows)

    def edge_reasons(self, pairs: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        """The reasons recorded on these (card, relation, card) edges, in either direction."""
        wanted = list(dict.fromkeys(pairs))
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT p.a, e.rel, p.b, e.reason FROM unnest(%(a)s::text[], %(rel)s::text[], %(b)s::text[]) AS p(a, rel, b)"
            " JOIN edges e ON e.store_id = %(s)s AND e.rel = p.rel"
            " AND ((e.src = p.a AND e.dst = p.b) OR (e.src = p.b AND e.dst = p.a)) WHERE e.reason <> ''",
            {"a": [a for a, _, _ in wanted], "rel": [r for _, r, _ in wanted], "b": [b for _, _, b in wanted]})
        return {(a, rel, b): reason for a, rel, b, reason in rows}

    def link_to_sessions(self, rows: list[dict[str, Any]]) -> None:
        """EXTRACTED_FROM; rows are {card, session, turns} (both ends must exist)."""
        self._many("INSERT INTO card_sessions (store_id, card_id, session_id, turn_ids)"
                   " SELECT %(s)s, %(card)s, %(session)s, %(turns)s"
                   " WHERE EXISTS (SELECT 1 FROM cards WHERE store_id = %(s)s AND id = %(card)s)"
                   " AND EXISTS (SELECT 1 FROM graph_sessions WHERE store_id = %(s)s AND id = %(session)s)"
                   " ON CONFLICT (store_id, card_id, session_id) DO UPDATE SET turn_ids = EXCLUDED.turn_ids",
                   [{**row, "turns": list(row.get("turns") or [])} for row in rows])

    # --- walks ------------------------------------------------------------------------------

    _HOP = ("WITH f(id, n) AS (SELECT * FROM unnest(%(ids)s::text[]) WITH ORDINALITY),"
            " hop(src, rel, dst, weight, n) AS ("
            " SELECT e.src, e.rel, e.dst, e.weight, f.n FROM f JOIN edges e ON e.store_id = %(s)s AND e.src = f.id"
            " UNION ALL SELECT e.dst, e.rel, e.src, e.weight, f.n FROM f JOIN edges e ON e.store_id = %(s)s AND e.dst = f.id)")

    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]:
        """(id among `ids`, relation name, the other card, weight) for every card→card edge
        touching the frontier `ids`, either way: one hop of a walk for the whole frontier."""
        if not ids:
            return []
        only = " WHERE rel = ANY(%(rels)s)" if relations else ""
        rows = self._rows(f"{self._HOP} SELECT src, rel, dst, min(weight), min(n) FROM hop{only}"
                          " GROUP BY src, rel, dst ORDER BY min(n), rel, dst",
                          {"ids": list(dict.fromkeys(ids)), **({"rels": list(relations)} if relations else {})})
        return [(src, rel, dst, float(weight if weight is not None else 1.0)) for src, rel, dst, weight, _n in rows]

    def directed_neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float, bool]]:
        """As `neighbours`, each edge with whether it points from the card of `ids` (issue 35)."""
        if not ids:
            return []
        only = " WHERE rel = ANY(%(rels)s)" if relations else ""
        rows = self._rows("WITH f(id, n) AS (SELECT * FROM unnest(%(ids)s::text[]) WITH ORDINALITY),"
                          " hop(src, rel, dst, weight, n, out) AS ("
                          " SELECT e.src, e.rel, e.dst, e.weight, f.n, true FROM f JOIN edges e"
                          " ON e.store_id = %(s)s AND e.src = f.id"
                          " UNION ALL SELECT e.dst, e.rel, e.src, e.weight, f.n, false FROM f JOIN edges e"
                          f" ON e.store_id = %(s)s AND e.dst = f.id) SELECT src, rel, dst, min(weight), min(n), out FROM hop{only}"
                          " GROUP BY src, rel, dst, out ORDER BY min(n), rel, dst, out DESC",
                          {"ids": list(dict.fromkeys(ids)), **({"rels": list(relations)} if relations else {})})
        return [(src, rel, dst, float(weight if weight is not None else 1.0), bool(out))
                for src, rel, dst, weight, _n, out in rows]

    def fanout(self, ids: list[str]) -> dict[str, int]:
        """Relation name → how many cards outside `ids` it leads to from them (`explorable`)."""
        if not ids:
            return {}
        return dict(self._rows(f"{self._HOP} SELECT rel, count(DISTINCT dst) FROM hop"
                               " WHERE NOT dst = ANY(%(ids)s) GROUP BY rel", {"ids": list(dict.fromkeys(ids))}))

    # --- what session-start injects ---------------------------------------------------------

    def top_cards(self, scopes: list[str], *, by: str, limit: int, now: str,
                  origins: Sequence[str] = INJECTABLE_ORIGINS, types: Sequence[str] = ()) -> list[Card]:
        order = {
            "hot": "c.temperature DESC NULLS LAST, c.importance DESC NULLS LAST, c.updated_at DESC",
            "importance": "c.importance DESC NULLS LAST, c.created_at DESC",
            "recent": "c.created_at DESC, c.importance DESC NULLS LAST",
        }[by]
        typed = " AND c.type = ANY(%(types)s)" if types else ""
        rows = self._rows(
            f"SELECT {card_columns()} FROM cards c WHERE c.store_id = %(s)s AND c.scope = ANY(%(scopes)s)"
            f" AND {_CURRENT} AND {_ORIGIN_IN}{typed} ORDER BY {order}, c.id LIMIT %(limit)s",
            {"scopes": scopes, "now": now, "limit": limit, "origins": list(origins), "types": list(types)})
        return [card_from(row) for row in rows]

    def superseded_since(self, scopes: list[str], *, since: str, now: str, limit: int,
                         origins: Sequence[str] = INJECTABLE_ORIGINS) -> list[Card]:
        rows = self._rows(
            f"SELECT {card_columns()} FROM cards c WHERE c.store_id = %(s)s AND c.scope = ANY(%(scopes)s)"
            f" AND c.valid_until >= %(since)s AND c.valid_until <= %(now)s AND {_ORIGIN_IN}"
            " ORDER BY c.valid_until DESC, c.id LIMIT %(limit)s",
            {"scopes": scopes, "since": since, "now": now, "limit": limit, "origins": list(origins)})
        return [card_from(row) for row in rows]

    def session_cards(self, session_id: str, scopes: list[str], *, limit: int, now: str,
                      origins: Sequence[str] = INJECTABLE_ORIGINS) -> list[Card]:
        rows = self._rows(
            f"SELECT {card_columns()} FROM card_sessions x JOIN cards c ON c.store_id = x.store_id AND c.id = x.card_id"
            f" WHERE x.store_id = %(s)s AND x.session_id = %(id)s AND c.scope = ANY(%(scopes)s) AND {_CURRENT}"
            f" AND {_ORIGIN_IN} ORDER BY c.created_at DESC, c.importance DESC NULLS LAST, c.id LIMIT %(limit)s",
            {"id": session_id, "scopes": scopes, "now": now, "limit": limit, "origins": list(origins)})
        return [card_from(row) for row in rows]

    def overview(self, scopes: list[str], *, top: int, sessions: int,
                 origins: Sequence[str] = INJECTABLE_ORIGINS) -> dict[str, Any]:
        """Counts for the integrated summary (types, tags, entities, recent conversations)."""
        p = {"scopes": scopes, "top": top, "origins": list(origins), "n": sessions}
        mine = f"c.store_id = %(s)s AND c.scope = ANY(%(scopes)s) AND {_ORIGIN_IN}"
        types = self._rows(f"SELECT c.type, count(*) AS n FROM cards c WHERE {mine} GROUP BY c.type ORDER BY n DESC, c.type", p)
        tags = self._rows(f"SELECT t, count(*) AS n FROM cards c, unnest(c.tags) AS t WHERE {mine}"
                          " GROUP BY t ORDER BY n DESC, t LIMIT %(top)s", p)
        entities = self._rows(f"SELECT m.entity, count(*) AS n FROM card_mentions m JOIN cards c ON c.store_id = m.store_id"
                              f" AND c.id = m.card_id WHERE {mine} GROUP BY m.entity ORDER BY n DESC, m.entity LIMIT %(top)s", p)
        recent = self._rows(
            "SELECT s.id, s.title, s.started_at, s.ingested_at FROM graph_sessions s WHERE s.store_id = %(s)s"
            " AND s.agent_id = ANY(%(scopes)s) AND coalesce(s.kind, '') NOT IN ('cron', 'heartbeat', 'subagent')"
            # files (workspace notes, memex) are not sessions someone had: their cards speak for them
            " AND coalesce(s.source_format, '') NOT IN ('workspace', 'memex')"
            " ORDER BY s.ingested_at DESC NULLS LAST, s.id LIMIT %(n)s", p)
        titles: dict[str, list[tuple[float, str]]] = {}
        for sid, title, importance in self._rows(
                "SELECT x.session_id, c.title, c.importance FROM card_sessions x JOIN cards c ON c.store_id = x.store_id"
                f" AND c.id = x.card_id WHERE x.store_id = %(s)s AND x.session_id = ANY(%(ids)s) AND {_ORIGIN_IN}",
                {"ids": [r[0] for r in recent], "origins": list(origins)}) if recent else []:
            titles.setdefault(sid, []).append((-(importance or 0.0), title))
        return {
            "cards": sum(n for _, n in types),
            "types": [(t, n) for t, n in types],
            "tags": [(t, n) for t, n in tags],
            "entities": [(e, n) for e, n in entities],
            "sessions": [{"id": sid, "title": title, "started_at": started, "ingested_at": ingested,
                          "card_titles": [t for _, t in sorted(titles.get(sid, []))]}
                         for sid, title, started, ingested in recent],
        }

    # --- counts -----------------------------------------------------------------------------

    def freshness(self) -> list[Any]:
        return [self._one("SELECT max(ingested_at) FROM graph_sessions WHERE store_id = %(s)s"), self.card_count()]

    def counts(self) -> dict[str, int]:
        return {"sessions": self._count("graph_sessions"), "cards": self._count("cards"),
                "links": self._count("edges"), "entities": self._count("entities")}

    def _count(self, table: str) -> int:
        return self._one(f"SELECT count(*) FROM {table} WHERE store_id = %(s)s")

    def type_counts(self) -> dict[str, int]:
        return dict(self._rows("SELECT coalesce(type, ''), count(*) FROM cards WHERE store_id = %(s)s GROUP BY 1"))

    def provenance_counts(self) -> dict[str, dict[str, int]]:
        """Cards per origin and per session kind, sessions per kind ("unknown": not recorded), most first."""
        def tally(column: str, table: str) -> dict[str, int]:
            rows = self._rows(f"SELECT coalesce(nullif({column}, ''), 'unknown'), count(*) FROM {table}"
                              " WHERE store_id = %(s)s GROUP BY 1")
            return dict(sorted(((v, int(n)) for v, n in rows), key=lambda kv: (-kv[1], kv[0])))

        return {"cards_by_origin": tally("origin", "cards"), "cards_by_session_kind": tally("session_kind", "cards"),
                "sessions_by_kind": tally("kind", "graph_sessions")}

    def provenance_count(self) -> int:
        return self._count("card_sessions")

    def relation_counts(self) -> dict[str, int]:
        return dict(self._rows("SELECT rel, count(*) FROM edges WHERE store_id = %(s)s GROUP BY rel"))


class PostgresViews:
    """Recall reads the database itself: nothing is copied into memory, so there is never a
    copy to be stale (the daemon's status says "empty")."""

    resident = False

    def empty(self) -> bool:
        return True

    def stale(self) -> bool:
        return False
