"""Issue 31: forgetting that removes noise, not knowledge, is reversible until purged. On real
stores (Kuzu and LanceDB on disk), through the CLI in subprocesses with `ALAYA_NOW` moved on:

- introspect forgets an old unused card: recall no longer finds it, `alaya restore --list`
  lists it with its reason, a rebuild keeps it out; `alaya restore` puts it back with its
  relations (recalled again), a rebuild keeps it, and introspect does not forget it again;
- after `introspect.forget_purge_after_days` introspect deletes the saved copy and `alaya
  restore` says the card is gone for good; an unknown or hostile id is one line, exit 1;
- the owner's forget of a card introspect forgot leaves no copy: its one unique word is in no
  byte of the data directory afterwards;
- kill -9 inside a forget or a restore, between its steps, loses no card.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import session_json
from test_maintenance import card, put

from openclaw_alaya.maintenance import introspect
from openclaw_alaya.maintenance.common import iso
from openclaw_alaya.maintenance.verify import verify
from openclaw_alaya.store import forgotten

T0 = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=181)  # old, unrecalled and COLD: an agent's plain concept is forgotten as unused
STEPS = "fold-access,cool-down,forget"
QUERY = "exports of the warehouse at two in the morning"  # the nightly-exports card ranks first
UNIQUE = "quixotrellis"  # said by one card only
TURNS = [("user", "How is the billing pool configured for the staging cluster?"),
         ("assistant", "The billing pool in staging uses pgbouncer with forty connections and a short timeout."),
         ("user", "And the nightly exports?"),
         ("assistant", "Nightly exports of the warehouse depend on the billing pool and run at two in the morning.")]


def alaya(data: Path, *args: str, now: datetime = LATER, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "ALAYA_NO_SERVE": "1", "ALAYA_NOW": iso(now)}
    done = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=120, env=env)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def as_json(done: subprocess.CompletedProcess) -> dict:
    return json.loads(done.stdout)


def recalled(data: Path, query: str, now: datetime = LATER) -> list[str]:
    return [n["card_id"] for n in as_json(alaya(data, "recall", query, "--json", now=now))["nodes"]]


def edges_of(memory, cid: str) -> set[tuple[str, str, str, float]]:
    with memory.reading("test") as graph:
        return {(e.src, e.rel, e.dst, e.weight) for e in graph.card_edges([cid])}


def cards_in_l2(memory) -> set[str]:
    with memory.reading("test") as graph:
        return graph.all_card_ids()


@pytest.fixture
def distilled(memory, tmp_path, monkeypatch):
    """A conversation captured and distilled at T0 (its cards' clock)."""
    monkeypatch.setenv("ALAYA_NOW", iso(T0))
    path = tmp_path / "s1.json"
    path.write_bytes(session_json("s1", TURNS))
    memory.ingest(path)
    memory.distill()
    monkeypatch.delenv("ALAYA_NOW")
    return memory


def test_forgotten_card_is_restored_with_its_relations_and_rebuild_keeps_it(distilled):
    memory, data = distilled, distilled.dirs.root
    before = cards_in_l2(memory)
    assert before
    alaya(data, "introspect", "--steps", "cool-down", "--json")  # a dry run's forget sees the tiers as they are
    report = as_json(alaya(data, "introspect", "--dry-run", "--steps", STEPS, "--json"))
    dry = next(s for s in report["steps"] if s["step"] == "forget")["result"]
    assert dry["cards"] and all(c["reason"] and c["restorable_until"] for c in dry["cards"])  # listed, restorable
    assert dry["restorable_days"] == 30
    assert cards_in_l2(memory) == before  # a dry run changes nothing

    alaya(data, "introspect", "--steps", STEPS, "--json")  # the batched path (three steps in one hold)
    gone = before - cards_in_l2(memory)
    assert gone == {c["card"] for c in dry["cards"]}
    # the nightly-exports card (the assistant's own turn) is one of them, with its edges in the copy
    target = next(cid for cid, c in forgotten.load(memory.dirs.state, sorted(gone)).items()
                  if c["card"]["content"].startswith("assistant") and "Nightly exports" in c["card"]["content"])
    saved = forgotten.load(memory.dirs.state, [target])[target]
    had = {(e["src"], e["rel"], e["dst"], e["weight"]) for e in saved["edges"]}
    assert had and saved["reason"] == "unused"
    assert target not in recalled(data, QUERY)
    assert target not in {c["id"] for c in as_json(alaya(data, "list", "--json"))["cards"]}
    listed = as_json(alaya(data, "restore", "--list", "--json"))["cards"]
    assert {c["card"] for c in listed} == gone
    assert next(c for c in listed if c["card"] == target)["reason"] == "unused"

    alaya(data, "rebuild", "--json")  # a forget not restored stays forgotten
    assert cards_in_l2(memory) == before - gone

    back = as_json(alaya(data, "restore", *sorted(gone), "--json"))
    assert {c["id"] for c in back["cards"]} == gone and back["links"] >= len(had)
    assert cards_in_l2(memory) == before
    assert edges_of(memory, target) == had  # its relations, to the cards kept and to each other
    assert target in recalled(data, QUERY)
    assert not as_json(alaya(data, "restore", "--list", "--json"))["cards"]
    assert not list(forgotten.folder(memory.dirs.state).glob("*.json"))

    alaya(data, "rebuild", "--json")  # the restore is in the curation log: a rebuild keeps the card
    assert cards_in_l2(memory) == before and edges_of(memory, target) == had
    alaya(data, "introspect", "--steps", "forget", "--json", now=LATER + timedelta(days=200))
    assert cards_in_l2(memory) == before  # restored by the owner: never forgotten by age again
    health = as_json(alaya(data, "metrics", "--json"))["forgotten"]
    assert health["restored"] == len(gone) and health["total"] == 0


def test_purge_window_deletes_the_copy_and_restore_says_it_is_gone(distilled):
    memory, data = distilled, distilled.dirs.root
    for steps in (["fold-access"], ["cool-down"], ["forget"]):  # each on its own: forget.forget's own hold
        assert introspect.run(memory, steps=steps, now=LATER)["ok"]
    copies = forgotten.all_copies(memory.dirs.state)
    assert copies
    cid = copies[0]["card"]["id"]
    # within the window introspect keeps the copies; past it (30 days) it deletes them
    def purged(days: int, **options) -> int:
        report = introspect.run(memory, steps=["forget"], now=LATER + timedelta(days=days), **options)
        return report["steps"][0]["result"]["copies_purged"]

    assert purged(29) == 0 and len(forgotten.all_copies(memory.dirs.state)) == len(copies)
    assert purged(31, dry_run=True) == len(copies)
    assert len(forgotten.all_copies(memory.dirs.state)) == len(copies)  # a dry run deletes nothing
    assert purged(31) == len(copies)
    assert not forgotten.all_copies(memory.dirs.state)

    gone = alaya(data, "restore", cid, ok=False, now=LATER + timedelta(days=32))
    assert gone.returncode == 1 and "gone for good" in gone.stderr and len(gone.stderr.strip().splitlines()) == 1
    assert "Traceback" not in gone.stderr
    for bad, says in (("card-nope", "no forgotten card"), ("../../etc/passwd", "invalid card id")):
        done = alaya(data, "restore", bad, ok=False)
        assert done.returncode == 1 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    live = sorted(cards_in_l2(memory))[0]
    done = alaya(data, "restore", live, ok=False)
    assert done.returncode == 1 and "is not forgotten" in done.stderr
    assert alaya(data, "restore", ok=False).returncode == 1  # neither ids nor --list


def _bytes_hold(root: Path, word: bytes) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and word in p.read_bytes())


def test_owner_forget_of_a_forgotten_card_leaves_no_copy(memory):
    put(memory, [card("card-noise", f"Noted the {UNIQUE} printer tray jams on odd pages", session="s9",
                      created=T0, tier="COLD", importance=0.3),
                 card("card-kept", "The billing pool size is 40 connections", session="s9", created=T0,
                      importance=0.9)])
    data = memory.dirs.root
    alaya(data, "introspect", "--steps", "forget", "--json")
    assert "card-noise" not in cards_in_l2(memory)
    assert _bytes_hold(data, UNIQUE.encode()) and forgotten.load(memory.dirs.state, ["card-noise"])
    alaya(data, "forget", "card-noise", "--purge-raw", "--json")  # by id: the card is only a copy now
    assert not forgotten.load(memory.dirs.state, ["card-noise"])
    assert _bytes_hold(data, UNIQUE.encode()) == []  # the copy, L2's pages, L1's versions: nowhere
    done = alaya(data, "restore", "card-noise", ok=False)
    assert done.returncode == 1 and "forgotten on purpose" in done.stderr


def test_owner_purge_by_criteria_and_by_session_reaches_saved_copies(memory):
    put(memory, [card("card-a", f"The {UNIQUE} printer tray jams", session="s7", created=T0, tier="COLD",
                      importance=0.3),
                 card("card-b", "Assistant: ok thanks", session="s8", created=T0)])
    data = memory.dirs.root
    alaya(data, "introspect", "--steps", "forget", "--json")
    assert {c["card"]["id"] for c in forgotten.all_copies(memory.dirs.state)} == {"card-a", "card-b"}
    # by the unique word itself: the tombstone names the criterion, never its words
    purged = as_json(alaya(data, "purge", "--subject-contains", UNIQUE, "--json"))
    assert [c["id"] for c in purged["cards"]] == ["card-a"]
    assert {c["card"]["id"] for c in forgotten.all_copies(memory.dirs.state)} == {"card-b"}
    assert _bytes_hold(data, UNIQUE.encode()) == []
    alaya(data, "forget", "--session", "s8", "--json")
    assert not forgotten.all_copies(memory.dirs.state)


KILLS = {  # where a child SIGKILLs itself, and what it was doing
    "forget, before L2's commit": ("forget", "openclaw_alaya.store.embedded.upkeep_queries:UpkeepQueries.remove_cards"),
    "forget, between L2 and L1": ("forget", "openclaw_alaya.store.embedded.vectors:VectorStore.delete_cards"),
    "restore, before L2's commit": ("restore", "openclaw_alaya.store.embedded.graph:GraphStore.upsert_cards"),
    "restore, between L2 and L1": ("restore", "openclaw_alaya.store.embedded.vectors:VectorStore.upsert_cards"),
}


def _killed_at(data: Path, op: str, patch: str) -> subprocess.CompletedProcess:
    """Run the forget step or a restore of card-noise in a child that SIGKILLs itself at `patch`."""
    module, attr = patch.split(":")
    cls, method = attr.split(".")
    run = (f"introspect.run(mem, steps=['forget'], now={LATER.isoformat()!r})" if op == "forget"
           else "mem.restore(['card-noise'])")
    code = f"""
import os, signal, sys
import {module} as m
from openclaw_alaya import Alaya
from openclaw_alaya.maintenance import introspect
setattr(m.{cls}, "{method}", lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
mem = Alaya(sys.argv[1])
{run}
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("where", list(KILLS))
def test_a_kill_between_the_steps_loses_no_card(memory, where):
    """kill -9 inside a forget or a restore: after the next write hold's recovery the card is in
    L2 and L1, or forgotten with its copy and restorable; a stale copy is never listed."""
    op, patch = KILLS[where]
    put(memory, [card("card-noise", "Noted the printer tray jams on odd pages", session="s9", created=T0,
                      tier="COLD", importance=0.3)])
    data = memory.dirs.root
    if op == "restore":
        assert introspect.run(memory, steps=["forget"], now=LATER)["ok"]
    died = _killed_at(data, op, patch)
    assert died.returncode == -signal.SIGKILL, died.stderr[-2000:]
    memory.init()  # a write hold: recovery finishes what the dead process left
    assert verify(memory)["ok"]
    listed = [c["card"] for c in memory.forgotten()]
    here = "card-noise" in cards_in_l2(memory)
    assert here != (listed == ["card-noise"])  # in L2, or forgotten and restorable: never lost, never both
    if not here:
        memory.restore(["card-noise"])
    assert "card-noise" in cards_in_l2(memory) and "card-noise" in set(memory.index.card_ids())
    assert "card-noise" in [n.card_id for n in memory.recall("printer tray jams", now=LATER).nodes]
    assert introspect.run(memory, steps=["forget"], now=LATER + timedelta(days=31))["ok"]
    if op == "restore":  # restored: spared from now on, its stale copy purged
        assert "card-noise" in cards_in_l2(memory) and not forgotten.all_copies(memory.dirs.state)
