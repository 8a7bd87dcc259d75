"""L2: the card graph in Kuzu (`graph.kuzu`).

A GraphStore is opened inside the data directory lock and closed before the lock is released
(docs/architecture.md, "The lock protocol"): read-only under the shared lock, read-write under
the exclusive one. Card and Session nodes, core relation tables, and one CUSTOM table whose
`type` names the relation; Forward nodes keep the ids of cards merged into others resolving
(`forward`, `resolve_ids`).
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (kuzu scans Python objects through importlib.util)
import os
import struct
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import kuzu

from ...errors import DamagedStoreError
from ...models import INJECTABLE_ORIGINS, Card, Link
from ..fsutil import FILE_MODE, atomic_write
from .columns import (_CARD_TYPES, _SESSION_FIELDS, _SESSION_NULLABLE, _SESSION_TYPES, CARD_FIELDS, CARD_RELATIONS,
                      CUSTOM, _card_row, _loaded, _stored, card_from_row)
from ..card_rows import card_times_of, names_with_aliases
from ..ports.graph import CardTimes
from .curation_queries import CurationQueries
from .failures import damaged, disk_error
from .upkeep_queries import UpkeepQueries

_BUFFER_POOL_BYTES = 512 * 1024 * 1024
_LOOKUP_MAX = 400  # up to this many ids, cards are read by primary key one by one…
_LOOKUP_ROWS = 250  # …when the table has more than this many cards per id (a lookup costs ~250 scanned rows)

# entity → entity relations (distill/entity_links.py: IS_A, PART_OF, …), the name in `type`
ENTITY_LINK = "ENTITY_LINK"
ENTITY_LINK_TABLE = f"CREATE REL TABLE IF NOT EXISTS {ENTITY_LINK}(FROM Entity TO Entity, type STRING)"

_SCHEMA = [
    "CREATE NODE TABLE IF NOT EXISTS Card(id STRING PRIMARY KEY, title STRING, content STRING,"
    " type STRING, tags STRING[], entities STRING[], importance DOUBLE, scope STRING,"
    " sources STRING, created_at STRING, updated_at STRING, valid_from STRING,"
    " valid_until STRING, temperature DOUBLE, tier STRING, access_count INT64,"
    " last_accessed STRING, origin STRING, session_kind STRING, kind STRING, confidence DOUBLE,"
    " occurred STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Session(id STRING PRIMARY KEY, agent_id STRING,"
    " started_at STRING, ingested_at STRING, path STRING, title STRING, source_format STRING,"
    " turn_count INT64, distilled_turns INT64, last_card STRING, kind STRING, parent STRING, channel STRING,"
    " summary STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Entity(name STRING PRIMARY KEY, type STRING, aliases STRING[])",
    # a card merged into another (introspect's consolidate): its old id still resolves (`forward`)
    "CREATE NODE TABLE IF NOT EXISTS Forward(id STRING PRIMARY KEY, target STRING)",
    *[
        f"CREATE REL TABLE IF NOT EXISTS {rel}(FROM Card TO Card, weight DOUBLE, created_at STRING, reason STRING)"
        for rel in CARD_RELATIONS
    ],
    f"CREATE REL TABLE IF NOT EXISTS {CUSTOM}(FROM Card TO Card, type STRING, weight DOUBLE,"
    " created_at STRING, reason STRING)",
    "CREATE REL TABLE IF NOT EXISTS EXTRACTED_FROM(FROM Card TO Session, turn_ids STRING[])",
    "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Card TO Entity)",
    ENTITY_LINK_TABLE,
]

# What stores made by earlier versions lack, added on their next read-write open (`_migrate`);
# each statement is idempotent. Readers of a store not migrated yet see no forwards, no entity
# types and no aliases (`optional`); the provenance columns are read everywhere, so a read of
# an old store is refused until `alaya init` or a write upgrades it (`schema_current`,
# backend.py `_check_readable`).
_MIGRATIONS = [
    "CREATE NODE TABLE IF NOT EXISTS Forward(id STRING PRIMARY KEY, target STRING)",
    "ALTER TABLE Entity ADD IF NOT EXISTS type STRING DEFAULT ''",
    "ALTER TABLE Entity ADD IF NOT EXISTS aliases STRING[] DEFAULT []",
    "ALTER TABLE Card ADD IF NOT EXISTS origin STRING DEFAULT ''",
    "ALTER TABLE Card ADD IF NOT EXISTS session_kind STRING DEFAULT ''",
    "ALTER TABLE Session ADD IF NOT EXISTS kind STRING DEFAULT ''",
    "ALTER TABLE Session ADD IF NOT EXISTS parent STRING DEFAULT ''",
    # 3: workspace cards (docs/workspace.md)
    "ALTER TABLE Card ADD IF NOT EXISTS kind STRING DEFAULT ''",
    "ALTER TABLE Card ADD IF NOT EXISTS confidence DOUBLE",
    "ALTER TABLE Card ADD IF NOT EXISTS occurred STRING DEFAULT ''",
    # 4: the seed's contract (issue 17)
    "ALTER TABLE Session ADD IF NOT EXISTS channel STRING DEFAULT ''",
    "ALTER TABLE Session ADD IF NOT EXISTS summary STRING DEFAULT ''",
    *[f"ALTER TABLE {rel} ADD IF NOT EXISTS reason STRING DEFAULT ''" for rel in [*CARD_RELATIONS, CUSTOM]],
    # 5: entity → entity relations (issue 35)
    ENTITY_LINK_TABLE,
]
# Written beside the graph once its schema is `_MIGRATIONS` complete; bumped with them.
SCHEMA_VERSION = "5"
_MIGRATED: set[tuple[int, int]] = set()  # (device, inode) of graph files this process has migrated


def _assignments(var: str, source: str, types: dict[str, str], fields: list[str]) -> str:
    """`n.f = CAST(r.f AS T), …`: the casts let Kuzu bind parameters of any row."""
    return ", ".join(f"{var}.{f} = CAST({source}.{f} AS {types[f]})" for f in fields)


# a card of one of `$origins`, or one stored before origins were recorded ("")
_ORIGIN_IN = "(c.origin IN $origins OR c.origin = '' OR c.origin IS NULL)"


# (from card id, relation name, the other card's node offset, weight, whether the edge points
# from that card to the other as stored)
Edge = tuple[str, str, int, float, bool]


def distinct_edges(edges: Iterable[Edge], id_at: Callable[[int], str | None],
                   relations: list[str] | None, directed: bool = False) -> list[tuple[Any, ...]]:
    """`neighbours` from edges on node offsets: other ends named, unwanted relations and
    repeats dropped (GraphStore and graph_snapshot.GraphSnapshot share it); `directed` keeps
    each edge's direction (`directed_neighbours`), so an edge each way is two results."""
    wanted = set(relations) if relations else None
    seen: set[tuple[str, str, str, bool]] = set()
    result: list[tuple[Any, ...]] = []
    for src, rel, dst_at, weight, out in edges:
        dst = id_at(dst_at)
        key = (src, rel, dst, out and directed)
        if dst is None or (wanted is not None and rel not in wanted) or key in seen:
            continue
        seen.add(key)
        result.append((src, rel, dst, weight, out) if directed else (src, rel, dst, weight))
    return result


def count_fanout(edges: Iterable[Edge], inside: set[int]) -> dict[str, int]:
    """`fanout` from edges on node offsets: distinct other ends outside `inside`, per relation."""
    targets: dict[str, set[int]] = {}
    for _src, rel, dst_at, _w, _out in edges:
        if dst_at not in inside:
            targets.setdefault(rel, set()).add(dst_at)
    return {rel: len(found) for rel, found in targets.items()}


def version(path: Path) -> tuple[Any, ...]:
    """Changes whenever the graph may have: the generation every read-write open bumps, and
    the identity of the file and its WAL (a copy renamed over it, a replayed transaction)."""
    def stat(p: Path) -> tuple[int, ...] | None:
        try:
            st = os.stat(p)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    generation = _generation_file(path)
    try:
        count = generation.read_text()
    except (FileNotFoundError, OSError):
        count = ""
    return (count, stat(path), stat(path.with_name(path.name + ".wal")))


_PAGE = 4096
_MAGIC = b"KUZU"


def damage(path: Path) -> str | None:
    """What is wrong with the graph file, read from its header page before Kuzu opens it
    (Kuzu reports a truncated file as a runtime error at best and segfaults at worst); None
    when it looks whole. Kuzu 0.11 writes `KUZU`, the storage version (u64), then the catalog's
    and the metadata's page ranges (start, count: u32 each) that must lie inside the file."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(28)
    except FileNotFoundError:
        return "missing"
    if len(head) < 28 or head[:4] != _MAGIC:
        return "not a Kuzu database (its header is gone)"
    catalog_start, catalog_pages, meta_start, meta_pages = struct.unpack("<4I", head[12:28])
    pages = max(catalog_start + catalog_pages, meta_start + meta_pages)
    if size % _PAGE or size < pages * _PAGE:
        return f"truncated ({size} bytes, its header needs {pages * _PAGE})"
    return None


def _open_failure(exc: Exception, path: Path) -> Exception:
    """Why Kuzu could not open `path`: a full or read-only disk, a lock another process holds
    (left as Kuzu says it), a cut-off checkpoint a read-only open cannot replay (left to the
    backend), or else a damaged file, named with `alaya rebuild` (issue 30 class 11)."""
    text = str(exc)
    if "lock" in text.lower() or "shadow" in text.lower():
        return exc
    return disk_error(exc, path) or damaged(path, " ".join(text.split())[:160] or type(exc).__name__)


def _migrate(path: Path, conn: Any) -> None:
    """Bring a store made by an earlier version up to `_SCHEMA` (once per file and process:
    the catalog look costs a few ms). A store without tables yet is left to `create_schema`."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    key = (st.st_dev, st.st_ino)
    if key in _MIGRATED:
        return
    tables = {row[0] for row in conn.execute("CALL show_tables() RETURN name").get_all()}
    if "Entity" in tables:
        for statement in _MIGRATIONS:
            conn.execute(statement)
    if tables:
        _MIGRATED.add(key)
        mark_schema(path)


def _schema_file(path: Path) -> Path:
    return path.with_name(path.name + ".schema")


def mark_schema(path: Path) -> None:
    """Record that the graph at `path` has the whole schema (`SCHEMA_VERSION`)."""
    if not schema_current(path):
        try:
            atomic_write(_schema_file(path), SCHEMA_VERSION)
        except OSError:
            pass  # a read-only directory: its readers upgrade nothing and read what is there


def schema_current(path: Path) -> bool:
    """Whether the graph needs no upgrade before it is read (no graph yet: nothing to upgrade)."""
    try:
        return _schema_file(path).read_text() == SCHEMA_VERSION
    except OSError:
        return not path.exists()


def _generation_file(path: Path) -> Path:
    return path.with_name(path.name + ".gen")


def _bump_generation(path: Path) -> None:
    """Count read-write opens (under the write lock, so no two at once). A file's times alone
    can miss a same-size write within one clock tick of a reader's look."""
    generation = _generation_file(path)
    try:
        count = int(generation.read_text() or 0)
    except (FileNotFoundError, ValueError, OSError):
        count = 0
    tmp = generation.with_name(f".{generation.name}.tmp")  # one name: a killed bump's leftover is reused
    try:  # replaced, never rewritten in place, so a reader sees the old count or the new one;
        # not fsynced: after a crash no process holds a snapshot to compare it with
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w") as handle:
            handle.write(str(count + 1))
        os.replace(tmp, generation)
    except OSError:  # the parent is missing: Kuzu reports that better
        tmp.unlink(missing_ok=True)


class GraphStore(CurationQueries, UpkeepQueries):
    """Kuzu over `graph.kuzu`, opened on first use and closed by `close` or the end of a `with`
    block. `Memory.reading` and `Memory.writing` hand one out inside the lock, so Kuzu is only
    ever open under it, and not at all when a hold does not touch the graph."""

    def __init__(self, path: Path, *, read_only: bool, atomic: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._atomic = atomic and not read_only
        self._open: tuple[Any, Any] | None = None  # (database, connection) while open
        self._prepared: dict[str, Any] = {}
        self._cards_total: int | None = None

    @property
    def _conn(self) -> Any:
        """The connection, opening the database first if needed. With `atomic`, everything
        until `close` is one transaction: committed on a normal close, rolled back on an
        exception, and never half-applied by a crash (store/journal.py)."""
        if self._open is None:
            broken = damage(self.path) if self.read_only or self.path.exists() else None
            if broken:
                raise DamagedStoreError(f"{self.path} is damaged ({broken}); run `alaya rebuild` to derive it again from raw/")
            if not self.read_only:
                _bump_generation(self.path)  # before any change: a reader's snapshot must not outlive it
            try:
                db = kuzu.Database(str(self.path), read_only=self.read_only, buffer_pool_size=_BUFFER_POOL_BYTES)
            except (RuntimeError, ValueError, MemoryError) as exc:  # a garbled catalog can read as a huge size
                raise _open_failure(exc, self.path) from None
            conn = kuzu.Connection(db)
            self._open = (db, conn)
            self._prepared, self._cards_total = {}, None
            if not self.read_only:
                _migrate(self.path, conn)
            if self._atomic:
                conn.execute("BEGIN TRANSACTION")
        return self._open[1]

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(commit=exc_type is None)

    def close(self, *, commit: bool = True) -> None:
        """Commit (or roll back) and close, if open; a later use opens it again."""
        if self._open is None:
            return
        db, conn = self._open
        self._open = None
        try:
            if self._atomic:
                conn.execute("COMMIT" if commit else "ROLLBACK")
        finally:
            conn.close()
            db.close()

    def create_schema(self) -> None:
        for statement in _SCHEMA:
            self._conn.execute(statement)
        mark_schema(self.path)

    def upgrade(self) -> None:
        """Open read-write, which brings an earlier store's schema up to date (`_migrate`)."""
        assert not self.read_only
        self._conn  # noqa: B018 - opening is the upgrade

    def optional(self, cypher: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """`query` for what a store of an earlier version may lack (Forward, entity types and
        aliases, `_MIGRATIONS`): no rows until its next read-write open adds them."""
        try:
            return self._rows(cypher, params)
        except RuntimeError as exc:
            if "does not exist" in str(exc) or "Cannot find property" in str(exc):
                return []
            raise

    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self._conn.execute(query, params or {}).get_all()

    def query(self, cypher: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Rows of any Cypher statement (maintenance modules keep their queries to themselves)."""
        return self._rows(cypher, params)

    def arrow(self, cypher: str) -> Any:
        """A whole result as one Arrow table (bulk reads: graph_snapshot.py)."""
        return self._conn.execute(cypher).get_as_arrow()

    # --- sessions -------------------------------------------------------------------------

    def upsert_session(self, row: dict[str, Any]) -> None:
        self.upsert_sessions([row])

    def upsert_sessions(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        sets = _assignments("s", "r", _SESSION_TYPES, _SESSION_FIELDS[1:])
        self._conn.execute(
            f"UNWIND $rows AS r MERGE (s:Session {{id: r.id}}) SET {sets}",
            {"rows": [_stored({**dict.fromkeys(_SESSION_FIELDS), **row}, _SESSION_TYPES) for row in rows]},
        )

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        fields = ", ".join(f"s.{f}" for f in _SESSION_FIELDS)
        rows = self._rows(f"MATCH (s:Session {{id: $id}}) RETURN {fields}", {"id": session_id})
        return _loaded(dict(zip(_SESSION_FIELDS, rows[0])), _SESSION_NULLABLE) if rows else None

    def get_sessions(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """`get_session` for many ids in one query."""
        if not ids:
            return {}
        fields = ", ".join(f"s.{f}" for f in _SESSION_FIELDS)
        rows = self._rows(f"MATCH (s:Session) WHERE s.id IN $ids RETURN {fields}", {"ids": list(dict.fromkeys(ids))})
        found = (_loaded(dict(zip(_SESSION_FIELDS, r)), _SESSION_NULLABLE) for r in rows)
        return {row["id"]: row for row in found}

    def sessions(self) -> list[dict[str, Any]]:
        fields = ", ".join(f"s.{f}" for f in _SESSION_FIELDS)
        rows = self._rows(f"MATCH (s:Session) RETURN {fields} ORDER BY s.id")
        return [_loaded(dict(zip(_SESSION_FIELDS, r)), _SESSION_NULLABLE) for r in rows]

    # --- cards ----------------------------------------------------------------------------

    def upsert_cards(self, cards: list[Card]) -> None:
        """MERGE by id: content fields are replaced, usage fields kept for existing cards."""
        if not cards:
            return
        rows = [_card_row(card) for card in cards]
        usage = {"created_at", "temperature", "tier", "access_count", "last_accessed"}
        on_create = _assignments("c", "r", _CARD_TYPES, CARD_FIELDS[1:])
        on_match = _assignments("c", "r", _CARD_TYPES, [f for f in CARD_FIELDS[1:] if f not in usage])
        self._conn.execute(
            f"UNWIND $rows AS r MERGE (c:Card {{id: r.id}}) ON CREATE SET {on_create} ON MATCH SET {on_match}",
            {"rows": rows},
        )
        self._mention(cards)

    def update_provenance(self, cards: list[Card]) -> None:
        """Set what a merge changes on stored cards (resolver.merged_card: sources, tags,
        entities, importance, updated_at), not the whole row: a row rewrite makes Kuzu's
        checkpoint rewrite the long text columns as well (a 0.2 s close at 10k cards)."""
        if not cards:
            return
        fields = ["sources", "tags", "entities", "importance", "updated_at", "origin"]
        rows = [{key: value for key, value in _card_row(card).items() if key in ("id", *fields)} for card in cards]
        self._conn.execute(
            f"UNWIND $rows AS r MATCH (c:Card {{id: r.id}}) SET {_assignments('c', 'r', _CARD_TYPES, fields)}",
            {"rows": rows},
        )
        self._mention(cards)

    def _mention(self, cards: list[Card]) -> None:
        """MENTIONS edges from the cards to their entities (created as needed); a name that is
        another entity's alias (`alaya entities alias`) mentions that entity."""
        aliases = self.aliases() if any(c.entities for c in cards) else {}
        mentions = [{"card": c.id, "name": aliases.get(e.lower(), e)} for c in cards for e in c.entities]
        if mentions:
            self._conn.execute(
                "UNWIND $rows AS r MERGE (e:Entity {name: r.name})"
                " ON CREATE SET e.type = '', e.aliases = CAST([] AS STRING[])", {"rows": mentions}
            )
            self._conn.execute(
                "UNWIND $rows AS r MATCH (c:Card {id: r.card}), (e:Entity {name: r.name})"
                " MERGE (c)-[:MENTIONS]->(e)",
                {"rows": mentions},
            )

    def link_entities(self, links: list[tuple[str, str, str]]) -> None:
        """Entity → entity edges (entity, relation, entity), the entities created as needed;
        an edge already there is kept once (issue 35)."""
        if not links:
            return
        aliases = self.aliases()
        rows = [{"a": aliases.get(a.lower(), a), "rel": rel, "b": aliases.get(b.lower(), b)} for a, rel, b in links]
        names = [{"name": n} for n in dict.fromkeys(n for r in rows for n in (r["a"], r["b"]))]
        self._conn.execute("UNWIND $rows AS r MERGE (e:Entity {name: r.name})"
                           " ON CREATE SET e.type = '', e.aliases = CAST([] AS STRING[])", {"rows": names})
        self._conn.execute(f"UNWIND $rows AS r MATCH (a:Entity {{name: r.a}}), (b:Entity {{name: r.b}})"
                           f" MERGE (a)-[:{ENTITY_LINK} {{type: r.rel}}]->(b)", {"rows": rows})

    def entity_links(self, names: list[str]) -> list[tuple[str, str, str]]:
        """(entity, relation, entity) edges touching these names (case-insensitive), as stored."""
        wanted = sorted({n.lower() for n in names})
        if not wanted:
            return []
        rows = self.optional(f"MATCH (a:Entity)-[r:{ENTITY_LINK}]->(b:Entity)"
                             " WHERE lower(a.name) IN $names OR lower(b.name) IN $names RETURN a.name, r.type, b.name",
                             {"names": wanted})
        return [(a, rel, b) for a, rel, b in rows]

    def get_cards(self, ids: Iterable[str]) -> dict[str, Card]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        fields = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        rows = self._by_ids(fields, ids)
        cards = [card_from_row(dict(zip(CARD_FIELDS, row))) for row in rows]
        return {card.id: card for card in cards}

    def _by_ids(self, fields: str, ids: list[str]) -> list[list[Any]]:
        """Card rows by id. A list of ids is one hash join over the whole table (about 120 ms
        at 100k cards; `WHERE c.id IN $ids` instead tests every row against the list: 1.6 s
        for 2,500 ids); one primary-key lookup per id, through a prepared statement, is a
        fraction of that for the few dozen ids a recall asks for."""
        if self._cards_total is None:
            self._cards_total = self._rows("MATCH (c:Card) RETURN count(c)")[0][0]
        if len(ids) > _LOOKUP_MAX or len(ids) * _LOOKUP_ROWS > self._cards_total:  # a small table: scan
            return self._rows(f"UNWIND $ids AS want MATCH (c:Card {{id: want}}) RETURN {fields}", {"ids": ids})
        statement = self._prepared.get(fields)
        if statement is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                statement = self._prepared[fields] = self._conn.prepare(f"MATCH (c:Card {{id: $id}}) RETURN {fields}")
        rows: list[list[Any]] = []
        for cid in ids:
            rows += self._conn.execute(statement, {"id": cid}).get_all()
        return rows

    def card_times(self, ids: Iterable[str] | None = None) -> dict[str, CardTimes]:
        """What dates each of these cards (every card when None): recall's time ranges, the
        time buckets."""
        fields = "c.id, c.valid_from, c.created_at, c.sources"
        if ids is None:
            rows = self._rows(f"MATCH (c:Card) RETURN {fields}")
        else:
            wanted = list(dict.fromkeys(ids))
            rows = self._by_ids(fields, wanted) if wanted else []
        return card_times_of(rows, lambda sessions: dict(self._rows(
            "UNWIND $ids AS want MATCH (s:Session {id: want}) RETURN s.id, s.started_at", {"ids": sessions})))

    def card_ids_mentioning(self, names: list[str]) -> list[str]:
        """Cards linked to any of these entity names or aliases (case-insensitive)."""
        wanted = names_with_aliases(names, self.aliases())
        rows = self._rows(
            "MATCH (c:Card)-[:MENTIONS]->(e:Entity) WHERE lower(e.name) IN $names RETURN DISTINCT c.id",
            {"names": wanted},
        )
        return [r[0] for r in rows]

    def aliases(self) -> dict[str, str]:
        """Lower-cased alias → the entity's name (none in a store not migrated yet)."""
        rows = self.optional("MATCH (e:Entity) WHERE size(e.aliases) > 0 UNWIND e.aliases AS a RETURN lower(a), e.name")
        return {alias: name for alias, name in rows}

    # --- forwards: merged-away card ids ----------------------------------------------------

    def forward(self, merged: dict[str, str]) -> None:
        """Record merges (dropped id -> kept id) so the dropped ids keep resolving
        (`resolve_ids`). Forwards that led to a dropped card lead on to its keeper, so every
        forward points at a card that exists: a -> b, then b merged into c, gives a -> c."""
        if not merged:
            return
        rows = [{"id": drop, "target": keep} for drop, keep in merged.items()]
        self._rows("UNWIND $rows AS r MATCH (f:Forward) WHERE f.target = r.id SET f.target = r.target", {"rows": rows})
        self._rows("UNWIND $rows AS r MERGE (f:Forward {id: r.id}) SET f.target = r.target", {"rows": rows})

    def drop_forwards_to(self, ids: list[str]) -> None:
        """Forwards to cards that are being deleted (forgotten): an old id of a card that is
        gone names nothing. UNWIND is a hash join; `f.target IN $ids` tests every forward
        against the whole list (0.6 s for 5,000 ids over 20,000 forwards)."""
        if ids:
            self._rows("UNWIND $ids AS gone MATCH (f:Forward) WHERE f.target = gone DELETE f", {"ids": ids})

    def resolve_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """Old id -> current id, for the ids that name no card but one merged into another
        (`forward`); other ids are left out. A store not migrated yet has no forwards."""
        ids = list(dict.fromkeys(ids))
        rows = self.optional("UNWIND $ids AS want MATCH (f:Forward {id: want}) RETURN f.id, f.target",
                             {"ids": ids}) if ids else []
        if not rows:
            return {}
        present = {row[0] for row in self._by_ids("c.id", list({i for row in rows for i in row}))}
        return {old: new for old, new in rows if old not in present and new in present}

    def supersede(self, card_id: str, until: str, now: str) -> None:
        """Set a card's `valid_until` (a newer fact made it untrue), unless it is already set:
        the first supersede wins. '' is how None is stored (never NULL in a Kuzu STRING column)."""
        self._rows(
            "MATCH (c:Card {id: $id}) WHERE c.valid_until IS NULL OR c.valid_until = ''"
            " SET c.valid_until = $until, c.updated_at = $now",
            {"id": card_id, "until": until, "now": now},
        )

    def set_confidence(self, card_id: str, value: float, expected: float | None) -> bool:
        """An opinion's confidence (reflect, docs/workspace.md): set only while it is still
        `expected` (None: unstated), so a restated opinion or another reflect is not overwritten.
        Whether it was set."""
        rows = self._rows("MATCH (c:Card {id: $id}) RETURN c.confidence", {"id": card_id})
        if not rows:
            return False
        current = rows[0][0]
        if (current is None) != (expected is None) or (current is not None and abs(current - expected) > 1e-9):
            return False
        self._rows("MATCH (c:Card {id: $id}) SET c.confidence = $c", {"id": card_id, "c": float(value)})
        return True

    # --- links ----------------------------------------------------------------------------

    def add_links(self, links: list[Link]) -> None:
        by_table: dict[str, list[dict[str, Any]]] = {}
        for link in links:
            table = link.rel if link.rel in CARD_RELATIONS else CUSTOM
            by_table.setdefault(table, []).append({**link.model_dump(), "reason": link.reason or ""})
        for table, rows in by_table.items():
            match = "MATCH (a:Card {id: r.src}), (b:Card {id: r.dst})"
            if table == CUSTOM:
                merge = f"MERGE (a)-[e:{CUSTOM} {{type: r.rel}}]->(b)"
            else:
                merge = f"MERGE (a)-[e:{table}]->(b)"
            self._conn.execute(  # an edge made again keeps its weight; a reason given now replaces the old one
                f"UNWIND $rows AS r {match} {merge} ON CREATE SET e.weight = r.weight, e.created_at = r.created_at,"
                " e.reason = r.reason ON MATCH SET e.reason = CASE WHEN r.reason = '' THEN e.reason ELSE r.reason END",
                {"rows": rows},
            )

    def edge_reasons(self, pairs: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        """The reasons recorded on these (card, relation, card) edges, in either direction;
        edges without one are left out."""
        wanted = set(pairs)
        rows = self.optional(
            "UNWIND $pairs AS p MATCH (a:Card {id: p.a})-[e]-(b:Card {id: p.b}) WHERE e.reason <> ''"
            " RETURN a.id, label(e), e.type, b.id, e.reason",
            {"pairs": [{"a": a, "b": b} for a, _rel, b in dict.fromkeys(pairs)]},
        ) if pairs else []
        found = {}
        for a, label, custom, b, reason in rows:
            key = (a, custom if label == CUSTOM else label, b)
            if key in wanted:
                found[key] = reason
        return found

    def link_to_sessions(self, rows: list[dict[str, Any]]) -> None:
        """EXTRACTED_FROM edges; rows are {card, session, turns}."""
        if rows:
            self._conn.execute(
                "UNWIND $rows AS r MATCH (c:Card {id: r.card}), (s:Session {id: r.session})"
                " MERGE (c)-[e:EXTRACTED_FROM]->(s) SET e.turn_ids = r.turns",
                {"rows": rows},
            )

    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]:
        """(from id, relation name, to id, weight) for card-card edges touching `ids`, both directions."""
        edges = self._edges_at(self._offsets(ids))
        names = self._ids_at({dst for _src, _rel, dst, _w, _out in edges})
        return distinct_edges(edges, names.get, relations)

    def directed_neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float, bool]]:
        """As `neighbours`, each edge with whether it points from the card of `ids` (issue 35)."""
        edges = self._edges_at(self._offsets(ids))
        names = self._ids_at({dst for _src, _rel, dst, _w, _out in edges})
        return distinct_edges(edges, names.get, relations, directed=True)

    def fanout(self, ids: list[str]) -> dict[str, int]:
        """Relation name -> how many cards outside `ids` it leads to from them (recall's
        `explorable`); counted on Kuzu's node offsets, so no card outside `ids` is read."""
        at = self._offsets(ids)
        return count_fanout(self._edges_at(at), set(at))

    def _offsets(self, ids: list[str]) -> dict[int, str]:
        """Kuzu node offset -> card id, for the cards among `ids` that exist."""
        return dict(self._by_ids("offset(id(c)), c.id", list(dict.fromkeys(ids)))) if ids else {}

    def _edges_at(self, by_offset: dict[int, str]) -> list[Edge]:
        """(from id, relation name, node offset of the other card, weight) for the cards at
        these offsets. Filtering on offsets found by primary key instead of `a.id IN $ids`
        saves a scan of every card id and the join back to the other end's id (26 -> 7 ms at
        100k cards)."""
        if not by_offset:
            return []
        rows = self._rows(  # the card-card tables named: 6x faster than `-[e]-` at 100k cards
            f"MATCH (a:Card)-[e:{'|'.join([*CARD_RELATIONS, CUSTOM])}]-(b:Card) WHERE offset(id(a)) IN $at"
            " RETURN offset(id(a)), label(e), e.type, offset(id(b)), e.weight, id(a) = struct_extract(e, '_src')",
            {"at": list(by_offset)},
        )
        return [(by_offset[a], custom if label == CUSTOM else label, b, float(weight if weight is not None else 1.0), bool(out))
                for a, label, custom, b, weight, out in rows]

    def _ids_at(self, offsets: set[int]) -> dict[int, str]:
        """Card ids by Kuzu node offset."""
        if not offsets:
            return {}
        rows = self._rows("MATCH (c:Card) WHERE offset(id(c)) IN $at RETURN offset(id(c)), c.id", {"at": list(offsets)})
        return dict(rows)

    # --- overview (session-start injection, integrated summary) ----------------------------

    def top_cards(self, scopes: list[str], *, by: str, limit: int, now: str,
                  origins: Sequence[str] = INJECTABLE_ORIGINS, types: Sequence[str] = ()) -> list[Card]:
        """Current cards (not invalidated by `now`) in these scopes and of these origins (and
        cards stored before origins were: `_ORIGIN_IN`), of these `types` when given:
        `by="hot"` (temperature, then importance), `by="importance"` (then newest) or
        `by="recent"` (newest first)."""
        order = {
            "hot": "c.temperature DESC, c.importance DESC, c.updated_at DESC",
            "importance": "c.importance DESC, c.created_at DESC",
            "recent": "c.created_at DESC, c.importance DESC",
        }[by]
        fields = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        typed = " AND c.type IN $types" if types else ""
        rows = self._rows(
            f"MATCH (c:Card) WHERE c.scope IN $scopes AND (c.valid_until = '' OR c.valid_until IS NULL OR c.valid_until > $now)"
            f" AND {_ORIGIN_IN}{typed} RETURN {fields} ORDER BY {order}, c.id LIMIT $limit",
            {"scopes": scopes, "now": now, "limit": limit, "origins": list(origins), **({"types": list(types)} if types else {})},
        )
        return [card_from_row(dict(zip(CARD_FIELDS, row))) for row in rows]

    def superseded_since(self, scopes: list[str], *, since: str, now: str, limit: int,
                         origins: Sequence[str] = INJECTABLE_ORIGINS) -> list[Card]:
        """Cards whose fact ended (`valid_until`) between `since` and `now`, latest first."""
        fields = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        rows = self._rows(
            f"MATCH (c:Card) WHERE c.scope IN $scopes AND c.valid_until >= $since AND c.valid_until <= $now"
            f" AND {_ORIGIN_IN} RETURN {fields} ORDER BY c.valid_until DESC, c.id LIMIT $limit",
            {"scopes": scopes, "since": since, "now": now, "limit": limit, "origins": list(origins)},
        )
        return [card_from_row(dict(zip(CARD_FIELDS, row))) for row in rows]

    def session_cards(self, session_id: str, scopes: list[str], *, limit: int, now: str,
                      origins: Sequence[str] = INJECTABLE_ORIGINS) -> list[Card]:
        """Current cards in these scopes and of these origins (`_ORIGIN_IN`) distilled from one
        session (`EXTRACTED_FROM`), newest first: the working tier of the session-start text."""
        fields = ", ".join(f"c.{f}" for f in CARD_FIELDS)
        rows = self._rows(
            "MATCH (c:Card)-[:EXTRACTED_FROM]->(s:Session {id: $id}) WHERE c.scope IN $scopes"
            f" AND (c.valid_until = '' OR c.valid_until IS NULL OR c.valid_until > $now) AND {_ORIGIN_IN}"
            f" RETURN {fields} ORDER BY c.created_at DESC, c.importance DESC, c.id LIMIT $limit",
            {"id": session_id, "scopes": scopes, "now": now, "limit": limit, "origins": list(origins)},
        )
        return [card_from_row(dict(zip(CARD_FIELDS, row))) for row in rows]

    def overview(self, scopes: list[str], *, top: int, sessions: int,
                 origins: Sequence[str] = INJECTABLE_ORIGINS) -> dict[str, Any]:
        """Counts for the integrated summary: card types, tags and entities (most mentioned
        first), and the newest conversations (not cron, heartbeat or sub-agent runs, not files
        synced or imported) with the
        titles of their most important cards; only cards of these origins count."""
        p = {"scopes": scopes, "top": top, "origins": list(origins)}
        types = self._rows(
            f"MATCH (c:Card) WHERE c.scope IN $scopes AND {_ORIGIN_IN} RETURN c.type, count(*) AS n ORDER BY n DESC, c.type",
            {"scopes": scopes, "origins": list(origins)},
        )
        tags = self._rows(
            f"MATCH (c:Card) WHERE c.scope IN $scopes AND {_ORIGIN_IN} UNWIND c.tags AS t"
            " RETURN t, count(*) AS n ORDER BY n DESC, t LIMIT $top", p
        )
        entities = self._rows(
            f"MATCH (c:Card)-[:MENTIONS]->(e:Entity) WHERE c.scope IN $scopes AND {_ORIGIN_IN}"
            " RETURN e.name, count(*) AS n ORDER BY n DESC, e.name LIMIT $top", p
        )
        recent = self._rows(
            "MATCH (s:Session) WHERE s.agent_id IN $scopes AND NOT s.kind IN ['cron', 'heartbeat', 'subagent']"
            # files (workspace notes, memex) are not sessions someone had: their cards speak for them
            " AND NOT s.source_format IN ['workspace', 'memex']"
            " RETURN s.id, s.title, s.started_at, s.ingested_at"
            # by when they happened (issue 31): sessions imported in bulk are as old as they say
            " ORDER BY coalesce(s.started_at, s.ingested_at) DESC, s.id LIMIT $n",
            {"scopes": scopes, "n": sessions},
        )
        ids = [r[0] for r in recent]
        titles: dict[str, list[tuple[float, str]]] = {}
        if ids:
            for sid, title, importance in self._rows(
                f"MATCH (c:Card)-[:EXTRACTED_FROM]->(s:Session) WHERE s.id IN $ids AND {_ORIGIN_IN}"
                " RETURN s.id, c.title, c.importance", {"ids": ids, "origins": list(origins)}
            ):
                titles.setdefault(sid, []).append((-(importance or 0.0), title))
        return {
            "cards": sum(n for _, n in types),
            "types": [(t, n) for t, n in types],
            "tags": [(t, n) for t, n in tags],
            "entities": [(e, n) for e, n in entities],
            "sessions": [
                {"id": sid, "title": title, "started_at": started, "ingested_at": ingested,
                 "card_titles": [t for _, t in sorted(titles.get(sid, []))]}
                for sid, title, started, ingested in recent
            ],
        }

    def freshness(self) -> list[Any]:
        """[newest session `ingested_at`, number of cards]: what a cache of the graph is keyed on."""
        ingested = self._rows("MATCH (s:Session) RETURN max(s.ingested_at)")[0][0]
        return [ingested, self._rows("MATCH (c:Card) RETURN count(c)")[0][0]]

    # --- counts ---------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        cards = self._rows("MATCH (c:Card) RETURN count(c)")[0][0]
        sessions = self._rows("MATCH (s:Session) RETURN count(s)")[0][0]
        links = self._rows("MATCH (:Card)-[e]->(:Card) RETURN count(e)")[0][0]
        entities = self._rows("MATCH (e:Entity) RETURN count(e)")[0][0]
        return {"sessions": sessions, "cards": cards, "links": links, "entities": entities}

    def type_counts(self) -> dict[str, int]:
        """Cards per type."""
        return {t: n for t, n in self._rows("MATCH (c:Card) RETURN c.type, count(*)")}

    def provenance_counts(self) -> dict[str, dict[str, int]]:
        """Cards per origin and per session kind, sessions per kind ("unknown": stored before
        provenance was recorded), most first."""
        def tally(cypher: str) -> dict[str, int]:
            rows = [(value or "unknown", int(n)) for value, n in self._rows(cypher)]
            merged: dict[str, int] = {}
            for value, n in rows:
                merged[value] = merged.get(value, 0) + n
            return dict(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])))

        return {
            "cards_by_origin": tally("MATCH (c:Card) RETURN c.origin, count(*)"),
            "cards_by_session_kind": tally("MATCH (c:Card) RETURN c.session_kind, count(*)"),
            "sessions_by_kind": tally("MATCH (s:Session) RETURN s.kind, count(*)"),
        }

    def provenance_count(self) -> int:
        """EXTRACTED_FROM edges: card → the sessions it was distilled from."""
        return self._rows("MATCH (:Card)-[e:EXTRACTED_FROM]->(:Session) RETURN count(e)")[0][0]

    def relation_counts(self) -> dict[str, int]:
        """Card → card edges per relation name (core and custom)."""
        rows = self._rows("MATCH (:Card)-[e]->(:Card) RETURN label(e), e.type, count(*)")
        counts: dict[str, int] = {}
        for label, custom_type, n in rows:
            if label == "MENTIONS":
                continue
            name = custom_type if label == CUSTOM else label
            counts[name] = counts.get(name, 0) + n
        return counts
