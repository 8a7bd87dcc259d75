"""Follow-ups on the whole-store commands: verify reports what crash recovery would fix, and
rebuild / import-memex keep derived layers free of secrets and of lost curation."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import session_json

from openclaw_alaya.maintenance.status import status as alaya_status
from openclaw_alaya.models import Session, Turn
from openclaw_alaya.store.embedded.graph import GraphStore


def test_verify_reports_what_journal_check_finds(memory):
    from openclaw_alaya.maintenance.verify import verify

    memory.ingest(session_json("s-known", [("user", "We deploy the billing service on Fridays.")]))
    memory.distill()
    assert verify(memory)["ok"]
    # L3 written, L2 not (a crash between the two, or a file dropped in by hand)
    memory.raw.write(Session(id="s-orphan", started_at="2026-03-02T10:00:00+00:00",
                             turns=[Turn(id="t1", role="user", content="An orphaned session.")]))
    # L3 gained a turn the Session node does not know about
    known = memory.raw.load("s-known")
    memory.raw.write(known.model_copy(update={"turns": [*known.turns, Turn(id="t9", role="user", content="More.")]}))
    report = verify(memory)
    assert not report["ok"]
    assert report["counts"].get("session_not_in_l2") == 1 and report["counts"].get("stale_session") == 1
    assert {p.get("session") for p in report["problems"]} >= {"s-orphan", "s-known"}

    result = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "verify", "--json"],
                            capture_output=True, timeout=120)
    assert result.returncode == 1
    assert json.loads(result.stdout)["counts"]["session_not_in_l2"] == 1
    result = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "verify"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "session_not_in_l2" in result.stdout

    from openclaw_alaya.maintenance.rebuild import rebuild

    rebuild(memory)  # re-derives L2 from every L3 file
    assert verify(memory)["ok"]


# --- secrets stay out of L2/L1 when L3 keeps the original ------------------------------------

# Fake secrets assembled from pieces (no literal a scanner would flag; see secret_corpus.py).
GITHUB = "gh" + "p_" + "Zq8R2mKx7LwP4nV1sT6yB3cJ9dF0gH5aE2uQ"
STRIPE = "sk" + "_live_" + "51Hx9QkL2mN8pR4tV7wY1zA3bC6dE0fG"
SECRETS = (GITHUB, STRIPE)


def _raw_off(memory):
    from openclaw_alaya import Alaya

    config = json.loads(memory.dirs.config.read_text())
    config.setdefault("redaction", {})["redact_raw"] = False
    memory.dirs.config.write_text(json.dumps(config))
    return Alaya(memory.dirs.root)


def _derived(memory) -> str:
    """Every string of L2 and L1, and the files outside raw/ (Kuzu and LanceDB on disk)."""
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        texts = [graph.query("MATCH (c:Card) RETURN c.title, c.content, c.tags, c.entities, c.sources"),
                 graph.query("MATCH (s:Session) RETURN s.title"), graph.query("MATCH (e:Entity) RETURN e.name")]
    texts.append([r["text"] for r in memory.index._table("cards").search().select(["text"]).limit(100_000).to_list()])
    blob = json.dumps(texts)
    for path in memory.dirs.root.rglob("*"):
        if path.is_file() and "raw" not in path.relative_to(memory.dirs.root).parts:
            blob += path.read_bytes().decode("latin-1")
    return blob


def _leaks(text: str) -> list[str]:
    return [s[:6] for s in SECRETS if s in text]


def test_rebuild_with_redact_raw_off_keeps_l2_and_l1_clean(memory):
    import shutil

    from openclaw_alaya.maintenance.rebuild import rebuild

    memory = _raw_off(memory)
    memory.ingest(session_json("s-secrets", [
        ("user", f"We decided the deploy bot uses the GitHub token {GITHUB} from now on."),
        ("assistant", "Noted: the deploy bot authenticates with that GitHub token."),
        ("user", f"Also the billing job must use stripe key {STRIPE} for invoices."),
    ], started_at="2026-03-01T10:00:00+00:00"))
    memory.distill()
    raw = "".join(p.read_text() for p in (memory.dirs.raw / "sessions").rglob("*.json"))
    assert len(_leaks(raw)) == 2  # L3 keeps the original (redact_raw off)
    assert _leaks(_derived(memory)) == []
    shutil.rmtree(memory.dirs.raw / "contexts")  # rebuild writes the lost context files again
    report = rebuild(memory)
    assert report["cards_now"] > 0
    assert _leaks(_derived(memory)) == []
    contexts = "".join(p.read_text() for p in (memory.dirs.raw / "contexts").rglob("*") if p.is_file())
    assert contexts and _leaks(contexts) == []
    assert "[REDACTED:" in json.dumps([n.content for n in memory.recall("deploy bot GitHub token").nodes])


def test_import_memex_notes_go_through_the_store_filters(memory, tmp_path):
    from openclaw_alaya import Alaya
    from openclaw_alaya.maintenance.memex import import_memex
    from openclaw_alaya.maintenance.rebuild import rebuild

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Deploy.md").write_text(f"---\ntitle: Deploy bot\n---\nThe deploy bot token is {GITHUB}. See [[Billing]].\n")
    (vault / "Billing.md").write_text(f"# Billing\n\nInvoices run with stripe key {STRIPE} nightly.\n")

    # default: redacted before anything is stored, L3 included
    assert import_memex(memory, vault)["cards"] == 2
    raw = "".join(p.read_text() for p in (memory.dirs.raw / "sessions").rglob("*.*"))
    assert _leaks(raw) == [] and "[REDACTED:" in raw
    assert _leaks(_derived(memory)) == []
    assert alaya_status(memory)["redaction"]["redacted"] >= 2

    # redact_raw off: L3 keeps the note as written, L2/L1/contexts get the filtered text
    other = Alaya(tmp_path / "other")
    other.init()
    other = _raw_off(other)
    report = import_memex(other, vault)
    assert report["cards"] == 2 and report["links"] == 1
    raw = "".join(p.read_text() for p in (other.dirs.raw / "sessions").rglob("*.json"))
    assert len(_leaks(raw)) == 2
    assert _leaks(_derived(other)) == []
    contexts = "".join(p.read_text() for p in (other.dirs.raw / "contexts").rglob("*") if p.is_file())
    assert _leaks(contexts) == []
    assert import_memex(other, vault)["stored"] == 0  # unchanged notes: nothing new in L3
    rebuild(other)
    assert _leaks(_derived(other)) == []


# --- rebuild keeps what the resolver decided ---------------------------------------------------


def test_rebuild_replays_supersedes_so_valid_until_survives(memory):
    from openclaw_alaya.maintenance.rebuild import rebuild
    from openclaw_alaya.maintenance.verify import verify

    memory.ingest(session_json("s-berlin", [("user", "I live in Berlin and love the winter markets there.")],
                               started_at="2025-03-01T10:00:00+00:00"))
    memory.distill()
    memory.ingest(session_json("s-lisbon", [("user", "Big news: I moved from Berlin to Lisbon last month.")],
                               started_at="2025-06-01T10:00:00+00:00"))
    assert memory.distill().contradicted == 1
    old = next(n for n in memory.recall("where do I live? Berlin or Lisbon").nodes if "I live in Berlin" in n.content)
    assert old.superseded

    report = rebuild(memory)
    assert report["replayed"]["supersede"] == 1 and report["replayed"]["link"] == 1
    nodes = memory.recall("where do I live? Berlin or Lisbon").nodes
    assert "Lisbon" in nodes[0].content and not nodes[0].superseded and nodes[0].valid_until is None
    again = next(n for n in nodes if n.card_id == old.card_id)
    assert again.superseded and again.valid_until == "2025-06-01T10:00:00+00:00"
    explorable = memory.recall(from_nodes=[nodes[0].card_id], relations=["CONTRADICTS"]).nodes
    assert [n.card_id for n in explorable] == [old.card_id]
    assert verify(memory)["ok"]
    assert rebuild(memory)["replayed"]["supersede"] == 1  # idempotent: the same store again
    assert next(n for n in memory.recall("Berlin").nodes if n.card_id == old.card_id).superseded


# --- introspect: consolidate … forget in one write-lock hold -----------------------------------


def test_introspect_batches_the_maintenance_steps_into_one_write_hold(memory, tmp_path):
    import shutil
    from datetime import timedelta

    from test_maintenance import T0, cards_of, edges, indexed, put_night

    from openclaw_alaya import Alaya
    from openclaw_alaya.maintenance import access, consolidate, forget, temperature
    from openclaw_alaya.maintenance.introspect import run

    later = T0 + timedelta(days=400)
    put_night(memory, later, ["card-hot", "card-b", "card-gone"])
    shutil.copytree(memory.dirs.root, tmp_path / "apart")
    apart = Alaya(tmp_path / "apart")

    memory.lock.write_holds.clear()
    report = run(memory, now=later, steps=["consolidate", "fold-access", "cool-down", "forget"])
    assert report["ok"], report
    holds = [op for op, _s in memory.lock.write_holds]
    assert holds == ["introspect fold-access (rotate log)", "introspect (consolidate, fold-access, cool-down, forget)"]
    batched = {s["step"]: s["result"] for s in report["steps"]}

    separate = {  # the same steps one at a time, each with its own write-lock holds
        "consolidate": consolidate.consolidate(apart, now=later),
        "fold-access": access.fold(apart, now=later),
        "cool-down": temperature.cool_down(apart, now=later),
        "forget": forget.forget(apart, now=later),
    }
    assert len(apart.lock.write_holds) > 2
    for name, result in separate.items():
        assert batched[name] == result, name
    assert batched["consolidate"]["merged"] >= 1 and batched["forget"]["forgotten"] >= 1
    assert batched["fold-access"]["unknown_cards"] == 2  # card-gone, and card-b merged away

    def state(m):
        return ({cid: (c.tier, c.temperature, c.access_count, c.last_accessed, c.importance, c.valid_until,
                       tuple(s.session_id for s in c.sources)) for cid, c in cards_of(m).items()}, edges(m), indexed(m))

    assert state(memory) == state(apart)
    assert "card-dep" in cards_of(memory)  # depended on: never forgotten
    assert not memory.dirs.access_log.exists() and not list(memory.dirs.state.glob("access.folding-*"))
    curation = sorted(json.dumps({k: v for k, v in r.items()}, sort_keys=True)
                      for r in map(json.loads, (memory.dirs.raw / "curation.jsonl").read_text().splitlines()))
    assert curation == sorted(json.dumps(json.loads(line), sort_keys=True)
                              for line in (apart.dirs.raw / "curation.jsonl").read_text().splitlines())

    # a dry run still runs each step on its own and changes nothing
    dry = run(memory, now=later + timedelta(days=1), dry_run=True)
    assert dry["ok"] and all(s["result"].get("dry_run", True) for s in dry["steps"] if s["step"] != "distill-pending")
