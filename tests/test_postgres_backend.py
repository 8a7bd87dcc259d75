"""The postgres backend's first step (issue 34), against a real PostgreSQL 18 with pgvector
started by the tests (tests/pg_server.py; no mock of the database): the server itself, the
versioned schema, the configuration and its one-line errors, L3 behaving as the embedded
backend's, and the coordinator's advisory locks between two "hosts" (two backends with no
connection or file in common)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.errors import ConfigError, LockTimeoutError, StaleStoreError
from openclaw_alaya.models import Session, Turn
from openclaw_alaya.store import tombstones
from openclaw_alaya.store.ports.backend import Backend
from openclaw_alaya.store.ports.coordinator import Coordinator
from openclaw_alaya.store.ports.index import CardIndex
from openclaw_alaya.store.ports.raw import RawSessions
from openclaw_alaya.store.raw import FORGOTTEN, RawStore
from test_storage_contract import _compatible, _members

if os.environ.get("ALAYA_REQUIRE_POSTGRES") != "1":  # required (scripts/test.sh): a missing extra fails
    pytest.importorskip("psycopg", reason="the postgres extra is not installed (pip install -e '.[test,postgres]')")
import psycopg  # noqa: E402
from psycopg.conninfo import conninfo_to_dict  # noqa: E402

from openclaw_alaya.store.postgres import schema  # noqa: E402
from openclaw_alaya.store.postgres.backend import PostgresBackend  # noqa: E402
from openclaw_alaya.store.postgres.coordinator import PostgresCoordinator  # noqa: E402
from openclaw_alaya.store.postgres.index import PostgresIndex  # noqa: E402
from openclaw_alaya.store.postgres.words import tokens  # noqa: E402
from openclaw_alaya.store.postgres.raw import PostgresRaw  # noqa: E402

POSTGRES = {"storage": {"backend": "postgres"}}
_OPENED: list[Alaya] = []


@pytest.fixture(autouse=True)
def _close_pools():
    """Each test's connection pools closed with it (a pool left open keeps reconnecting to a
    database that is gone)."""
    yield
    while _OPENED:
        _OPENED.pop().storage.db.close()


def _memory(root, store="default", **config) -> Alaya:
    """A memory on the postgres backend, its database made (what `init` does for storage)."""
    mem = Alaya(root, config=Config.model_validate({"storage": {"backend": "postgres", "store": store}, **config}))
    _OPENED.append(mem)
    mem.dirs.create()
    mem.storage.create()
    return mem


def _session(sid="s1", agent="alice", turns=(("u1", "user", "we pick postgres"), ("a1", "assistant", "ok"))):
    return Session(id=sid, agent_id=agent, started_at="2026-11-02T10:00:00Z", title="db choice",
                   turns=[Turn(id=t, role=r, content=c, timestamp=f"2026-11-02T10:0{i}:00Z")
                          for i, (t, r, c) in enumerate(turns)])


# --- the server ------------------------------------------------------------------------------


def test_the_test_server_runs_postgresql_18_with_pgvector_and_pg_trgm(pg_server):
    """Fails rather than skips under ALAYA_REQUIRE_POSTGRES=1 (scripts/test.sh) when it cannot start."""
    assert pg_server.psql("SHOW server_version_num").startswith("18")
    available = pg_server.psql("SELECT string_agg(name, ',' ORDER BY name) FROM pg_available_extensions "
                               "WHERE name IN ('vector', 'pg_trgm')")
    assert available == "pg_trgm,vector"
    if os.geteuid() == 0:  # postgres refuses root: it runs as an unprivileged user
        assert pg_server.data.stat().st_uid != 0


# --- schema -------------------------------------------------------------------------------------


def test_migrations_are_applied_once_in_order_and_recorded(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert schema.applied(conn) == 0
        assert schema.migrate(conn) == [v for v, _, _ in schema.migrations()]
        assert schema.migrate(conn) == []
        names = [r[0] for r in conn.execute("SELECT name FROM schema_version ORDER BY version")]
        assert names == [name for _, name, _ in schema.migrations()] and names[0] == "0001_initial.sql"
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert {"sessions", "turns", "card_contexts", "l3_logs", "cards", "edges", "entities",
                "card_vectors", "relation_vectors", "stores"} <= tables
        schema.check_readable(conn, "db")
        conn.execute("INSERT INTO schema_version (version, name) VALUES (999, '0999_future.sql')")
        with pytest.raises(StaleStoreError, match="version 999, newer than this alaya's"):
            schema.check_readable(conn, "db")


def test_reads_refuse_a_database_behind_this_version_and_writes_migrate_it(pg_url, tmp_path):
    mem = Alaya(tmp_path / "data", config=Config.model_validate(POSTGRES))
    _OPENED.append(mem)
    with pytest.raises(StaleStoreError, match=r"schema is version 0 of \d+; run `alaya init`"):
        with mem.storage.reading("recall"):
            pass
    with psycopg.connect(pg_url) as conn:
        assert schema.applied(conn) == 0  # the read wrote nothing
    with mem.storage.writing("ingest"):
        pass
    with mem.storage.reading("recall"), psycopg.connect(pg_url) as conn:
        assert schema.applied(conn) == schema.latest()


def test_two_hosts_initialising_at_once_apply_each_migration_once(pg_url):
    errors: list[BaseException] = []

    def init():
        try:
            with psycopg.connect(pg_url, autocommit=True) as conn:
                schema.migrate(conn)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=init) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(schema.migrations())


def test_the_vector_index_is_hnsw_cosine_for_the_embedders_length(pg_url, tmp_path):
    mem = _memory(tmp_path / "data")
    dim = mem.embedder.dim
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO card_vectors (store_id, card_id, scope, type, text, words, dim, embedding) "
                     "SELECT 'default', 'c' || i, 'shared', 'fact', '数据库 postgres ' || i, "
                     "to_tsvector('simple', 'postgres'), %s, "
                     "(SELECT array_agg(random())::vector FROM generate_series(1, %s)) FROM generate_series(1, 50) i",
                     (dim, dim))
        conn.execute("SET enable_seqscan = off")
        probe = "[" + ",".join(["0.5"] * dim) + "]"
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT card_id FROM card_vectors WHERE dim = {dim} "
            f"ORDER BY embedding::vector({dim}) <=> %s::vector({dim}) LIMIT 5", (probe,)))
        assert f"card_vectors_hnsw_{dim}" in plan
        method = conn.execute("SELECT am.amname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
                              "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam "
                              "WHERE c.relname = %s", (f"card_vectors_hnsw_{dim}",)).fetchone()
        assert method[0] == "hnsw" and "vector_cosine_ops" in method[1]
        hits = conn.execute("SELECT count(*) FROM card_vectors WHERE text LIKE '%%数据%%'").fetchone()[0]
        assert hits == 50  # the trigram index serves CJK substrings (pg_trgm)


def test_a_store_made_for_another_embedder_is_refused(pg_url, tmp_path):
    _memory(tmp_path / "a")
    with pytest.raises(StaleStoreError, match="its index was built with embedder"):
        _memory(tmp_path / "b", embedding={"dimensions": 64})


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["postgresql://alaya:s3cret@db.example/team",
                                 "postgresql://alaya@db.example/team?password=s3cret",
                                 "host=db.example user=alaya password=s3cret dbname=team"])
def test_a_password_in_storage_url_is_refused(url):
    with pytest.raises(ValueError, match="a password in config.json is refused"):
        Config.model_validate({"storage": {"backend": "postgres", "url": url}})
    Config.model_validate({"storage": {"backend": "postgres", "url": "postgresql://alaya@db.example/team"}})


def _alaya(root, *argv, env=None):
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(root), *argv],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_cli_refuses_a_config_json_with_a_password_in_one_line(tmp_path):
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    (root / "config.json").write_text(json.dumps(
        {"version": 2, "storage": {"backend": "postgres", "url": "postgresql://alaya:s3cret@db.example/team"}}))
    done = _alaya(root, "init", env={"ALAYA_DATABASE_URL": ""})
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "storage.url" in lines[0] and "password in config.json is refused" in lines[0]
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr


def test_cli_names_an_unreachable_database_in_one_line_exit_1(tmp_path):
    root = tmp_path / "data"
    url = f"postgresql://alaya@/team?host={tmp_path}/no-server"
    root.mkdir(mode=0o700)
    (root / "config.json").write_text(json.dumps({"version": 2, "storage": {"backend": "postgres"}}))
    done = _alaya(root, "init", env={"ALAYA_DATABASE_URL": url})
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "storage: cannot connect to postgresql://alaya@" in lines[0]
    assert "Traceback" not in done.stderr


def test_cli_init_makes_the_schema_and_the_index_in_the_database(pg_url, tmp_path):
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    (root / "config.json").write_text(json.dumps({"version": 2, "storage": {"backend": "postgres"}}))
    done = _alaya(root, "init")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == schema.latest()
        assert conn.execute("SELECT count(*) FROM relation_vectors WHERE store_id = 'default'").fetchone()[0] > 0
    assert _alaya(root, "init").returncode == 0  # safe to run again


def test_a_server_lost_mid_command_is_one_line(pg_server, pg_url, tmp_path):
    from openclaw_alaya.errors import DatabaseError

    mem = _memory(tmp_path / "data")
    mem.raw.write(_session())
    with pytest.raises(DatabaseError, match="storage: lost the connection to postgresql://postgres@"):
        with mem.lock.read("recall"):
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:  # the server drops the hold's connection
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
                              " AND pid <> pg_backend_pid()", (conninfo_to_dict(pg_url)["dbname"],))
            mem.raw.load("s1")
    assert mem.raw.load("s1") is not None  # the pool opens a new connection for the next command


def test_the_url_comes_from_the_environment_before_config(tmp_path, monkeypatch):
    from openclaw_alaya.store.postgres.connect import database_url

    config = Config.model_validate({"storage": {"backend": "postgres", "url": "postgresql://a@x/one"}})
    monkeypatch.delenv("ALAYA_DATABASE_URL", raising=False)
    assert database_url(config) == "postgresql://a@x/one"
    monkeypatch.setenv("ALAYA_DATABASE_URL", "postgresql://b:pw@y/two")
    assert database_url(config) == "postgresql://b:pw@y/two"
    monkeypatch.delenv("ALAYA_DATABASE_URL")
    with pytest.raises(ConfigError, match="set ALAYA_DATABASE_URL or storage.url"):
        database_url(Config.model_validate(POSTGRES))


# --- L3: the same behaviour as the embedded raw store -------------------------------------------


@pytest.fixture(params=["embedded", "postgres"])
def raw(request, tmp_path) -> RawSessions:
    if request.param == "embedded":
        return RawStore(tmp_path / "files")
    request.getfixturevalue("pg_url")
    return _memory(tmp_path / "data").raw


def test_sessions_merge_append_and_round_trip_alike(raw):
    first = _session()
    merged, new = raw.merge(first)
    assert [t.id for t in new] == ["u1", "a1"]
    raw.write(merged)
    assert raw.load("s1") == first
    again, none = raw.merge(first)
    assert none == []
    longer = _session(turns=(("u1", "user", "we pick postgres"), ("a1", "assistant", "ok, but why?"),
                             ("u2", "user", "several hosts")))
    merged, new = raw.merge(longer)
    assert [t.id for t in new] == ["a1+2", "u2"]  # a reused id with other text is kept as a revision
    raw.write(merged)
    stored = raw.load("s1")
    assert [(t.id, t.content) for t in stored.turns] == [
        ("u1", "we pick postgres"), ("a1", "ok"), ("a1+2", "ok, but why?"), ("u2", "several hosts")]
    raw.write_many([_session("s0", turns=(("x", "user", "older"),)).model_copy(update={"started_at": "2026-10-01"})])
    assert raw.session_ids() == ["s0", "s1"]  # month of the first write, then id
    assert [s.id for s in raw.iter_sessions()] == ["s0", "s1"]
    assert {k for k, v in raw.find_many(["s1", "nope"]).items() if v} == {"s1"}
    assert raw.load_file(raw.find("s1")) == stored and raw.load("nope") is None


def test_purges_blank_turns_and_remove_sessions_alike(raw):
    raw.write(_session())
    assert raw.blank_turns("s1", ["u1"]) == 1
    assert raw.blank_turns("s1", ["u1"]) == 0
    stored = raw.load("s1")
    assert [t.content for t in stored.turns] == [FORGOTTEN, "ok"] and stored.title == "db choice"
    assert raw.remove_session("s1") is True and raw.load("s1") is None and raw.remove_session("s1") is False


def test_card_contexts_and_logs_alike(raw):
    turns = _session().turns
    raw.write_contexts([("c1", "s1", turns), ("c1", "s2", turns[:1])])
    raw.write_context("c1", "s1", turns[1:])  # again for s1: replaces s1's turns only
    assert raw.load_context("c1") == {"s1": turns[1:], "s2": turns[:1]}
    raw.forget_in_context("c1", "s2", ["u1"])
    assert raw.load_context("c1")["s2"][0].content == FORGOTTEN
    raw.forget_in_context("c1", "s1", None)
    assert list(raw.load_context("c1")) == ["s2"]
    raw.remove_context("c1")
    assert raw.load_context("c1") is None
    tombstones.record(raw, [{"kind": "session", "id": "s9", "digest": tombstones.digest("x")},
                            {"kind": "card", "id": "c9"}])
    raw.append_lines("links.jsonl", '{"src": "a", "dst": "b"}\n{"src": "b", "dst": "c"}')
    assert tombstones.forgotten(raw, "session") == {"s9"} and tombstones.forgotten(raw, "card") == {"c9"}
    assert [r["dst"] for r in raw.read_log("links.jsonl")] == ["b", "c"]


def test_two_memories_in_one_database_see_only_their_own_rows(pg_url, tmp_path):
    team_a, team_b = _memory(tmp_path / "a", "team-a"), _memory(tmp_path / "b", "team-b")
    team_a.raw.write(_session())
    tombstones.record(team_a.raw, [{"kind": "session", "id": "gone"}])
    assert team_b.raw.session_ids() == [] and tombstones.forgotten(team_b.raw, "session") == set()
    assert team_a.raw.session_ids() == ["s1"]


# --- L1: the same searches as the embedded index ------------------------------------------------

CARDS = [("c1", "alice", "fact", "We moved the billing database to PostgreSQL with pgvector"),
         ("c2", "shared", "decision", "团队决定使用数据库连接池"),
         ("c3", "shared", "gotcha", "The connection pool ran out of connections during billing"),
         ("c4", "bob", "preference", "Bob prefers tea over coffee in the morning")]


@pytest.fixture(params=["embedded", "postgres"])
def index(request, tmp_path):
    from openclaw_alaya.store.embedded.vectors import VectorStore

    if request.param == "embedded":
        mem = Alaya(tmp_path / "files")
        store = VectorStore(tmp_path / "lancedb", mem.embedder.id, mem.embedder.dim)
        store.create()
    else:
        request.getfixturevalue("pg_url")
        mem = _memory(tmp_path / "data")
        store = mem.index
    rows = [{"id": i, "scope": scope, "type": kind, "text": text} for i, scope, kind, text in CARDS]
    store.upsert_cards(rows, mem.embedder.embed([text for *_, text in CARDS]))
    return mem, store


def test_cards_are_found_by_vector_alike(index):
    mem, store = index
    probe = mem.embedder.embed(["billing database connections"])[0]
    hits = store.vector_search(probe, 4)
    assert [i for i, _ in hits][:2] == ["c3", "c1"] and hits[0][1] >= hits[1][1]
    assert {i for i, _ in store.vector_search(probe, 4, scopes=["shared"])} == {"c2", "c3"}
    assert [[i for i, _ in found] for found in store.search_many(mem.embedder.embed(["tea", "billing"]), 1,
                                                                  ["bob", "alice"])] == [["c4"], ["c1"]]
    assert sorted(store.vectors_for(["c1", "nope"])) == ["c1"]
    assert store.card_count() == 4 and sorted(store.card_ids()) == ["c1", "c2", "c3", "c4"]


def test_cards_are_found_by_words_in_english_and_chinese_alike(index):
    _, store = index
    found: dict = {}
    hits = store.text_search("billing connections", 5, vectors=found)
    assert [i for i, _ in hits][0] == "c3" and {i for i, _ in hits} == {"c1", "c3"} and set(found) == {"c1", "c3"}
    assert [i for i, _ in store.text_search("数据库", 5)] == ["c2"]
    assert store.text_search("billing", 5, scopes=["shared"])[0][0] == "c3"
    assert store.text_search("   ", 5) == []


def test_index_rows_are_replaced_and_deleted(index):
    mem, store = index
    store.upsert_cards([{"id": "c4", "scope": "bob", "type": "fact", "text": "Bob now drinks coffee"}],
                       mem.embedder.embed(["Bob now drinks coffee"]))
    assert [i for i, _ in store.text_search("tea", 5)] == [] and store.text_search("coffee", 5)[0][0] == "c4"
    store.delete_cards(["c4", "c3"])
    assert sorted(store.card_ids()) == ["c1", "c2"]
    ids, vectors = store.all_vectors()
    assert sorted(ids) == ["c1", "c2"] and vectors.shape == (2, mem.embedder.dim)
    store.upsert_relations([{"name": "CAUSES", "description": "one thing causes another"}],
                           mem.embedder.embed(["one thing causes another"]))
    assert list(store.relation_vectors()) == ["CAUSES"]
    store.optimize()


def test_words_are_lower_cased_words_and_cjk_bigrams():
    assert tokens("PostgreSQL 团队决定 a") == ["postgresql", "团队", "队决", "决定", "a"]
    assert tokens("字") == ["字"]


# --- the coordinator: advisory locks between hosts ----------------------------------------------


def _host(tmp_path, name) -> Alaya:
    """Another host: its own data directory and its own connections to the same database."""
    mem = _memory(tmp_path / name)
    mem.storage.lock.timeout = 0.3
    return mem


def test_a_write_hold_excludes_other_hosts_and_names_its_holder(pg_url, tmp_path):
    one, two = _host(tmp_path, "one"), _host(tmp_path, "two")
    with one.lock.write("distill"):
        with pytest.raises(LockTimeoutError, match=r"could not get the lock for recall within 0.3s; held by alaya distill"):
            with two.lock.read("recall"):
                pass
        with pytest.raises(LockTimeoutError, match="held by alaya distill"):
            with two.lock.read("recall", timeout=0):
                pass
    with one.lock.read("recall"), two.lock.read("status"):  # readers share
        with pytest.raises(LockTimeoutError, match="for introspect"):
            with two.lock.write("introspect"):
                pass


def test_a_write_hold_is_one_transaction(pg_url, tmp_path):
    one, two = _host(tmp_path, "one"), _host(tmp_path, "two")
    before = two.lock.generation()
    with pytest.raises(RuntimeError):
        with one.lock.write("ingest"):
            one.raw.write(_session())  # L3 …
            one.index.upsert_cards([{"id": "c1", "scope": "alice", "type": "fact", "text": "we pick postgres"}],
                                   one.embedder.embed(["we pick postgres"]))  # … and L1 in the same transaction
            assert one.raw.load("s1") is not None and one.index.card_count() == 1  # visible inside the hold…
            assert two.raw.load("s1") is None and two.index.card_count() == 0  # …to nobody else until it commits
            raise RuntimeError("the host dies mid-write")
    assert two.raw.load("s1") is None and two.index.card_count() == 0 and two.lock.generation() == before
    with one.lock.write("ingest"):
        one.raw.write(_session())
    assert two.raw.load("s1") is not None and two.lock.generation() != before


def test_a_recorded_purge_waits_for_the_next_write_hold(pg_url, tmp_path):
    mem = _host(tmp_path, "one")
    with mem.lock.write("forget"):
        name = mem.lock.record_purge({"cards": ["c1"]})
    assert mem.lock.pending_purges() == [(name, {"cards": ["c1"]})] and mem.lock.needs_recovery()
    mem.lock.purge_done(name)
    assert mem.lock.pending_purges() == [] and mem.storage.current()


@pytest.mark.parametrize("port, impl", [(RawSessions, PostgresRaw), (Coordinator, PostgresCoordinator),
                                        (CardIndex, PostgresIndex), (Backend, PostgresBackend)],
                         ids=lambda x: x.__name__)
def test_the_postgres_classes_satisfy_their_ports(port, impl):
    import inspect

    wrong = []
    for name, member in _members(port).items():
        given = inspect.getattr_static(impl, name, None)
        if member is None:
            if given is None and f"self.{name}" not in inspect.getsource(impl.__init__):
                wrong.append(f"{name}: missing")
        elif given is None:
            wrong.append(f"{name}: missing")
        elif callable(member) and callable(given) and not isinstance(member, property) \
                and not _compatible(inspect.signature(member), inspect.signature(given)):
            wrong.append(f"{name}: {inspect.signature(given)} does not fit {inspect.signature(member)}")
    assert not wrong, "\n".join(wrong)
