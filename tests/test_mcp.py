"""`alaya mcp` through the real MCP Python client: over stdio (the server a subprocess, as
Claude Code or Cursor start it) and once over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers import session_json
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from openclaw_alaya.tools.catalog import MCP_TOOLS

ENV = {**os.environ, "ALAYA_NO_SERVE": "1"}


def _alaya(data: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args], input=stdin,
                          capture_output=True, env=ENV, timeout=300)


def _stdio(data: Path) -> Client:
    return Client(StdioServerParameters(command=sys.executable,
                                        args=["-m", "openclaw_alaya", "--data-dir", str(data), "mcp"], env=ENV),
                  read_timeout_seconds=120)


async def _call(client: Client, name: str, arguments: dict) -> dict:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _refused(client: Client, name: str, arguments: dict, match: str) -> None:
    """A tool-input error: a result with isError and a line naming the problem (issue 35), which
    the model sees, not a JSON-RPC error."""
    result = await client.call_tool(name, arguments)
    assert result.is_error and match in result.content[0].text, result.content[0].text


def _run(coro):
    return asyncio.run(coro)


def test_stdio_lists_the_tools_with_schemas_and_saves_then_finds(tmp_path):
    data = tmp_path / "data"

    async def go():
        async with _stdio(data) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(MCP_TOOLS) and len(tools) == 11
            for tool in tools.values():
                assert tool.input_schema["type"] == "object" and tool.description
            assert "query" in tools["search_memory"].input_schema["required"]
            saved = await _call(client, "save_memory", {"content": "The staging database runs PostgreSQL 16 on db-2.",
                                                        "metadata": {"tags": ["infra"], "importance": 0.9}})
            found = await _call(client, "search_memory", {"query": "which postgres version does staging use"})
            context = await _call(client, "get_context", {"query": "staging database", "max_tokens": 200})
            future = await _call(client, "search_memory", {"query": "staging postgres",
                                                           "time_range": {"since": "2999-01-01"}})
            week = await _call(client, "get_summary", {"period": "week"})
            listed = await _call(client, "list_memories", {"filters": {"tag": "INFRA"}, "limit": 5})
            tagged = await _call(client, "search_memory", {"query": "staging postgres", "tags": ["infra"]})
            untagged = await _call(client, "search_memory", {"query": "staging postgres", "tags": ["billing"]})
            await _refused(client, "search_memory", {"query": "x", "time_range": {"since": "someday"}}, "since")
            return saved, found, context, future, week, listed, tagged, untagged

    saved, found, context, future, week, listed, tagged, untagged = _run(go())
    assert [m["id"] for m in tagged["memories"]] == [saved["card_id"]] and untagged["memories"] == []
    assert [c["id"] for c in listed["cards"]] == [saved["card_id"]] and (listed["total"], listed["limit"]) == (1, 5)
    assert future["memories"] == []  # nothing was stored after 2999
    assert week["cards"] >= 1, week
    assert found["memories"][0]["id"] == saved["card_id"]
    assert "PostgreSQL 16" in context["context"] and context["tokens"] <= 200


def test_a_contradicting_triplet_supersedes_the_stored_one(tmp_path):
    data = tmp_path / "data"

    async def go():
        async with _stdio(data) as client:
            first = await _call(client, "memory_commit", {
                "triplets": [{"subject": "Alice", "relation": "works at", "object": "Acme", "confidence": 0.9}],
                "entity_types": {"Alice": "person", "Acme": "organization"}})
            second = await _call(client, "memory_commit", {
                "triplets": [{"subject": "Alice", "relation": "WORKS_AT", "object": "Initech"}],
                "temporal_tag": "2026-11"})
            again = await _call(client, "memory_commit", {
                "triplets": [{"subject": "Alice", "relation": "WORKS_AT", "object": "Initech"}]})
            graph = await _call(client, "memory_recall", {"query_intent": "where does Alice work",
                                                          "seed_entities": ["Alice"], "depth": 1})
            alice = await _call(client, "manage_entities", {"action": "show", "name": "alice"})
            return first, second, again, graph, alice

    first, second, again, graph, alice = _run(go())
    assert second["superseded"] == first["cards"]
    assert again["cards"] == [] and again["unchanged"] == second["cards"]  # not stored twice
    nodes = graph["nodes"]
    assert nodes[0]["id"] == second["cards"][0] and not nodes[0]["superseded"]
    old = next(n for n in nodes if n["id"] == first["cards"][0])
    assert old["superseded"] and old["valid_until"].startswith("2026-11-01")
    assert {"src": second["cards"][0], "rel": "CONTRADICTS", "dst": first["cards"][0]} in graph["edges"]
    assert alice["name"] == "Alice" and alice["type"] == "person" and alice["mentions"] == 2


def test_purge_by_criteria_is_gone_from_recall_and_export_and_stays_gone_after_rebuild(tmp_path):
    data = tmp_path / "data"

    async def go():
        async with _stdio(data) as client:
            await _call(client, "memory_commit", {"triplets": [
                {"subject": "Bob", "relation": "prefers", "object": "Vim"},
                {"subject": "Carol", "relation": "prefers", "object": "Emacs"}]})
            await _call(client, "save_memory", {"content": "Bob's laptop is a ThinkPad X1 with 32 GB of memory."})
            dry = await _call(client, "memory_purge", {"criteria": {"subject_contains": "bob", "relation_type": "PREFERS"},
                                                       "dry_run": True})
            done = await _call(client, "memory_purge", {"criteria": {"subject_contains": "bob", "relation_type": "PREFERS"}})
            await _refused(client, "memory_purge", {"criteria": {}}, "at least one criterion")
            listed = await _call(client, "list_memories", {"limit": 50})
            return dry, done, listed

    dry, done, listed = _run(go())
    assert {c["title"] for c in listed["cards"]} >= {"Carol prefers Emacs"}
    assert "Bob prefers Vim" not in {c["title"] for c in listed["cards"]}
    assert [c["title"] for c in dry["cards"]] == ["Bob prefers Vim"] and dry["dry_run"]
    assert [c["title"] for c in done["cards"]] == ["Bob prefers Vim"]

    def titles() -> list[str]:
        out = _alaya(data, "recall", "what editor does Bob prefer", "--json")
        assert out.returncode == 0, out.stderr
        return [n["title"] for n in json.loads(out.stdout)["nodes"]]

    assert "Bob prefers Vim" not in titles() and "Carol prefers Emacs" in titles()
    export = _alaya(data, "export", "--dest", str(tmp_path / "export"))
    assert export.returncode == 0, export.stderr
    exported = "\n".join(p.read_text() for p in (tmp_path / "export").rglob("*.md"))
    assert "Carol prefers Emacs" in exported and "Bob prefers Vim" not in exported
    assert _alaya(data, "rebuild").returncode == 0
    assert "Bob prefers Vim" not in titles() and "Carol prefers Emacs" in titles()
    assert "ThinkPad" in " ".join(titles())  # purge took only what matched every criterion
    listed_after = json.loads(_alaya(data, "list", "--json").stdout)["cards"]
    assert "Bob prefers Vim" not in {c["title"] for c in listed_after} and len(listed_after) == 2


def test_a_forgotten_session_is_not_brought_back_by_capturing_it_again(tmp_path):
    data = tmp_path / "data"
    transcript = tmp_path / "s.json"
    transcript.write_bytes(session_json("sess-forget-1", [
        ("user", "Our deploy key for the billing-api lives in the team vault under billing/deploy."),
        ("assistant", "Noted: billing-api deploy key is in the vault at billing/deploy."),
    ]))
    assert _alaya(data, "init").returncode == 0
    assert _alaya(data, "ingest", str(transcript), "--distill").returncode == 0

    async def go():
        async with _stdio(data) as client:
            before = await _call(client, "search_memory", {"query": "billing-api deploy key"})
            result = await client.call_tool("memory_introspect", {"session_id": "sess-forget-1"})
            report = json.loads(result.content[0].text)
            await _refused(client, "delete_memory", {"id": "card-does-not-exist"}, "no card")
            return before, report

    before, report = _run(go())
    assert before["memories"] and report["cards"] >= 1 and report["entities"]
    forgot = _alaya(data, "forget", "--session", "sess-forget-1", "--json")
    assert forgot.returncode == 0, forgot.stderr
    assert json.loads(forgot.stdout)["sessions"] == ["sess-forget-1"]
    again = _alaya(data, "ingest", str(transcript), "--distill", "--json")  # the same transcript, re-captured
    assert again.returncode == 0 and json.loads(again.stdout)["forgotten"] is True
    out = _alaya(data, "recall", "billing-api deploy key", "--json")
    assert json.loads(out.stdout)["nodes"] == []
    assert _alaya(data, "rebuild").returncode == 0
    assert json.loads(_alaya(data, "recall", "billing-api deploy key", "--json").stdout)["nodes"] == []
    tombstones = (data / "raw" / "tombstones.jsonl").read_text()
    assert "sess-forget-1" in tombstones and "vault" not in tombstones  # what and when, not the text


def test_bad_tool_input_is_an_error_result_and_changes_nothing(tmp_path):
    data = tmp_path / "data"

    async def go():
        async with _stdio(data) as client:
            await _refused(client, "memory_commit", {"triplets": [{"subject": " ", "relation": "X", "object": "y"}]},
                           "subject")
            await _refused(client, "memory_commit", {"triplets": [
                {"subject": "a", "relation": "R", "object": "b", "confidence": 1.5}]}, "confidence")
            await _refused(client, "manage_entities", {"action": "show", "name": "nobody"}, "no entity")
            listed = await _call(client, "manage_entities", {"action": "list"})
            return listed

    assert _run(go())["entities"] == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_on_loopback(tmp_path):
    data = tmp_path / "data"
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "mcp", "--http",
                               f"127.0.0.1:{port}"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.2)

        token = (data / "tokens" / "owner").read_text().strip()  # made by the server on first use
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

        async def go():
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                              read_timeout_seconds=120) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                saved = await _call(client, "save_memory", {"content": "Deploys freeze every Friday after 15:00."})
                found = await _call(client, "search_memory", {"query": "when do deploys freeze", "limit": 3})
                return names, saved, found

        names, saved, found = _run(go())
        assert names == set(MCP_TOOLS)
        assert found["memories"][0]["id"] == saved["card_id"]
    finally:
        server.terminate()
        server.wait(timeout=30)
