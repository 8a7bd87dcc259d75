"""The postgres backend's versioned schema (issue 34): ordered SQL files in migrations/ (package
data), `NNNN_name.sql`, each applied once and recorded in `schema_version`.

Why not a migration tool: Alembic brings SQLAlchemy (an ORM this backend does not use) and
its revision graph; yoyo-migrations another dependency with its own lock table. What is needed
is a handful of forward-only SQL files applied in one transaction under an advisory lock, so
that two hosts running `alaya init` at once apply each file exactly once; that is this module.

Reads only read: a reader checks `current` and refuses a database behind or ahead of this
version in one line; only `create`/`upgrade` (init, the daemon's warm-up, a write hold) migrate."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from ...errors import StaleStoreError

if TYPE_CHECKING:
    import psycopg

_FILE = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")
# pg_advisory_xact_lock's key while migrating: one per database, whatever the store
MIGRATE_LOCK = 0x616C6179  # "alay"


@cache
def migrations() -> tuple[tuple[int, str, str], ...]:
    """(version, file name, SQL) of every migration shipped, in order. A number may be left
    out for a file that comes later (0002, row-level security, after 0003's graph: issue 34),
    so a database records each version it applied and `migrate` applies each one missing."""
    found = []
    for entry in resources.files(__package__).joinpath("migrations").iterdir():
        match = _FILE.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions) or (versions and versions[0] != 1):
        raise RuntimeError(f"migrations/: numbered {versions}: each number once, from 1")
    return tuple(found)


def latest() -> int:
    return migrations()[-1][0]


def applied(conn: "psycopg.Connection") -> int:
    """The newest migration recorded in the database; 0 for a database alaya never set up."""
    if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]


def missing(conn: "psycopg.Connection") -> list[int]:
    """The versions shipped that the database has not applied (all of them for a new one)."""
    if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
        return [v for v, _, _ in migrations()]
    done = {r[0] for r in conn.execute("SELECT version FROM schema_version")}
    return [v for v, _, _ in migrations() if v not in done]


def current(conn: "psycopg.Connection") -> bool:
    """Every migration shipped is applied, and none newer."""
    return applied(conn) <= latest() and not missing(conn)


def check_readable(conn: "psycopg.Connection", where: str) -> None:
    """A read's check: the schema is this version's (reads never migrate)."""
    have, want = applied(conn), latest()
    if have > want:
        raise StaleStoreError(f"{where}: the database schema is version {have}, newer than this alaya's "
                              f"({want}); upgrade openclaw-alaya")
    if missing(conn):
        raise StaleStoreError(f"{where}: the database schema is version {have} of {want}; run `alaya init` to upgrade it")


def migrate(conn: "psycopg.Connection") -> list[int]:
    """Apply the migrations the database lacks, all in one transaction, one host at a time;
    the versions applied (none when it was current)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                     "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        have = applied(conn)
        if have > latest():
            raise StaleStoreError(f"the database schema is version {have}, newer than this alaya's "
                                  f"({latest()}); upgrade openclaw-alaya")
        wanted = set(missing(conn))
        done = []
        for version, name, sql in migrations():
            if version in wanted:
                conn.execute(sql)
                conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)", (version, name))
                done.append(version)
        return done


def ensure_store(conn: "psycopg.Connection", store_id: str) -> None:
    """The row every other row of this memory hangs from."""
    conn.execute("INSERT INTO stores (id) VALUES (%s) ON CONFLICT (id) DO NOTHING", (store_id,))


def ensure_vector_index(conn: "psycopg.Connection", dim: int) -> None:
    """HNSW (cosine) over the card vectors of length `dim`: pgvector indexes only a fixed
    length, so each length in use gets a partial expression index (search must cast the
    same way, `embedding::vector(dim)`, and filter `dim = …`, for the planner to use it)."""
    dim = int(dim)
    conn.execute(f"CREATE INDEX IF NOT EXISTS card_vectors_hnsw_{dim} ON card_vectors "
                 f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}")
