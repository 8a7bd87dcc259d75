"""Introspect's batch applied on a shadow copy of the graph (store/embedded/shadow.py): used when no
writer intervenes, given up for the in-place path when one does (and that writer's change
stays), and a copy left by a killed run is removed and never taken for the graph."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from datetime import timedelta

import pytest
from test_maintenance import T0, cards_of, edges, indexed, put_night

from openclaw_alaya import Alaya
from openclaw_alaya.ingest.recovery import check
from openclaw_alaya.store.embedded import shadow
from openclaw_alaya.maintenance.introspect import run
from openclaw_alaya.maintenance.verify import verify
from openclaw_alaya.store.embedded.graph import GraphStore

LATER = T0 + timedelta(days=400)
STEPS = ["consolidate", "fold-access", "cool-down", "forget"]


@pytest.fixture
def store(memory):
    put_night(memory, LATER, ["card-hot", "card-b"])
    return memory


def introspect(memory, caplog) -> tuple[dict, str]:
    """The batched steps' reports, and how the batch was applied (batch.py's log)."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="openclaw_alaya.maintenance.batch"):
        report = run(memory, now=LATER, steps=STEPS)
    assert report["ok"], report
    [how] = [r.applied for r in caplog.records if hasattr(r, "applied")]
    return {s["step"]: s["result"] for s in report["steps"]}, how


def state(memory) -> tuple:
    cards = {cid: (c.tier, c.temperature, c.access_count, c.last_accessed, tuple(s.session_id for s in c.sources))
             for cid, c in cards_of(memory).items()}
    return cards, edges(memory), indexed(memory)


def curation(memory) -> list[str]:
    return sorted((memory.dirs.raw / "curation.jsonl").read_text().splitlines())


def copies(memory) -> list[str]:
    return sorted(p.name for p in memory.dirs.root.glob(".introspect-graph-*"))


def test_the_batch_goes_through_a_shadow_copy_and_ends_as_in_place(store, tmp_path, caplog, monkeypatch):
    shutil.copytree(store.dirs.root, tmp_path / "in-place")
    other = Alaya(tmp_path / "in-place")

    reports, how = introspect(store, caplog)
    assert how == "shadow"
    assert reports["consolidate"]["merged"] >= 1 and reports["forget"]["forgotten"] >= 1
    assert [op for op, _s in store.lock.write_holds][-1] == "introspect (consolidate, fold-access, cool-down, forget)"
    assert copies(store) == [] and not (store.dirs.root / "graph.kuzu.wal").exists()

    monkeypatch.setattr(shadow, "take", lambda dirs, hold: None)  # no copy: today's path, under the lock
    in_place, how = introspect(other, caplog)
    assert how == "in-place"
    assert in_place == reports
    assert state(store) == state(other) and curation(store) == curation(other)
    assert verify(store)["ok"]


def _link_in_another_process(data, src: str, dst: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "link", src, dst, "--rel", "OWNS"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_writer_between_the_copy_and_the_swap_sends_the_batch_in_place(store, caplog, monkeypatch):
    synced = shadow.Copy.sync

    def sync_then_write(copy):  # the copy is applied; the lock is free: another agent writes
        synced(copy)
        _link_in_another_process(store.dirs.root, "card-dep", "card-hot")

    monkeypatch.setattr(shadow.Copy, "sync", sync_then_write)
    reports, how = introspect(store, caplog)
    assert how == "in-place"
    assert ("card-dep", "OWNS", "card-hot") in edges(store)  # the writer's change is not lost
    assert reports["consolidate"]["merged"] >= 1 and "card-b" not in cards_of(store)  # and the batch applied
    merges = [r for r in map(json.loads, curation(store)) if r["op"] == "merge"]
    assert len(merges) == reports["consolidate"]["merged"]  # logged once: the copy's records went with it
    assert copies(store) == []
    assert verify(store)["ok"]


def _introspect_killed_at(data, target: str) -> subprocess.CompletedProcess:
    """Run the batch in a child that SIGKILLs itself when it calls `target` (module:attribute)."""
    module, attr = target.split(":")
    code = f"""
import os, signal, sys
from datetime import datetime
import {module} as m
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
obj, name = m, "{attr}"
if "." in name:
    cls, name = name.split(".")
    obj = getattr(m, cls)
setattr(obj, name, die)
from openclaw_alaya import Alaya
from openclaw_alaya.maintenance.introspect import run
run(Alaya(sys.argv[1]), now=datetime.fromisoformat(sys.argv[2]), steps={STEPS!r})
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code, str(data), LATER.isoformat()],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_copy_left_by_a_killed_run_is_swept_and_never_used(store, caplog):
    before = state(store)
    # killed in the copy's transaction, outside the lock
    proc = _introspect_killed_at(store.dirs.root, "openclaw_alaya.store.embedded.graph:GraphStore.remove_cards")
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    [left] = copies(store)
    assert (store.dirs.root / left / "graph.kuzu").exists()
    assert state(store) == before and not (store.dirs.raw / "curation.jsonl").exists()  # nothing applied
    with store.lock.read("test"):
        assert check(store) == []  # nothing was written under the lock: nothing to recover

    reports, how = introspect(store, caplog)
    assert how == "shadow" and copies(store) == []
    assert reports["consolidate"]["merged"] >= 1
    assert verify(store)["ok"]


def test_a_kill_after_the_swap_is_finished_by_the_next_command(store):
    proc = _introspect_killed_at(store.dirs.root, "openclaw_alaya.store.embedded.vectors:VectorStore.delete_cards")
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    memory = Alaya(store.dirs.root)
    with GraphStore(memory.dirs.graph, read_only=True) as graph:  # look without the lock's recovery
        assert not graph.query("MATCH (c:Card {id: 'card-b'}) RETURN c.id")  # the copy was swapped in
    assert "card-b" in indexed(memory)  # L1 not yet
    assert any(json.loads(r)["op"] == "merge" for r in curation(memory))  # L3 before L2
    verify(memory)  # a read writes nothing: the dead write waits for the next write hold
    assert "card-b" in indexed(memory)
    memory.upgrade()  # `alaya init`: the next write hold finishes it (journal.py)
    assert verify(memory)["ok"]
    assert "card-b" not in indexed(memory)


@pytest.mark.parametrize("copy", [True, False])
def test_an_access_log_another_introspect_folded_meanwhile_counts_once(store, caplog, monkeypatch, copy):
    from openclaw_alaya.maintenance import access

    take = shadow.take

    def folded_by_another_run_first(dirs, hold):
        access.fold(store)  # what a second introspect's fold-access does with the rotated log
        return take(dirs, hold) if copy else None

    monkeypatch.setattr(shadow, "take", folded_by_another_run_first)
    _reports, how = introspect(store, caplog)
    assert how == "in-place"  # the copy (if any) had the log counted again: not swapped in
    assert cards_of(store)["card-hot"].access_count == 25  # 25 recalls, not 50
    assert not list(store.dirs.state.glob("access.folding-*"))
    assert verify(store)["ok"]
