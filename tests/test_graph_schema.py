"""Stores made by an earlier version gain what the schema added on their next write, and can be
read before that."""

from __future__ import annotations

import kuzu

from openclaw_alaya import Alaya
from openclaw_alaya.store.embedded.graph import GraphStore
from openclaw_alaya.store.embedded.snapshot import GraphSnapshot


def downgrade(memory) -> None:
    """Back to the schema before Entity types, aliases and Forward, keeping the entities and
    the cards' mentions of them (a store of an earlier version, not yet migrated)."""
    db = kuzu.Database(str(memory.dirs.graph))
    conn = kuzu.Connection(db)
    names = [row[0] for row in conn.execute("MATCH (e:Entity) RETURN e.name").get_all()]
    mentions = [{"card": card, "name": name}
                for card, name in conn.execute("MATCH (c:Card)-[:MENTIONS]->(e:Entity) RETURN c.id, e.name").get_all()]
    conn.execute("DROP TABLE ENTITY_LINK")  # issue 35's entity relations came later still
    conn.execute("DROP TABLE MENTIONS")
    conn.execute("DROP TABLE Entity")
    conn.execute("DROP TABLE Forward")
    conn.execute("CREATE NODE TABLE Entity(name STRING PRIMARY KEY)")
    conn.execute("CREATE REL TABLE MENTIONS(FROM Card TO Entity)")
    for name in names:
        conn.execute("CREATE (:Entity {name: $name})", {"name": name})
    for row in mentions:
        conn.execute("MATCH (c:Card {id: $card}), (e:Entity {name: $name}) CREATE (c)-[:MENTIONS]->(e)", row)
    conn.close()
    db.close()


def _old_store(tmp_path):
    memory = Alaya(tmp_path / "data")
    memory.init()
    with memory.writing("test") as graph:
        with graph:
            graph.query("CREATE (:Entity {name: 'Kuzu'})")
    downgrade(memory)
    return memory


def test_an_old_store_reads_without_the_new_tables_and_gains_them_on_write(tmp_path):
    memory = _old_store(tmp_path)
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        assert graph.optional("MATCH (f:Forward) RETURN f.id") == []
        assert graph.optional("MATCH (e:Entity) RETURN e.aliases") == []
        assert graph.resolve_ids(["card-gone"]) == {}
        assert GraphSnapshot(graph).resolve_ids(["card-gone"]) == {}
        assert graph.entity_links(["Kuzu"]) == [] == GraphSnapshot(graph).entity_links(["Kuzu"])
    # a new process (the migration is remembered per file and process)
    from openclaw_alaya.store.embedded import graph as graph_module

    graph_module._MIGRATED.clear()
    with memory.writing("test") as graph:
        with graph:
            graph.query("MATCH (e:Entity) RETURN e.name")
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        assert graph.query("MATCH (e:Entity) RETURN e.name, e.type, e.aliases") == [["Kuzu", "", []]]
        assert graph.query("MATCH (f:Forward) RETURN count(f)") == [[0]]
