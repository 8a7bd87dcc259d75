"""`get` and `list` (issue 13), and the ids of merged cards in get, trace and recall, through the
Python API and the `alaya` command, on real Kuzu and LanceDB stores."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from helpers import session_json
from test_cli import alaya, ok
from test_graph_schema import downgrade
from test_maintenance import T0, card, put

from openclaw_alaya import Alaya
from openclaw_alaya.errors import InputError, NotFoundError

# --- list ----------------------------------------------------------------------------------


@pytest.fixture
def shelf(memory):
    """Four cards of different types, tags, entities, dates, tiers and scopes; PostgreSQL also
    goes by `postgres` and `PG`."""
    put(memory, [
        card("card-old", "Billing reads from PostgreSQL", type="fact", tier="COLD").model_copy(
            update={"tags": ["Billing"], "entities": ["PostgreSQL"]}),
        card("card-mid", "Kuzu needs its wal file in backups", type="gotcha", created=T0 + timedelta(days=10)).model_copy(
            update={"tags": ["deploy"], "entities": ["Kuzu"], "scope": "agent-a"}),
        card("card-new", "Billing deploys go out on Tuesdays", type="decision", tier="HOT",
             created=T0 + timedelta(days=20, hours=12)).model_copy(update={"tags": ["billing", "deploy"], "scope": "agent-b"}),
        card("card-new2", "Deploy windows are announced a day ahead", created=T0 + timedelta(days=20, hours=12)).model_copy(
            update={"tags": ["Deploy"]}),
    ])
    with memory.writing("test") as graph:
        with graph:
            graph.add_entity_alias("PostgreSQL", "postgres")
            graph.add_entity_alias("PostgreSQL", "PG")
    return memory


def listed(memory, **filters) -> list[str]:
    return [c.id for c in memory.list_cards(**filters).cards]


def test_list_is_newest_first_then_by_id_a_page_at_a_time(shelf):
    page = shelf.list_cards()
    assert [c.id for c in page.cards] == ["card-new", "card-new2", "card-mid", "card-old"]
    assert (page.total, page.offset, page.limit) == (4, 0, 20)
    assert page.cards[0].tags == ["billing", "deploy"] and page.cards[0].content  # whole cards
    second = shelf.list_cards(limit=2, offset=1)
    assert [c.id for c in second.cards] == ["card-new2", "card-mid"] and second.total == 4
    assert shelf.list_cards(limit=0).model_dump() == {"cards": [], "total": 4, "offset": 0, "limit": 0}
    assert listed(shelf, offset=4) == []


@pytest.mark.parametrize("filters, expected", [
    ({"type": "gotcha"}, ["card-mid"]),
    ({"tag": "BILLING"}, ["card-new", "card-old"]),  # tags in any case
    ({"tag": "deploy"}, ["card-new", "card-new2", "card-mid"]),
    ({"entity": "postgresql"}, ["card-old"]),  # entity names in any case…
    ({"entity": "pg"}, ["card-old"]),  # …and their aliases
    ({"entity": "Kuzu"}, ["card-mid"]),
    ({"entity": "nobody"}, []),
    ({"since": "2026-01-11"}, ["card-new", "card-new2", "card-mid"]),
    ({"since": "2026-01-11T00:00:01"}, ["card-new", "card-new2"]),
    ({"until": "2026-01-11"}, ["card-mid", "card-old"]),  # a date: the whole day
    ({"until": "2026-01-11T00:00:00Z"}, ["card-old"]),  # a time: up to that instant
    ({"until": "2026-01-11T01:00:01+01:00"}, ["card-mid", "card-old"]),  # in another zone
    ({"since": "2026-01-02", "until": "2026-01-21"}, ["card-new", "card-new2", "card-mid"]),
    ({"tier": "hot"}, ["card-new"]),
    ({"tier": "COLD"}, ["card-old"]),
    ({"scope": "agent-a"}, ["card-new2", "card-mid", "card-old"]),  # its own cards and the shared ones
    ({"tag": "deploy", "scope": "agent-b"}, ["card-new", "card-new2"]),
])
def test_each_list_filter(shelf, filters, expected):
    assert listed(shelf, **filters) == expected
    assert shelf.list_cards(**filters).total == len(expected)


def test_list_reads_since_and_until_as_recall_does(shelf):
    later = datetime(2026, 1, 26, tzinfo=timezone.utc)  # a Monday
    assert listed(shelf, since="7d", now=later) == ["card-new", "card-new2"]
    assert listed(shelf, since="last week", now=later) == ["card-new", "card-new2"]
    assert listed(shelf, until="last month", now=later) == []  # December 2025


@pytest.mark.parametrize("filters, message", [
    ({"limit": -1}, "limit must be 0 to 1000"),
    ({"limit": 1001}, "limit must be 0 to 1000"),
    ({"offset": -5}, "offset must be 0 or more"),
    ({"tier": "LUKEWARM"}, "unknown tier 'LUKEWARM'"),
    ({"since": "someday"}, "since: cannot read 'someday' as a time"),
    ({"until": "2026-13-01"}, "until: cannot read '2026-13-01' as a time"),
    ({"since": "2026-02-01", "until": "2026-01-01"}, "is not before until"),
    ({"scope": "../etc"}, "invalid scope"),
])
def test_bad_list_values_are_input_errors(memory, filters, message):
    with pytest.raises(InputError, match=message):
        memory.list_cards(**filters)


def test_an_unmigrated_store_lists_by_entity_name(shelf):
    downgrade(shelf)  # entities without aliases, no Forward table: read as they are
    assert listed(shelf, entity="POSTGRESQL") == ["card-old"]
    assert listed(shelf, entity="pg") == []
    assert [c.id for c in shelf.get(["card-mid"])] == ["card-mid"]


# --- get -----------------------------------------------------------------------------------


def test_get_gives_whole_cards_in_the_order_asked(shelf):
    cards = shelf.get(["card-mid", "card-old"])
    assert [c.id for c in cards] == ["card-mid", "card-old"]
    mid = cards[0]
    assert (mid.type, mid.tags, mid.entities, mid.scope, mid.tier) == ("gotcha", ["deploy"], ["Kuzu"], "agent-a", "WARM")
    assert mid.sources[0].session_id == "s1" and mid.created_at.startswith("2026-01-11")
    assert mid.forwarded_from is None


def test_get_refuses_a_missing_or_invalid_id(shelf):
    with pytest.raises(NotFoundError, match="^no card 'card-zzz'$"):
        shelf.get(["card-mid", "card-zzz"])
    with pytest.raises(InputError, match="invalid card id"):
        shelf.get(["../card"])


# --- merged ids ----------------------------------------------------------------------------

KEEP_KUZU = "We decided to keep Kuzu as the embedded graph database for the card graph"


def _merged_store(data) -> tuple[str, str]:
    """Two sessions that distil to near-duplicate decisions, merged by `alaya introspect`
    (its batch, on a copy of the graph): (kept id, merged id)."""
    memory = Alaya(data)
    memory.init()
    memory.ingest(session_json("s1", [("user", f"{KEEP_KUZU} because it runs in process."),
                                      ("assistant", "Then the nightly backup must copy graph.kuzu with its wal file.")]))
    memory.ingest(session_json("s2", [("user", f"{KEEP_KUZU} since it runs in process with no server."),
                                      ("assistant", "The pgbouncer pool size in billing stays at forty connections.")]))
    memory.distill()
    report = json.loads(ok(alaya(data, "introspect", "--steps", "consolidate,cool-down", "--json")))
    merges = next(s for s in report["steps"] if s["step"] == "consolidate")["result"]["merges"]
    assert len(merges) == 1
    return merges[0]["keep"], merges[0]["drop"]


def _leads_to(data, kept: str, merged: str) -> None:
    """`get`, `trace` and `recall --from-nodes` of the merged id answer with the kept card, on
    the command line and in Python (recall twice: the second one reads the in-memory snapshot)."""
    got = json.loads(ok(alaya(data, "get", merged, "--json")))["cards"]
    assert [(c["id"], c["forwarded_from"]) for c in got] == [(kept, merged)]
    assert {s["session_id"] for s in got[0]["sources"]} == {"s1", "s2"}
    assert f"({kept})  (merged from {merged})" in ok(alaya(data, "get", merged))
    traced = json.loads(ok(alaya(data, "trace", merged, "--json")))
    assert (traced["card_id"], traced["forwarded_from"]) == (kept, merged)
    assert {s["session_id"] for s in traced["sessions"]} == {"s1", "s2"}
    assert f"({kept})  (merged from {merged})" in ok(alaya(data, "trace", merged))
    recalled = json.loads(ok(alaya(data, "recall", "--from-nodes", merged, "--json")))
    assert recalled["forwarded"] == {merged: kept}
    reached = {n["card_id"] for n in recalled["nodes"]}
    assert len(reached) == 2 and not reached & {kept, merged}  # the next card of each session
    assert f"note: {merged} was merged into {kept}" in ok(alaya(data, "recall", "--from-nodes", merged))

    memory = Alaya(data)
    assert [(c.id, c.forwarded_from) for c in memory.get([merged, kept])] == [(kept, merged), (kept, None)]
    traced = memory.trace(merged)
    assert (traced.card_id, traced.forwarded_from) == (kept, merged)
    for _snapshot in (False, True):
        result = memory.recall(from_nodes=[merged])
        assert result.forwarded == {merged: kept} and {n.card_id for n in result.nodes} == reached
    assert not memory.graph_views.empty()


def test_a_merged_id_leads_to_the_kept_card_in_get_trace_and_recall_also_after_rebuild(tmp_path):
    data = tmp_path / "data"
    kept, merged = _merged_store(data)
    _leads_to(data, kept, merged)
    report = json.loads(ok(alaya(data, "rebuild", "--json")))
    assert report["replayed"]["merge"] == 1
    _leads_to(data, kept, merged)


# --- the command line ------------------------------------------------------------------------


def test_list_and_get_on_the_command_line(shelf, monkeypatch):
    data = shelf.dirs.root
    table = ok(alaya(data, "list", "--tag", "deploy")).splitlines()
    assert table[0].split() == ["ID", "TYPE", "TIER", "DATE", "TITLE"]
    assert [line.split()[:4] for line in table[1:4]] == [
        ["card-new", "decision", "HOT", "2026-01-21"], ["card-new2", "concept", "WARM", "2026-01-21"],
        ["card-mid", "gotcha", "WARM", "2026-01-11"]]
    assert table[-1] == "1-3 of 3 cards"
    assert ok(alaya(data, "list", "--limit", "1")).splitlines()[-1] == "1-1 of 4 cards; --offset 1 for more"
    page = json.loads(ok(alaya(data, "list", "--entity", "POSTGRES", "--since", "2025-12-31", "--json")))
    assert [c["id"] for c in page["cards"]] == ["card-old"] and (page["total"], page["offset"], page["limit"]) == (1, 0, 20)
    assert ok(alaya(data, "list", "--type", "preference")) == "no matching cards\n"
    monkeypatch.setenv("ALAYA_NOW", "2026-01-26")  # what `7d` counts back from
    assert [line.split()[0] for line in ok(alaya(data, "list", "--since", "7d")).splitlines()[1:-1]] == [
        "card-new", "card-new2"]
    shown = ok(alaya(data, "get", "card-mid", "card-old")).split("\n---\n")
    assert len(shown) == 2 and shown[0].startswith("[gotcha] Kuzu needs its wal file in backups  (card-mid)")
    assert "tags: deploy" in shown[0] and "entities: Kuzu" in shown[0] and "source: s1 turns t1" in shown[0]


@pytest.mark.parametrize("args, message", [
    (["get", "card-zzz"], "no card 'card-zzz'"),
    (["get", "card-mid", "../x"], "invalid card id '../x'"),
    (["trace", "card-zzz"], "no card 'card-zzz'"),
    (["list", "--limit", "5000"], "list: limit must be 0 to 1000 (got 5000)"),
    (["list", "--limit", "-1"], "list: limit must be 0 to 1000 (got -1)"),
    (["list", "--offset", "-1"], "list: offset must be 0 or more (got -1)"),
    (["list", "--tier", "warmish"], "list: unknown tier 'warmish' (use HOT, WARM, COLD)"),
    (["list", "--until", "soon"], "until: cannot read 'soon' as a time"),
])
def test_command_line_errors_are_one_line(shelf, args, message):
    result = alaya(shelf.dirs.root, *args)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and result.stdout == b""
    assert stderr.startswith(f"alaya: error: {message}") and stderr.count("\n") == 1  # one line, no traceback
