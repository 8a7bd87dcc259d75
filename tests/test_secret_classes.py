"""Issue 30 class 5: secrets are closed by class, not by example.

The corpus (`secret_corpus`, "issue 30 class 5" part) is generated per class: vendor key
formats, URLs with credentials of any scheme and user, credential files, statements in English
and in Chinese, tokens next to a secret word, 32-byte hex private keys — each class crossed with
several vendors, phrasings, separators and positions. Every shape must be redacted by the
redactor, and none may reach any file of the data directory (a byte scan), recall, the OpenClaw
tools (`memory_search`), the MCP tools, session-start or an export, whichever way it came in
(ingest, the session-end hook, `remember`, the `memory_store` tool). The existing
test_redaction.py runs the whole corpus, these shapes included, through the ingest paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secret_corpus import CLASS_SIZES, CORPUS, leaks_in, secret_pieces
from test_output_safety import _alaya  # a command in a subprocess, its output (exit 0 checked)

from openclaw_alaya import Alaya
from openclaw_alaya.redact import Redactor

AGENT = "main"
CLASS_CORPUS = [entry for entry in CORPUS if entry[0].split(": ")[0] in CLASS_SIZES]
QUERIES = ["password secret key token credential database url wallet", "密码 密钥 令牌 授权码"]


def test_the_corpus_is_generated_per_class():
    """issue 30 class 5: at least 120 generated shapes, English and Chinese, in every class."""
    assert sum(CLASS_SIZES.values()) >= 120
    assert len(CLASS_SIZES) >= 7 and min(CLASS_SIZES.values()) >= 5, CLASS_SIZES
    assert any("\u4e00" <= ch <= "\u9fff" for _, _, sentence in CLASS_CORPUS for ch in sentence)


@pytest.mark.parametrize("cls", sorted(CLASS_SIZES))
def test_every_shape_of_the_class_is_redacted(cls):
    """issue 30 class 5: no shape of the class keeps any piece of its secret (main leaks some
    in each class: `LTAI…`, `redis://:PASS@`, `.pgpass`, "my password is …", `授权码：…`,
    `api_hash …`, `0x…`)."""
    redactor = Redactor()
    leaked = []
    for kind, secret, sentence in (entry for entry in CLASS_CORPUS if entry[0].startswith(cls + ": ")):
        text, counts = redactor.redact(sentence)
        if not counts or any(piece in text for piece in secret_pieces(secret)):
            leaked.append((kind, text))
    assert leaked == []


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A data directory that took the class corpus in by every route, distilled and exported."""
    data = tmp_path_factory.mktemp("classes") / "data"
    memory = Alaya(data)
    memory.init()
    half = len(CLASS_CORPUS) // 2
    turns = [{"role": "user", "content": f"note {i}: {sentence}"} for i, (_, _, sentence) in enumerate(CLASS_CORPUS)]
    memory.ingest(json.dumps({"session_id": "api-1", "turns": turns[:half]}).encode())
    event = {"agentId": AGENT, "sessionId": "hook-1", "reason": "agent_end", "messages": turns[half:]}
    _alaya(data, "hook", "session-end", stdin=json.dumps(event))
    for _, _, sentence in CLASS_CORPUS[::15]:  # a sample of every class
        memory.remember(sentence, type="fact", agent=AGENT)
    for _, _, sentence in CLASS_CORPUS[4::60]:
        tool = {"agentId": AGENT, "sessionKey": "agent:main:main", "sessionId": "s-tool", "params": {"text": sentence}}
        _alaya(data, "hook", "tool", "memory_store", stdin=json.dumps(tool))
    _alaya(data, "distill")
    _alaya(data, "export")
    return data


def test_no_class_shape_reaches_any_file(stored):
    """issue 30 class 5: a byte scan of every file of the data directory (raw sessions, graph,
    index, state, export) finds no piece of any secret."""
    files = {str(p.relative_to(stored)): p.read_bytes() for p in stored.rglob("*") if p.is_file()}
    assert any(name.startswith("export") for name in files)
    assert leaks_in(files, CLASS_CORPUS) == []


def test_no_class_shape_reaches_recall_tools_or_session_start(stored):
    """issue 30 class 5: recall (text and --json), the OpenClaw `memory_search` tool, the MCP
    tools and session-start hand out redacted text only."""
    from openclaw_alaya.tools.catalog import MemoryTools

    out: dict[str, str] = {}
    for i, query in enumerate(QUERIES):
        out[f"recall {i}"] = _alaya(stored, "recall", query, "--json") + _alaya(stored, "recall", query)
        event = {"agentId": AGENT, "sessionKey": "agent:main:main", "sessionId": "s-now", "params": {"query": query}}
        out[f"memory_search {i}"] = _alaya(stored, "hook", "tool", "memory_search", stdin=json.dumps(event))
        start = {"agentId": AGENT, "sessionKey": "agent:main:main", "sessionId": f"s-{i}", "prompt": query}
        out[f"session-start {i}"] = json.loads(_alaya(stored, "hook", "session-start", stdin=json.dumps(start)))["prependContext"]
        tools = MemoryTools(Alaya(stored), AGENT)
        out[f"mcp {i}"] = json.dumps([tools.search_memory(query=query), tools.get_context(query=query),
                                      tools.memory_recall(query_intent=query), tools.list_memories(limit=100)],
                                     ensure_ascii=False)
    assert "REDACTED" in out["recall 0"] and "REDACTED" in out["mcp 0"]
    assert leaks_in(out, CLASS_CORPUS) == []
