"""`alaya hook tool NAME`, the OpenClaw plugin's agent tools, end to end through the CLI (real
subprocesses, real stores): `{agentId, params}` on stdin → `{"text", "details"}` on stdout, in
the agent's scope; a bad parameter or an unknown id is exit 1 with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import session_json

from openclaw_alaya.tools.openclaw import UNTRUSTED


def tool(data: Path, name: str, params: dict | None = None, *, agent: str | None = "main",
         raw: str | None = None) -> subprocess.CompletedProcess:
    event = {"agentId": agent, "sessionKey": "agent:main:main", "sessionId": "s-now", "params": params or {}}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "hook", "tool", name],
                          input=json.dumps(event) if raw is None else raw, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "ALAYA_NO_SERVE": "1"})


def answer(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"text", "details"} and isinstance(out["details"], dict), out
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    from openclaw_alaya import Alaya

    tmp = tmp_path_factory.mktemp("tools")
    memory = Alaya(tmp / "data")
    memory.init()
    for sid, agent, turns in (
        ("s-main", "main", [("user", "We decided to use Kuzu as the graph database because it is embedded."),
                            ("assistant", "Noted: Kuzu for the graph, LanceDB for the vectors."),
                            ("user", "The deploy failed with a timeout because redis held the lock.")]),
        ("s-other", "other", [("user", "The zanzibar admin port is 7781, keep it secret.")]),
    ):
        (tmp / f"{sid}.json").write_bytes(session_json(sid, turns, agent_id=agent))
        memory.ingest(tmp / f"{sid}.json")
    memory.distill()
    return tmp / "data"


def test_search_get_store_forget_round_trip(data):
    found = answer(tool(data, "memory_search", {"query": "which graph database did we pick?"}))
    nodes = found["details"]["nodes"]
    assert nodes and "Kuzu" in nodes[0]["content"]
    assert {"card_id", "title", "content", "type", "sources", "h_distance"} <= set(nodes[0])
    assert {"explorable", "h_distance_avg"} <= set(found["details"])
    card = nodes[0]["card_id"]
    assert found["text"].startswith(UNTRUSTED) and f"[{card}]" in found["text"] and "s-main#t" in found["text"] and "memory_get" in found["text"]

    got = answer(tool(data, "memory_get", {"ids": [card]}))
    trace = got["details"]["results"][0]
    assert trace["card_id"] == card and trace["sessions"][0]["session_id"] == "s-main"
    assert trace["sessions"][0]["turns"] and "Kuzu" in got["text"]
    turn = answer(tool(data, "memory_get", {"ids": ["s-main#t3"]}))  # a source as memory_search writes it
    place = turn["details"]["results"][0]
    assert [t["id"] for t in place["turns"]] == ["t3"] and "t2" in [t["id"] for t in place["context"]]
    assert ">> [s-main#t3]" in turn["text"] and "redis" in turn["text"]

    stored = answer(tool(data, "memory_store", {"text": "The staging redis listens on port 6380.",
                                                "tags": ["redis"], "type": "fact", "importance": 0.9}))
    new = stored["details"]["card_id"]
    assert stored["text"].startswith(f"Stored as [{new}]") and not stored["details"]["merged"]
    again = answer(tool(data, "memory_store", {"text": "The staging redis listens on port 6380."}))
    assert again["details"]["merged"] and again["details"]["card_id"] == new
    assert new in [n["card_id"] for n in answer(tool(data, "memory_search", {"query": "staging redis port"}))["details"]["nodes"]]

    dry = answer(tool(data, "memory_forget", {"query": "staging redis port"}))
    assert new in [c["id"] for c in dry["details"]["cards"]] and dry["details"]["dry_run"]
    assert "Nothing was forgotten" in dry["text"] and "ids" in dry["text"]
    assert new in [n["card_id"] for n in answer(tool(data, "memory_search", {"query": "staging redis port"}))["details"]["nodes"]]
    gone = answer(tool(data, "memory_forget", {"ids": [new]}))
    assert gone["text"].startswith("Forgot 1") and not gone["details"]["dry_run"]
    assert new not in [n["card_id"] for n in answer(tool(data, "memory_search", {"query": "staging redis port"}))["details"]["nodes"]]
    lost = tool(data, "memory_get", {"ids": [new]})
    assert lost.returncode == 1 and lost.stderr.startswith("alaya: error: no card")


def test_forget_by_query_lists_only_the_cards_that_match(data):
    """Issue 33: a dry run by query listed every card in the store (recall ranks them all), and
    the model was told to forget by those ids; now only the cards that say a word of the query."""
    dry = answer(tool(data, "memory_forget", {"query": "graph database"}))
    listed = " ".join(c["title"] for c in dry["details"]["cards"])
    assert "Kuzu" in listed and dry["details"]["dry_run"]
    assert "redis" not in listed and "timeout" not in dry["text"]  # the deploy failure says none of its words
    none = answer(tool(data, "memory_forget", {"query": "quarterly tax receipts"}))
    assert none["details"]["cards"] == [] and none["text"].startswith("No memory matches")


def test_active_memory_parameter_names_and_navigation(data):
    """`maxResults` and `path` are the built-in tools' names; from_nodes/relations navigate."""
    found = answer(tool(data, "memory_search", {"query": "Kuzu graph", "maxResults": 1}))
    assert len(found["details"]["nodes"]) == 1
    card = found["details"]["nodes"][0]["card_id"]
    got = answer(tool(data, "memory_get", {"path": card}))
    assert got["details"]["results"][0]["card_id"] == card
    walk = answer(tool(data, "memory_search", {"from_nodes": [card], "depth": 1}))
    assert walk["details"]["nodes"] and card not in [n["card_id"] for n in walk["details"]["nodes"]]  # its neighbours


def test_scope_is_the_calling_agent(data):
    theirs = answer(tool(data, "memory_search", {"query": "zanzibar admin port"}, agent="other"))
    card = theirs["details"]["nodes"][0]["card_id"]
    mine = answer(tool(data, "memory_search", {"query": "zanzibar admin port"}))
    assert card not in [n["card_id"] for n in mine["details"]["nodes"]]
    for name, params in (("memory_get", {"ids": [card]}), ("memory_get", {"ids": ["s-other#t1"]}),
                         ("memory_forget", {"ids": [card]})):
        proc = tool(data, name, params)
        assert proc.returncode == 1 and proc.stderr.startswith("alaya: error: no "), proc.stderr
    assert card in [n["card_id"] for n in answer(tool(data, "memory_search", {"query": "zanzibar"}, agent="other"))["details"]["nodes"]]


@pytest.mark.parametrize(("name", "params", "says"), [
    ("memory_search", {}, "give a query"),
    ("memory_search", {"query": "x", "depth": 9}, "depth must be"),
    ("memory_search", {"query": "x", "limit": "ten"}, "limit must be"),
    ("memory_search", {"query": 5}, "query must be a string"),
    ("memory_search", {"query": "x", "since": "not a time at all"}, "recall:"),
    ("memory_get", {}, "give ids"),
    ("memory_get", {"ids": ["card-nope"]}, "no card 'card-nope'"),
    ("memory_get", {"ids": ["s-main#t99"]}, "no turn"),
    ("memory_get", {"ids": [7]}, "ids must be a list of strings"),
    ("memory_store", {}, "give the text"),
    ("memory_store", {"text": "x", "importance": 3}, "importance"),
    ("memory_store", {"text": "x", "importance": True}, "importance"),
    ("memory_forget", {}, "give ids"),
    ("memory_forget", {"ids": ["card-nope"]}, "no card"),
    ("memory_forget", {"ids": ["a"], "query": "b"}, "not both"),
    ("memory_nope", {}, "memory_search, memory_get, memory_store, memory_forget"),
])
def test_bad_parameters_are_one_line_user_errors(data, name, params, says):
    proc = tool(data, name, params)
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert proc.stderr.startswith("alaya: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "Traceback" not in proc.stderr


def test_bad_events(data, tmp_path):
    for raw, says in (("[]", "must be a JSON object"), ('{"params": [1]}', "params must be a JSON object"),
                      ("", "stdin is empty")):
        proc = tool(data, "memory_search", raw=raw)
        assert proc.returncode == 1 and says in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    fresh = tool(tmp_path / "none", "memory_search", {"query": "x"})
    assert fresh.returncode == 1 and fresh.stderr.startswith("alaya: error: ") and "init" in fresh.stderr
