"""issue 35: `alaya mcp` against the 2025-11-25 MCP spec, through the official client over stdio
(one server for the module, as Claude Code or Cursor start it).

- every call shape the design documents show (shared/seeds: claw-memory §8.2, TrulyMEM §2.1)
  is accepted and does what it says, beside the shapes accepted before;
- a tool-input error (an unknown id, a value that cannot be read, a refusal) is a tool result
  with `isError` and one line naming what to fix, not a JSON-RPC error the model never sees;
- every tool has a title, correct behaviour hints, and a description for every parameter.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from openclaw_alaya.tools.catalog import MCP_TOOLS

ENV = {**os.environ, "ALAYA_NO_SERVE": "1"}
REACT = "React Hooks 的使用方式：useState 管理组件状态，useEffect 处理副作用。"

# (step, tool, arguments), run in this order on one server; each step's checks are below
SEED_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    # claw-memory §8.2, 示例调用
    ("save_memory §8.2", "save_memory", {"content": REACT, "metadata": {
        "tags": ["技术/前端/React"], "subjects": ["React Hooks"], "importance": 0.8}}),
    ("save_memory again", "save_memory", {"content": REACT, "metadata": {"tags": ["技术/前端/React"]}}),
    ("search_memory §8.2", "search_memory", {"query": "React Hooks 怎么用", "time_range": "month", "limit": 10,
                                             "max_tokens": 4000}),
    ("search_memory time_range period", "search_memory", {"query": "React Hooks 怎么用", "time_range": "last month"}),
    ("search_memory time_range span", "search_memory", {"query": "React Hooks 怎么用", "time_range": "7d"}),
    ("search_memory time_range object", "search_memory", {"query": "React Hooks", "time_range": {"since": "7d"}}),
    ("get_summary time_range", "get_summary", {"time_range": "month"}),
    ("get_summary period", "get_summary", {"period": "week"}),
    ("list_memories tag parent", "list_memories", {"filters": {"tag": "技术/前端"}, "limit": 5}),
    ("get_context", "get_context", {"query": "React Hooks", "max_tokens": 200}),
    # TrulyMEM §2.1: entity_types is a list of the types the model proposes
    ("memory_commit §2.1", "memory_commit", {
        "triplets": [{"subject": "billing-service", "relation": "DEPENDS_ON", "object": "Postgres", "confidence": 0.9}],
        "entity_types": ["service", "database"], "temporal_tag": "2026-04-08"}),
    ("memory_introspect §2.1", "memory_introspect", {}),
    ("billing-service typed", "manage_entities", {"action": "show", "name": "billing-service"}),
    ("Postgres typed", "manage_entities", {"action": "show", "name": "postgres"}),
    ("memory_commit types by name", "memory_commit", {
        "triplets": [{"subject": "Alice", "relation": "works at", "object": "Acme"}],
        "entity_types": {"Alice": "person"}}),
    ("memory_commit types as records", "memory_commit", {
        "triplets": [{"subject": "Alice", "relation": "works at", "object": "Acme"}],
        "entity_types": [{"name": "Acme", "type": "organization"}]}),
    ("Acme typed", "manage_entities", {"action": "show", "name": "Acme"}),
    ("memory_recall §2.1", "memory_recall", {"query_intent": "billing-service 依赖什么数据库",
                                             "seed_entities": ["billing-service"], "depth": 2}),
    ("memory_purge §2.1 dry run", "memory_purge", {"criteria": {
        "subject_contains": "billing", "relation_type": "DEPENDS_ON", "time_before": "2999-01-01"}, "dry_run": True}),
    ("memory_purge §2.1", "memory_purge", {"criteria": {
        "subject_contains": "billing", "relation_type": "DEPENDS_ON", "time_before": "2999-01-01"}}),
    ("list_memories after purge", "list_memories", {"limit": 50}),
]

# (case, tool, arguments, what the message must name); run after the seed calls
ERROR_CASES: list[tuple[str, str, dict[str, Any], tuple[str, ...]]] = [
    ("unknown card", "delete_memory", {"id": "card-nope"}, ("card-nope",)),
    ("unreadable since", "search_memory", {"query": "x", "time_range": {"since": "someday"}},
     ("since", "someday", "7d")),
    ("unreadable time_range", "search_memory", {"query": "x", "time_range": "someday"}, ("time_range", "someday")),
    ("empty purge criteria", "memory_purge", {"criteria": {}}, ("at least one criterion",)),
    ("unknown entity", "manage_entities", {"action": "show", "name": "nobody"}, ("nobody",)),
    ("merge without its other entity", "manage_entities", {"action": "merge", "name": "Alice"}, ("second name",)),
    ("confidence out of range", "memory_commit", {"triplets": [
        {"subject": "a", "relation": "R", "object": "b", "confidence": 1.5}]}, ("confidence",)),
    ("blank subject", "memory_commit", {"triplets": [{"subject": " ", "relation": "R", "object": "b"}]},
     ("subject: is empty",)),
    ("entity type not a word", "memory_commit", {"triplets": [{"subject": "a", "relation": "R", "object": "b"}],
                                                  "entity_types": ["a service!"]}, ("entity type 'a service!' is not a word",)),
    ("period and time_range disagree", "get_summary", {"period": "week", "time_range": "month"},
     ("period", "time_range")),
    ("unknown session", "memory_introspect", {"session_id": "sess-nope"}, ("sess-nope",)),
]

# (readOnlyHint, destructiveHint, idempotentHint) per tool; openWorldHint is false for all
HINTS = {
    "save_memory": (False, False, True), "search_memory": (True, False, True), "get_context": (True, False, True),
    "get_summary": (True, False, True), "list_memories": (True, False, True), "delete_memory": (False, True, True),
    "manage_entities": (False, True, True), "memory_recall": (True, False, True),
    "memory_commit": (False, False, True), "memory_purge": (False, True, True), "memory_introspect": (True, False, True),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> dict[str, Any]:
    """Every call of this module on one stdio server: the tools listed, the seed calls in order,
    the error cases, and the cards listed at the end (to see the errors changed nothing). A
    JSON-RPC error is kept as what the call gave, for its test to fail on."""
    data = tmp_path_factory.mktemp("mcp") / "data"
    params = StdioServerParameters(command=sys.executable, args=["-m", "openclaw_alaya", "--data-dir", str(data), "mcp"],
                                   env=ENV)

    async def go() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            async def call(tool: str, arguments: dict[str, Any]) -> Any:
                try:
                    return await client.call_tool(tool, arguments)
                except MCPError as exc:
                    return exc

            tools = (await client.list_tools()).tools
            seeds = {step: await call(tool, arguments) for step, tool, arguments in SEED_CALLS}
            errors = {case: await call(tool, arguments) for case, tool, arguments, _ in ERROR_CASES}
            after = await call("list_memories", {"limit": 50})
            return {"tools": {t.name: t for t in tools}, "seeds": seeds, "errors": errors, "after": after}

    return asyncio.run(go())


def _ok(served: dict[str, Any], step: str) -> dict[str, Any]:
    result = served["seeds"][step]
    assert not isinstance(result, MCPError), f"{step}: JSON-RPC error {result}"
    assert not result.is_error, f"{step}: {result.content[0].text}"
    return json.loads(result.content[0].text)


def _ids(memories: list[dict[str, Any]]) -> list[str]:
    return [m["id"] for m in memories]


def test_claw_memory_seed_calls_save_search_summarise_and_list(served):
    saved = _ok(served, "save_memory §8.2")["card_id"]
    assert _ok(served, "save_memory again")["card_id"] == saved  # idempotent, as its hint says
    assert _ids(_ok(served, "search_memory §8.2")["memories"])[:1] == [saved]
    assert saved not in _ids(_ok(served, "search_memory time_range period")["memories"])  # saved this month
    assert saved in _ids(_ok(served, "search_memory time_range span")["memories"])
    assert saved in _ids(_ok(served, "search_memory time_range object")["memories"])
    month, week = _ok(served, "get_summary time_range"), _ok(served, "get_summary period")
    assert month["period"] == "month" and month["cards"] >= 1
    assert week["period"] == "week"
    listed = _ok(served, "list_memories tag parent")["cards"]
    assert [c["id"] for c in listed] == [saved] and "技术/前端/React" in listed[0]["tags"]
    assert "useState" in _ok(served, "get_context")["context"]


def test_trulymem_seed_calls_commit_with_proposed_types_recall_introspect_and_purge(served):
    committed = _ok(served, "memory_commit §2.1")["cards"]
    assert len(committed) == 1
    assert _ok(served, "billing-service typed")["type"] == "service"
    assert _ok(served, "Postgres typed")["type"] == "database"
    assert _ok(served, "memory_commit types by name")["cards"]
    assert _ok(served, "memory_commit types as records")["unchanged"]  # the same triplet: stored once
    assert _ok(served, "Acme typed")["type"] == "organization"
    assert "billing-service" in json.dumps(_ok(served, "memory_introspect §2.1")["entities"])
    assert committed[0] in _ids(_ok(served, "memory_recall §2.1")["nodes"])
    dry, done = _ok(served, "memory_purge §2.1 dry run"), _ok(served, "memory_purge §2.1")
    assert dry["dry_run"] and [c["id"] for c in dry["cards"]] == committed
    assert [c["id"] for c in done["cards"]] == committed
    assert committed[0] not in [c["id"] for c in _ok(served, "list_memories after purge")["cards"]]


@pytest.mark.parametrize("case, tool, arguments, names", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_a_tool_input_error_is_an_error_result_naming_what_to_fix(served, case, tool, arguments, names):
    result = served["errors"][case]
    assert not isinstance(result, MCPError), f"a JSON-RPC error the model does not see: {result}"
    text = result.content[0].text
    assert result.is_error, text
    assert "\n" not in text and len(text) < 600 and "Value error" not in text, text
    for name in names:
        assert name in text, text
    after = json.loads(served["after"].content[0].text)  # and the bad calls changed nothing
    assert after["total"] == _ok(served, "list_memories after purge")["total"]


def test_every_tool_has_a_title_its_hints_and_a_description_for_every_parameter(served):
    tools = served["tools"]
    assert set(tools) == set(MCP_TOOLS) == set(HINTS) and len(tools) == 11
    for name, tool in tools.items():
        hints = tool.annotations
        assert tool.title and tool.title != name and hints.title == tool.title, name
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == HINTS[name], name
        assert hints.open_world_hint is False, name
        schema = tool.input_schema
        for model in [schema, *schema.get("$defs", {}).values()]:
            for prop, spec in model.get("properties", {}).items():
                assert spec.get("description"), f"{name}: {prop} has no description"
