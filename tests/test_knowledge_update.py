"""Issue 31's knowledge update, end to end: a setting the owner changed three times over a year,
each time said in an ordinary conversation (tests/fixtures/year/pool_size.json: the billing DB
pool size 20 → 40 → 80 → 120). Real Kuzu and LanceDB, the default offline configuration
(heuristic distiller, hash embedder), the CLI as a real subprocess.

After the last change, recall and the session-start block put the current value first (the
session-start block leaves the superseded values out), and a question about history says what
the current value replaced, newest first. Today's rules knew where someone lives or works, not
that "our X is 40" replaces "our X is 20": the distiller stored four equally valid values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from openclaw_alaya.bridge.inject import StartRequest, build
from openclaw_alaya.distill.resolver import contradiction, profile
from openclaw_alaya.maintenance import forget
from openclaw_alaya.models import Card, RecallNode, Session, Turn

SCENARIO = json.loads((Path(__file__).parent / "fixtures" / "year" / "pool_size.json").read_text())
FIRST_DAY = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)
END = FIRST_DAY + timedelta(days=365)
VALUE_TURN = "t3"  # the owner's turn that states the value, in each session


def _session(i: int, spec: dict) -> Session:
    at = FIRST_DAY + timedelta(days=spec["day"])
    turns = [Turn(id=f"t{n}", role=role, content=text) for n, (role, text) in enumerate(spec["turns"], 1)]
    return Session(id=f"pool-{i}", agent_id="main", started_at=at.isoformat(), title=spec["title"], turns=turns)


@pytest.fixture
def changed(memory, monkeypatch):
    """The four conversations, each ingested and distilled on its own day (the memory clock)."""
    reports = []
    for i, spec in enumerate(SCENARIO["sessions"], 1):
        monkeypatch.setenv("ALAYA_NOW", (FIRST_DAY + timedelta(days=spec["day"], hours=1)).isoformat())
        memory.ingest(_session(i, spec))
        reports.append(memory.distill())
    monkeypatch.setenv("ALAYA_NOW", END.isoformat())
    return memory, reports


def _states(node: RecallNode, i: int) -> bool:
    return any(s.session_id == f"pool-{i}" and VALUE_TURN in s.turn_ids for s in node.sources)


def _values(texts: list[str]) -> list[str]:
    """The pool sizes these texts state, in their order, each once (a value said in a
    question/answer card and in the reply's own card is one value)."""
    found = [v for text in texts for v in ("80", "40", "20") if f"pool size is {v}" in text or f"to {v} " in text
             or f"is now {v}" in text]
    return list(dict.fromkeys(found))


def test_each_change_supersedes_the_value_before_it(changed):
    memory, reports = changed
    assert reports[0].contradicted == 0 and all(r.contradicted >= 1 for r in reports[1:])
    nodes = memory.recall(SCENARIO["question"], now=END, top_k=20).nodes
    assert _states(nodes[0], 4) and not nodes[0].superseded and "120" in nodes[0].content
    assert all(n.superseded for n in nodes if any(_states(n, i) for i in (1, 2, 3)))
    older = {i: next(n for n in nodes if _states(n, i)) for i in (1, 2, 3)}
    # each value was valid until the next one was said
    assert [older[i].valid_until[:10] for i in (1, 2, 3)] == [
        (FIRST_DAY + timedelta(days=SCENARIO["sessions"][i]["day"])).date().isoformat() for i in (1, 2, 3)]


def test_asked_about_history_recall_says_what_it_replaced_newest_first(changed):
    memory, _ = changed
    plain = memory.recall(SCENARIO["question"], now=END).nodes
    assert plain[0].replaces is None  # only a question about history asks for the chain
    first = memory.recall(SCENARIO["history_question"], now=END).nodes[0]
    assert _states(first, 4)
    assert _values([r.content for r in first.replaces]) == ["80", "40", "20"]
    assert [r.valid_until for r in first.replaces] == sorted((r.valid_until for r in first.replaces), reverse=True)


def test_the_cli_shows_the_current_value_and_what_it_replaced(changed):
    memory, _ = changed
    env = {**os.environ, "ALAYA_NOW": END.isoformat()}
    env.pop("ALAYA_HOME", None)
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "recall",
                           SCENARIO["history_question"]], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.split("\n2. ")[0]
    assert "120" in first.splitlines()[0]
    replaced = [line for line in first.splitlines() if line.strip().startswith("replaces:")]
    assert _values(replaced) == ["80", "40", "20"]


def test_the_session_start_block_gives_the_current_value_only(changed):
    memory, _ = changed
    block = build(memory, StartRequest(agent_id="main", prompt=SCENARIO["question"], now=END))
    assert "pool size from 80 to 120" in block
    for said in ("pool size is 20", "pool size to 40", "pool size is now 80"):
        assert said not in block


def _card(text: str) -> Card:
    return Card(id="c", title="t", content=text, type="fact", scope="main", created_at="2026-05-01", updated_at="2026-05-01")


def test_a_setting_changes_only_on_a_new_value():
    said = _card("Ann (1 May 2026): Our billing DB pool size is 20.")
    assert contradiction(profile(said), profile(_card("Ann (2 May 2026): We raised the billing DB pool size to 40.")))
    assert not contradiction(profile(said), profile(_card("Ann (2 May 2026): our billing DB pool size is 20 connections.")))
    assert not contradiction(profile(said), profile(_card("Ann (2 May 2026): our search pool size is 40.")))
    assert not profile(_card("Ann (1 May 2026): our plan is good.")).facts  # an opinion, not a setting


def _introspect(memory, *args: str) -> dict:
    """`alaya introspect` as a real subprocess, a year after the first value was said."""
    env = {**os.environ, "ALAYA_NOW": END.isoformat()}
    env.pop("ALAYA_HOME", None)
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "introspect",
                           "--json", *args], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {s["step"]: s for s in json.loads(proc.stdout)["steps"]}


@pytest.mark.parametrize("steps", [(), ("--steps", "forget")], ids=["scheduled", "forget-alone"])
def test_a_year_of_introspect_keeps_the_whole_chain(changed, steps):
    """The first value (20) lives only in a question/answer card (origin `agent`: it cites the
    assistant's question), superseded nine months before: forget took it as `superseded` and
    the chain lost its oldest value. A live card's history stays, by every reason, through the
    batched steps (which still forget the assistant's cold filler) and the forget step alone."""
    memory, _ = changed
    forgot = _introspect(memory, *steps)["forget"]["result"]
    assert "superseded" not in forgot["reasons"]
    assert forgot["forgotten"] >= (0 if steps else 1)
    plain = memory.recall(SCENARIO["question"], now=END).nodes
    assert _states(plain[0], 4) and not plain[0].superseded
    first = memory.recall(SCENARIO["history_question"], now=END).nodes[0]
    assert _states(first, 4)
    assert _values([r.content for r in first.replaces]) == ["80", "40", "20"]
    block = build(memory, StartRequest(agent_id="main", prompt=SCENARIO["question"], now=END))
    assert "pool size from 80 to 120" in block
    for said in ("pool size is 20", "pool size to 40", "pool size is now 80"):
        assert said not in block


def test_a_chain_whose_current_card_is_gone_is_nobodys_history(changed):
    """The rule's other side: every older value is history while the current one lives; once
    the owner forgets the current value, its older values are on no live card's chain, and
    forget may take the agent's ones as `superseded`."""
    memory, _ = changed
    with memory.reading("test: the chain") as graph:
        rows = graph.card_rows()
        assert forget.history_of_live(graph, rows) == {r.id for r in rows if r.valid_until}
    with memory.writing("test: the owner forgets the current value") as graph:
        with graph:  # read from the graph: a recall would count as a use and spare them all
            graph.remove_cards([r.id for r in rows if not r.valid_until and "pool size" in r.content])
    with memory.reading("test: the chain, its head gone") as graph:
        assert forget.history_of_live(graph, graph.card_rows()) == set()
    forgot = _introspect(memory, "--steps", "forget")["forget"]["result"]
    assert forgot["reasons"].get("superseded", 0) >= 1
