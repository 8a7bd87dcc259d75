"""Introspect maintenance (issue 5) on real Kuzu and LanceDB stores: consolidate, fold the
access log, cool down, forget, buckets; and verify, rebuild, export, import-memex."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import session_json

from openclaw_alaya.maintenance import access, consolidate, forget, temperature
from openclaw_alaya.maintenance.common import iso
from openclaw_alaya.maintenance.status import status as alaya_status
from openclaw_alaya.models import (
    Card,
    Link,
    SourceRef,
    expand_link,
    index_row,
    index_text,
)
from openclaw_alaya.store.raw import read_log

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def card(cid: str, content: str, *, session: str = "s1", type: str = "concept", created: datetime = T0,
         importance: float = 0.5, access_count: int = 0, last_accessed: datetime | None = None, tier: str = "WARM",
         origin: str | None = "agent") -> Card:
    """A card as the agent wrote it (`origin`): forget never takes an owner-stated one by age
    (issue 31, tests/test_tiers_forgetting.py)."""
    return Card(
        id=cid, title=content[:40], content=content, type=type, importance=importance, scope="shared",
        sources=[SourceRef(session_id=session, turn_ids=["t1"])], created_at=iso(created), updated_at=iso(created),
        access_count=access_count, last_accessed=iso(last_accessed) if last_accessed else None, tier=tier,
        origin=origin,
    )


def put(memory, cards: list[Card], links: list[Link] = ()) -> None:
    """Cards (with their sessions in L3 and L2) and links, written as distill would."""
    for sid in sorted({s.session_id for c in cards for s in c.sources}):
        memory.ingest(session_json(sid, [("user", f"session {sid}")]))
    vectors = memory.embedder.embed([index_text(c) for c in cards])
    with memory.writing("test") as graph:
        with graph:
            graph.upsert_cards(cards)
            graph.link_to_sessions([{"card": c.id, "session": s.session_id, "turns": s.turn_ids}
                                    for c in cards for s in c.sources])
            graph.add_links(list(links))
        memory.index.upsert_cards([index_row(c) for c in cards], vectors)


def edges(memory) -> set[tuple[str, str, str]]:
    with memory.reading("test") as graph:
        return {(s, r, d) for s, r, d, _w, _c in graph.card_edges()}


def cards_of(memory) -> dict[str, Card]:
    with memory.reading("test") as graph:
        return graph.get_cards(sorted(graph.all_card_ids()))


def indexed(memory) -> set[str]:
    return set(memory.index.card_ids())


# --- consolidate ---------------------------------------------------------------------------

DUP = "Kuzu is the embedded graph database we use for the card graph"


def put_night(memory, later: datetime, accessed: list[str]) -> None:
    """A store with work for every batched introspect step: duplicates to merge, similar cards
    to link, an old card to forget, one depended on, and 25 hours of recalls of `accessed`."""
    put(memory, [
        card("card-a", DUP, session="s1"), card("card-b", DUP + ".", session="s2", created=T0 + timedelta(days=1)),
        card("card-old", "Old unused note about the staging printer", session="s3"),
        card("card-dep", "The deploy script depends on this old helper note", session="s3"),
        card("card-hot", "The billing pool size is 40 connections", session="s4", importance=0.9),
        card("card-sim", "Kuzu is the embedded graph database we use for graphs of cards and notes", session="s4"),
    ], [Link(src="card-hot", dst="card-dep", rel="DEPENDS_ON", weight=1.0, created_at="2026-01-01T00:00:00+00:00")])
    memory.dirs.access_log.write_text("".join(
        json.dumps({"ts": (later - timedelta(hours=h)).timestamp(), "cards": accessed}) + "\n" for h in range(25)))


def test_duplicates_are_merged_with_edges_repointed(memory):
    a = card("card-a", DUP, session="s1", created=T0)
    b = card("card-b", DUP + ".", session="s2", created=T0 + timedelta(days=1)).model_copy(update={"tags": ["kuzu"]})
    c = card("card-c", "The pgbouncer pool in billing holds fifty connections", session="s3")
    d = card("card-d", "Nightly exports to the warehouse run at two in the morning", session="s3")
    links = [*expand_link("card-b", "card-c", "DEPENDS_ON", 1.0, iso(T0)),
             *expand_link("card-d", "card-b", "CAUSED_BY", 1.0, iso(T0)),
             *expand_link("card-b", "card-d", "OWNS", 1.0, iso(T0)),
             *expand_link("card-a", "card-b", "SIMILAR_TO", 1.0, iso(T0))]
    put(memory, [a, b, c, d], links)

    dry = consolidate.consolidate(memory, now=T0, dry_run=True)
    assert dry["merged"] == 1 and "card-b" in cards_of(memory)

    report = consolidate.consolidate(memory, now=T0)
    assert report["merged"] == 1 and report["merges"][0]["keep"] == "card-a" and report["merges"][0]["drop"] == "card-b"
    cards = cards_of(memory)
    assert "card-b" not in cards and "card-b" not in indexed(memory) and "card-a" in indexed(memory)
    kept = cards["card-a"]
    assert {s.session_id for s in kept.sources} == {"s1", "s2"}  # provenance of both
    assert "kuzu" in kept.tags
    got = edges(memory)
    assert ("card-a", "DEPENDS_ON", "card-c") in got
    assert ("card-d", "CAUSED_BY", "card-a") in got and ("card-a", "CAUSES", "card-d") in got
    assert ("card-a", "OWNS", "card-d") in got
    assert not any("card-b" in (s, d) for s, _r, d in got)
    assert not any(s == d for s, _r, d in got)
    with memory.reading("test") as graph:
        sessions = {r[0] for r in graph.query(
            "MATCH (c:Card {id: 'card-a'})-[:EXTRACTED_FROM]->(s:Session) RETURN s.id")}
    assert sessions == {"s1", "s2"}
    log = read_log(memory.dirs.raw / "curation.jsonl")
    assert {"op": "merge", "keep": "card-a", "drop": "card-b"}.items() <= log[0].items()


def test_distinct_facts_that_hash_alike_are_not_merged(memory):
    memory.config.introspect.consolidate_threshold = 0.9
    base = "The billing service timeout for the payments API gateway in the eu-west cluster is {} seconds"
    put(memory, [card("card-30", base.format(30)), card("card-60", base.format(60), session="s2")])
    report = consolidate.consolidate(memory, now=T0)
    assert report["merged"] == 0 and report["rejected_by_check"] == 1
    assert {"card-30", "card-60"} <= set(cards_of(memory))
    assert ("card-30", "SIMILAR_TO", "card-60") in edges(memory)  # linked instead


def test_similar_pairs_are_linked_once(memory):
    put(memory, [
        card("card-p1", "pnpm is the package manager for the frontend monorepo"),
        card("card-p2", "pnpm is the package manager we use for the frontend monorepo workspace", session="s2"),
        card("card-x", "The on-call rotation changes every Monday at nine", session="s3"),
    ])
    first = consolidate.consolidate(memory, now=T0)
    assert first["merged"] == 0 and first["similar_linked"] == 1
    got = edges(memory)
    assert ("card-p1", "SIMILAR_TO", "card-p2") in got and ("card-p2", "SIMILAR_TO", "card-p1") in got
    assert not any("card-x" in (s, d) for s, r, d in got if r == "SIMILAR_TO")
    assert consolidate.consolidate(memory, now=T0)["similar_linked"] == 0  # not linked twice


def test_similar_pairs_blocked_matches_brute_force():
    import numpy as np

    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 16)).astype(np.float32)
    x[150] = x[3] * 2  # a duplicate direction
    groups = ["a" if i % 3 else "b" for i in range(300)]
    found = {(i, j) for i, j, _ in consolidate.similar_pairs(x, groups, 0.8, block=64)}
    n = x / np.linalg.norm(x, axis=1)[:, None]
    s = n @ n.T
    brute = {(i, j) for i in range(300) for j in range(i + 1, 300) if s[i, j] >= 0.8 and groups[i] == groups[j]}
    assert found == brute and (3, 150) in found


def test_relation_review_flags_vague_frequent_and_alias_names(memory):
    put(memory, [card(f"card-r{i}", f"component number {i} of the platform", session="s1") for i in range(4)])
    for i in range(3):
        memory.link(f"card-r{i}", f"card-r{i + 1}", "RELATES_TO")
    memory.link("card-r0", "card-r2", "OWNED_BY")
    memory.link("card-r1", "card-r3", "OWNS_BY")
    memory.config.introspect.relation_promote_count = 3
    report = consolidate.consolidate(memory, now=T0, dry_run=True)["relations"]
    assert {"name": "RELATES_TO", "count": 3} in report["vague"]
    assert {"name": "RELATES_TO", "count": 3} in report["promote_candidates"]
    assert any({a["name"], a["alias_of"]} == {"OWNED_BY", "OWNS_BY"} for a in report["alias_candidates"])


# --- temperature, tiers, access log --------------------------------------------------------


def test_temperature_formula(memory):
    cfg = memory.config.temperature
    t = lambda **kw: temperature.temperature(**{"created_at": iso(T0), "last_accessed": None, "access_count": 0,
                                                "importance": 0.5, "now": T0, "config": cfg, **kw})
    assert t() == pytest.approx(0.75 * 0.8)  # fresh, never recalled: WARM
    assert t(now=T0 + timedelta(days=30)) == pytest.approx(0.3)  # one half-life later
    assert t(access_count=20) == pytest.approx(0.8)  # saturated frequency
    assert t(importance=1.0, access_count=100) == pytest.approx(1.0)
    assert t(last_accessed=iso(T0 + timedelta(days=30)), now=T0 + timedelta(days=30)) == pytest.approx(0.6)
    assert t(valid_until=iso(T0)) == pytest.approx(0.3)  # superseded: relevance halved
    assert temperature.tier_of(0.7, cfg) == "HOT" and temperature.tier_of(0.3, cfg) == "WARM"
    assert temperature.tier_of(0.2999, cfg) == "COLD"
    # the seed's contract: at most hot_days (7) old, or recalled more than hot_accesses (10) times
    assert temperature.tier_of(0.6, cfg, age_days=7.0) == temperature.tier_of(0.1, cfg, access_count=11) == "HOT"
    assert temperature.tier_of(0.6, cfg, age_days=7.5) == "WARM"
    assert temperature.tier_of(0.1, cfg, age_days=30, access_count=10) == "COLD"


def test_a_card_is_hot_on_creation(memory):
    """Distilled, remembered and imported cards start HOT at temperature 1.0, and a first
    cool-down keeps a week-old card HOT although its temperature is lower."""
    memory.ingest(session_json("s-hot", [("user", "We decided to pin Kuzu to 0.11.3 because 0.12 broke the WAL."),
                                         ("assistant", "Noted: Kuzu stays on 0.11.3.")]))
    memory.distill()
    memory.remember("The staging database is reset every Sunday night")
    fresh = cards_of(memory)
    assert len(fresh) >= 2
    assert {(c.tier, c.temperature) for c in fresh.values()} == {("HOT", 1.0)}
    made = min(datetime.fromisoformat(c.created_at) for c in fresh.values())
    report = temperature.cool_down(memory, now=made + timedelta(days=6))
    assert report["tiers"] == {"HOT": len(fresh)}
    assert all(c.temperature < memory.config.temperature.hot_threshold for c in cards_of(memory).values())
    assert temperature.cool_down(memory, now=made + timedelta(days=9))["tiers"].get("HOT", 0) == 0


def test_tier_transitions_on_an_access_history(memory):
    put(memory, [card("card-t", "The deploy checklist lives in the ops wiki", importance=0.5),
                 card("card-hub", "Release process overview for the platform team", importance=1.0)],
        expand_link("card-hub", "card-t", "DEPENDS_ON", 1.0, iso(T0)))
    tier = lambda: cards_of(memory)["card-t"].tier

    report = temperature.cool_down(memory, now=T0)  # new: HOT for its first week
    assert tier() == "HOT" and report["tiers"] == {"HOT": 2}
    report = temperature.cool_down(memory, now=T0 + timedelta(days=8))
    assert tier() == "WARM" and report["transitions"] == {"HOT->WARM": 2}

    later = T0 + timedelta(days=31)
    report = temperature.cool_down(memory, now=later)
    assert tier() == "COLD" and report["transitions"] == {"WARM->COLD": 1}  # hub: important, WARM
    assert "card-t" in indexed(memory)  # issue 31: a COLD card keeps its L1 row (words and vector)
    assert "card-t" in cards_of(memory)
    # a graph walk reaches it, and so does a query by its words
    walked = memory.recall(from_nodes=["card-hub"], relations=["DEPENDS_ON"], depth=1)
    assert [n.card_id for n in walked.nodes] == ["card-t"] and walked.nodes[0].tier == "COLD"
    assert "card-t" in [n.card_id for n in memory.recall("deploy checklist").nodes]

    # 20 recalls on day 31 are folded in: the card is HOT
    memory.dirs.access_log.unlink(missing_ok=True)
    for _ in range(20):
        with open(memory.dirs.access_log, "a") as log:
            log.write(json.dumps({"ts": later.timestamp(), "cards": ["card-t"]}) + "\n")
    folded = access.fold(memory, now=later)
    assert folded["accesses"] == 20 and not memory.dirs.access_log.exists()
    c = cards_of(memory)["card-t"]
    assert c.access_count == 20 and c.last_accessed == iso(later)
    report = temperature.cool_down(memory, now=later)
    assert tier() == "HOT" and report["transitions"]["COLD->HOT"] == 1 and report["embeddings_restored"] == 0
    assert "card-t" in indexed(memory)

    # ten days without recall: still HOT, recalled more than hot_accesses (10) times; with
    # that bar above its 20 recalls, its temperature decides: HOT → WARM
    assert "HOT->WARM" not in temperature.cool_down(memory, now=later + timedelta(days=10))["transitions"]
    assert tier() == "HOT"
    memory.config.temperature.hot_accesses = 20
    assert temperature.cool_down(memory, now=later + timedelta(days=10))["transitions"]["HOT->WARM"] == 1
    assert tier() == "WARM"
    # the HOT limit demotes the overflow
    memory.config.temperature.hot_limit = 0
    report = temperature.cool_down(memory, now=later)
    assert tier() == "WARM" and report["demoted_hot_limit"] == 1


def test_fold_keeps_lines_appended_meanwhile(memory):
    put(memory, [card("card-f", "A fact that gets recalled")])
    memory.dirs.access_log.write_text(json.dumps({"ts": T0.timestamp(), "cards": ["card-f", "card-gone"]}) + "\n")
    report = access.fold(memory)
    assert report["accesses"] == 2 and report["unknown_cards"] == 1
    memory.dirs.access_log.write_text(json.dumps({"ts": T0.timestamp() + 5, "cards": ["card-f"]}) + "\n{torn")
    access.fold(memory)
    assert cards_of(memory)["card-f"].access_count == 2
    assert not list(memory.dirs.state.glob("access.folding-*"))


# --- forget --------------------------------------------------------------------------------


def test_forget_removes_only_eligible_cards(memory):
    now = T0 + timedelta(days=365)
    old = T0
    put(memory, [
        card("card-forget", "An old unused note about a retired cron job", created=old, session="s-old"),
        card("card-needed", "The legacy auth token format used by the mobile app", created=old),
        card("card-dependent", "Mobile login depends on the legacy token format", created=now - timedelta(days=1),
             importance=1.0),
        card("card-used", "Frequently recalled old note about ports", created=old, access_count=5,
             last_accessed=old),
        card("card-young", "A recent note nobody recalled yet", created=now - timedelta(days=60)),
        card("card-warm", "An old note recalled yesterday", created=old, access_count=1,
             last_accessed=now - timedelta(days=1), importance=1.0),
    ], expand_link("card-dependent", "card-needed", "DEPENDS_ON", 1.0, iso(old)))
    temperature.cool_down(memory, now=now)
    tiers = {cid: c.tier for cid, c in cards_of(memory).items()}
    assert tiers["card-forget"] == tiers["card-needed"] == tiers["card-used"] == tiers["card-young"] == "COLD"
    assert tiers["card-warm"] != "COLD"

    assert forget.forget(memory, now=now, dry_run=True)["eligible"] == 1
    report = forget.forget(memory, now=now)
    assert report["forgotten"] == 1 and report["cards"] == [
        {"card": "card-forget", "reason": "unused", "title": "An old unused note about a retired cron ",
         "restorable_until": iso(now + timedelta(days=30))}]  # issue 31: `alaya restore` until then
    left = set(cards_of(memory))
    assert left == {"card-needed", "card-dependent", "card-used", "card-young", "card-warm"}
    assert memory.raw.find("s-old") is not None  # L3 keeps the source
    assert any(r.get("op") == "forget" and r["card"] == "card-forget" and r["reason"] == "unused"
               for r in read_log(memory.dirs.raw / "curation.jsonl"))


# --- introspect as a whole -----------------------------------------------------------------


def test_introspect_runs_all_steps_and_honours_steps_and_dry_run(memory):
    from openclaw_alaya.maintenance.introspect import run

    memory.ingest((DEMO / "ops-incident.jsonl").read_bytes())
    report = run(memory, dry_run=True)
    assert report["ok"] and report["dry_run"]
    mine = ["consolidate", "fold-access", "cool-down", "forget", "optimize", "time-buckets"]
    names = [s["step"] for s in report["steps"]]
    assert names[0] == "distill-pending" and [n for n in names if n in mine] == mine
    assert memory.pending_sessions()  # dry run: nothing distilled
    report = run(memory, now=T0)
    assert report["ok"], report
    assert not memory.pending_sessions()
    buckets = json.loads((memory.dirs.state / "buckets.json").read_text())
    assert buckets["monthly"] or buckets["weekly"] or buckets["daily"] or buckets["computed_at"]
    only = run(memory, steps=["cool-down"], now=T0 + timedelta(days=400))
    assert [s["step"] for s in only["steps"]] == ["cool-down"]
    assert only["steps"][0]["result"]["tiers"].get("COLD", 0) == only["steps"][0]["result"]["cards"]
    assert memory.index.card_count() == only["steps"][0]["result"]["cards"]  # issue 31: COLD keeps its row
    status = alaya_status(memory)
    assert status["tiers"]["COLD"] == status["cards"] and {"sessions", "cards", "links"} <= status.keys()


# --- verify, rebuild ---------------------------------------------------------------------------


def _distilled(memory):
    for name in ("ops-incident.jsonl", "prefs-pnpm.json", "zh-team-prefs.json", "decision-graph-store.json"):
        memory.ingest((DEMO / name).read_bytes())
    memory.distill()
    return memory


def _snapshot(memory):
    cards = {cid: (c.title, c.content, c.type, tuple(c.tags)) for cid, c in cards_of(memory).items()}
    return cards, edges(memory)


def test_rebuild_from_l3_gives_the_same_cards_and_links(memory):
    _distilled(memory)
    ids = sorted(cards_of(memory))
    memory.link(ids[0], ids[5], "OWNED_BY")  # a manual link survives through raw/links.jsonl
    memory.link(ids[1], ids[6], "DEPENDS_ON")
    before = _snapshot(memory)
    assert ((ids[0], "OWNED_BY", ids[5])) in before[1]
    from openclaw_alaya.maintenance.rebuild import rebuild
    from openclaw_alaya.maintenance.verify import verify

    report = rebuild(memory)
    assert report["replayed"]["link"] == 2
    after = _snapshot(memory)
    assert after[0] == before[0]
    assert after[1] == before[1]
    assert verify(memory)["ok"]
    assert memory.recall("pnpm").nodes  # the new index answers


def test_rebuild_replays_merges_and_forgets(memory):
    put(memory, [card("card-a", DUP, session="s1"), card("card-b", DUP + ".", session="s2", created=T0 + timedelta(days=1)),
                 card("card-old", "Old unused note", session="s3")])
    consolidate.consolidate(memory, now=T0)
    temperature.cool_down(memory, now=T0 + timedelta(days=400))
    assert forget.forget(memory, now=T0 + timedelta(days=400))["forgotten"] >= 1
    from openclaw_alaya.maintenance.rebuild import rebuild

    report = rebuild(memory)
    # the test sessions distil to their own cards; the hand-made ones are not re-derivable, so
    # what matters is that the replay ran and did not resurrect anything it had removed
    assert report["replayed"]["merge"] == 0 and report["replayed"]["skipped"] >= 1
    assert "card-b" not in cards_of(memory)


def test_verify_detects_each_injected_fault(memory, tmp_path):
    from openclaw_alaya.maintenance.verify import verify

    _distilled(memory)
    assert verify(memory)["ok"]
    ids = sorted(cards_of(memory))
    warm = next(cid for cid in ids)

    memory.index.delete_cards([warm])  # 1. a deleted L1 row
    report = verify(memory)
    assert not report["ok"] and report["counts"] == {"missing_l1_row": 1}
    assert report["problems"][0]["card"] == warm

    with memory.writing("test") as graph:  # 2. an orphan edge: an edge to a card that is not there
        graph.query("CREATE (:Card {id: 'card-ghost'})")
        graph.query("MATCH (a:Card {id: $a}), (b:Card {id: 'card-ghost'}) CREATE (a)-[:DEPENDS_ON {weight: 1.0}]->(b)",
                    {"a": ids[1]})
    report = verify(memory)
    assert report["counts"].get("orphan_edge") == 1

    session_file = memory.raw.find("ops-2026-03-12-billing-pool")  # 3. a missing L3 file
    session_file.unlink()
    report = verify(memory)
    assert report["counts"].get("missing_session", 0) >= 1
    assert all(p["session"] == "ops-2026-03-12-billing-pool" for p in report["problems"] if p["kind"] == "missing_session")

    result = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "verify", "--json"],
                            capture_output=True, timeout=120)
    assert result.returncode == 1
    assert json.loads(result.stdout)["counts"]["orphan_edge"] == 1


# --- export, memex -------------------------------------------------------------------------


def test_export_writes_markdown_by_type_graphml_and_index(memory, tmp_path):
    from openclaw_alaya.maintenance.export import GRAPHML_NS, export

    _distilled(memory)
    report = export(memory, tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "index.md").read_text().startswith("# Alaya memory export")
    cards = cards_of(memory)
    for cid, c in cards.items():
        text = (out / "cards" / c.type / f"{cid}.md").read_text()
        assert text.startswith("---\n") and f"# {c.title}" in text
    root = ET.parse(out / "graph.graphml").getroot()
    ns = {"g": GRAPHML_NS}
    assert root.tag == f"{{{GRAPHML_NS}}}graphml"
    keys = {k.get("id") for k in root.findall("g:key", ns)}
    graph = root.find("g:graph", ns)
    nodes = {n.get("id") for n in graph.findall("g:node", ns)}
    found_edges = graph.findall("g:edge", ns)
    assert nodes == set(cards) and len(found_edges) == report["edges"] == len(edges(memory))
    for e in found_edges:
        assert e.get("source") in nodes and e.get("target") in nodes
        assert {d.get("key") for d in e.findall("g:data", ns)} <= keys


def test_import_memex_notes_become_cards_links_and_l3_sessions(memory, tmp_path):
    from openclaw_alaya.maintenance.memex import import_memex
    from openclaw_alaya.maintenance.rebuild import rebuild
    from openclaw_alaya.maintenance.verify import verify

    notes = tmp_path / "vault"
    (notes / "sub").mkdir(parents=True)
    (notes / "Kuzu.md").write_text("---\ntitle: Kuzu graph store\ntype: decision\ntags: [db, graph]\n---\n"
                                   "We picked Kuzu because it is embedded. See [[LanceDB]] and [[Nowhere]].\n")
    (notes / "sub" / "LanceDB.md").write_text("# LanceDB\n\nVector index next to [[Kuzu graph store|Kuzu]].\n")
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "x.md").write_text("ignored")
    report = import_memex(memory, notes)
    assert report == {"files": 2, "skipped": 0, "stored": 2, "cards": 2, "links": 2, "unresolved_links": 1}
    cards = {c.title: c for c in cards_of(memory).values()}
    assert cards["Kuzu graph store"].type == "decision" and cards["Kuzu graph store"].tags == ["db", "graph"]
    kuzu, lance = cards["Kuzu graph store"].id, cards["LanceDB"].id
    assert {(kuzu, "RELATES_TO", lance), (lance, "RELATES_TO", kuzu)} <= edges(memory)
    assert not memory.pending_sessions()  # notes are not distilled again
    assert verify(memory)["ok"]
    assert import_memex(memory, notes)["stored"] == 0  # unchanged notes store nothing new
    before = _snapshot(memory)
    rebuild(memory)
    assert _snapshot(memory) == before
    assert memory.recall("embedded graph").nodes[0].card_id == kuzu


def test_note_front_matter_is_read_as_yaml():
    from openclaw_alaya.maintenance.memex import parse_note

    folded = parse_note("---\ntitle: >\n  Why we chose Kuzu\n  over Neo4j\ntags: [graph, 'db']\n---\n# Heading\nbody", "f")
    assert folded["title"] == "Why we chose Kuzu over Neo4j" and folded["tags"] == ["graph", "db"]
    quoted = parse_note("---\ntitle: 'It''s the pool size'\ntags:\n  - pgbouncer\n  - ops\nimportance: 0.9\n"
                        "date: 2024-01-01\n---\ntext", "f")
    assert quoted["title"] == "It's the pool size" and quoted["tags"] == ["pgbouncer", "ops"]
    assert quoted["importance"] == 0.9
    broken = parse_note("---\ntitle: [unclosed\n---\n# Fallback heading\n", "f")
    assert broken["title"] == "Fallback heading" and broken["body"] == "# Fallback heading"
