"""Every command `alaya serve` answers gives the same stdout, stderr and exit code through the
daemon as in process: each recall option (from recall/request.py's model, so a new one is
covered without a new case), as a flag and in a JSON request on stdin, `hook session-start`,
`hook tool NAME` for every OpenClaw tool, `trace` and `get`. One store and one daemon for all."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serve import EVENT, alaya, build_store, served_requests, stop_daemon

from openclaw_alaya.cli.generated import recall_options
from openclaw_alaya.tools.catalog import OPENCLAW_TOOLS as TOOLS

# a value that finds something, for the options where a generic one would not
GOOD = {"query": "graph database", "concepts": "kuzu", "relations": "RELATES_TO", "since": "2026-01-01",
        "until": "2030-01-01", "scope": "main", "origins": "owner"}
CARD = "<card>"  # stands for the store's card id (from_nodes, trace, get)


def _value(option: dict) -> str:
    if option["name"] == "from_nodes":
        return CARD
    return GOOD.get(option["name"], "2" if option["kind"] == "int" else "graph")


def _recall_cases() -> Iterator[tuple[list[str], dict | None]]:
    for option in recall_options():
        value = _value(option)
        flag = [value] if option["flag"] is None else [option["flag"], value]
        yield ["recall", *flag, "--json"], None
        yield ["recall", *flag], None
        yield ["recall", "--json"], {"query": "graph database", option["name"]: value}


TOOL_PARAMS = {"memory_search": {"query": "graph database"}, "memory_get": {"ids": [CARD]},
               "memory_store": {"text": "The gateway port is 8080."}, "memory_forget": {"query": "deploy"}}

CASES: list[tuple[list[str], dict | None]] = [
    *_recall_cases(),
    (["recall", "--origin", "owner", "--json"], {"query": "gateway port"}),  # the drift of issue 29
    (["recall", "--json"], {"query": 5}),  # a user error
    (["hook", "session-start"], EVENT),
    *((["hook", "tool", name], {"agentId": "main", "params": TOOL_PARAMS.get(name, {})}) for name in TOOLS),
    (["trace", CARD, "--json"], None),
    (["get", CARD], None),
]


# a write (memory_store) makes a new card and note each time: their ids are compared as placeholders
WRITES = {"memory_store"}
_NEW_IDS = re.compile(r"card-[0-9a-f-]{36}|note-\d{8}T\d{6}-[0-9a-f]+")


def _outcome(proc, argv: list[str]) -> tuple[str, str, int]:
    stdout = _NEW_IDS.sub("<new id>", proc.stdout) if WRITES & set(argv) else proc.stdout
    return stdout, proc.stderr, proc.returncode


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Path, str]]:
    """The store with a daemon serving it, and its card about Kuzu."""
    from openclaw_alaya import Alaya

    tmp = tmp_path_factory.mktemp("parity")
    root = build_store(tmp / "data", tmp / "s1.json")
    card = Alaya(root).recall("graph database").nodes[0].card_id
    started = alaya(root, "serve", "start", "--idle-exit", "600")
    assert started.returncode == 0, started.stderr
    yield root, card
    stop_daemon(root)


def _with_card(value: object, card: str) -> object:
    return json.loads(json.dumps(value).replace(CARD, card))


@pytest.mark.parametrize(("argv", "stdin"), CASES, ids=lambda v: json.dumps(v, ensure_ascii=False) if v else "-")
def test_served_and_in_process_answers_are_the_same(served, argv, stdin):
    root, card = served
    argv = _with_card(argv, card)
    text = "" if stdin is None else json.dumps(_with_card(stdin, card))
    local = alaya(root, *argv, stdin=text, env={"ALAYA_NO_SERVE": "1"})
    before = served_requests(root)
    remote = alaya(root, *argv, stdin=text)
    assert served_requests(root) == before + 1, "the daemon did not answer"
    assert _outcome(remote, argv) == _outcome(local, argv)
    assert local.returncode in (0, 1) and "Traceback" not in local.stderr, local.stderr
