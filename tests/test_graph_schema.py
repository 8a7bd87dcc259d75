"""Stores made by an earlier version gain what the schema added on their next write, and can be
read before that."""

from __future__ import annotations

import kuzu

from openclaw_alaya import Alaya
from openclaw_alaya.store.graph import GraphStore
from openclaw_alaya.store.snapshot import GraphSnapshot


def _old_store(tmp_path):
    memory = Alaya(tmp_path / "data")
    memory.init()
    path = memory.dirs.graph
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)  # back to the schema before Entity types, aliases and Forward
    conn.execute("DROP TABLE MENTIONS")
    conn.execute("DROP TABLE Entity")
    conn.execute("DROP TABLE Forward")
    conn.execute("CREATE NODE TABLE Entity(name STRING PRIMARY KEY)")
    conn.execute("CREATE REL TABLE MENTIONS(FROM Card TO Entity)")
    conn.execute("CREATE (:Entity {name: 'Kuzu'})")
    conn.close()
    db.close()
    return memory


def test_an_old_store_reads_without_the_new_tables_and_gains_them_on_write(tmp_path):
    memory = _old_store(tmp_path)
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        assert graph.optional("MATCH (f:Forward) RETURN f.id") == []
        assert graph.optional("MATCH (e:Entity) RETURN e.aliases") == []
        assert graph.resolve_ids(["card-gone"]) == {}
        assert GraphSnapshot(graph).resolve_ids(["card-gone"]) == {}
    # a new process (the migration is remembered per file and process)
    from openclaw_alaya.store import graph as graph_module

    graph_module._MIGRATED.clear()
    with memory.writing("test") as graph:
        with graph:
            graph.query("MATCH (e:Entity) RETURN e.name")
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        assert graph.query("MATCH (e:Entity) RETURN e.name, e.type, e.aliases") == [["Kuzu", "", []]]
        assert graph.query("MATCH (f:Forward) RETURN count(f)") == [[0]]
