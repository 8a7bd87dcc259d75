"""End-to-end (issue 33, must-show 2): a block that is never stale, in a real OpenClaw Gateway.

One session: its first turn is injected with a stored fact (the one to be forgotten); in its
second turn the model stores a new fact with `memory_store` and forgets the first with
`memory_forget`; then the session is compacted (`openclaw sessions compact`). The next model
request carries the new fact in its memory block and not the forgotten one. Before issue 33 the
plugin re-injected its cached block for up to `refreshEveryTurns` turns: the forgotten card in,
the new one out. Capture and per-turn recall are off, so only the session's block can carry
either fact. Real OpenClaw 2026.9, real alaya (daemon and CLI); only the model is a stub.
"""
from __future__ import annotations

import json
import re

import pytest
from openclaw_e2e_support import GENEROUS, Gateway, ToolCall, find_user_message, offered_tools, plugin_home, tool_results

pytestmark = pytest.mark.e2e

OLD_FACT = "The staging VPN password rotation is handled by the tool named ploverkey."
OLD_TOKEN = "ploverkey"
NEW_FACT = "The release checklist for the staging VPN lives in the tool named wrenlist."
NEW_TOKEN = "wrenlist"
KEY = "agent:main:fresh-block"
FIRST = "Which tool handles the staging VPN password rotation?"
SECOND = "Remember where the release checklist lives, and forget the note on the VPN password rotation."
THIRD = "Which tools do we use for the staging VPN: its password rotation and its release checklist?"
DONE = "STUB-TOOLS-DONE"
# the block itself, not the skill's or a tool description's mention of the tag
BLOCK = re.compile(r'<alaya-memory untrusted="true"[^>]*>.*?</alaya-memory>', re.S)


def memory_blocks(body: dict) -> str:
    """Every alaya memory block a request carries, in its system prompt or a user message."""
    texts = []
    for m in body.get("messages") or []:
        content = m.get("content")
        texts.append(content if isinstance(content, str) else "\n".join(
            p.get("text", "") for p in content or [] if isinstance(p, dict)))
    return "\n".join(b for t in texts for b in BLOCK.findall(t))


def reach(offered: list[str], name: str, args: dict) -> list[ToolCall]:
    """A call of `name` as a model makes it: directly when offered, else through Tool Search."""
    if name in offered:
        return [ToolCall(name, args)]
    return [ToolCall("tool_search", {"query": name.replace("_", " ")}), ToolCall("tool_call", {"id": name, "args": args})]


def test_store_forget_then_compaction_the_next_request_has_the_new_fact_not_the_forgotten(openclaw_install, tmp_path):
    oc = plugin_home(openclaw_install, tmp_path)
    gw = Gateway(oc)
    try:
        oc.set_plugin_config(captureEnabled=False, turnRecall=False, **GENEROUS)
        oc.alaya.run("remember", OLD_FACT, "--type", "fact", "--agent", "main")
        old_card = next(n for n in oc.alaya.recall(FIRST)["nodes"] if OLD_TOKEN in n["content"])["card_id"]
        print(f"[e2e] gateway ready in {gw.start(timeout=300):.1f} s")  # a loaded 2-core runner

        first = gw.turn(KEY, FIRST, timeout=300)
        assert first.returncode == 0, first.describe()
        block1 = memory_blocks(oc.stub.request_for(FIRST))
        assert OLD_TOKEN in block1 and NEW_TOKEN not in block1, f"the first turn's block:\n{block1}"

        plan: list[ToolCall] = []

        def script(body: dict):
            if find_user_message(body, SECOND) is None:
                return None
            if not plan:
                offered = offered_tools(body)
                plan.extend(reach(offered, "memory_store", {"text": NEW_FACT, "type": "fact"}))
                plan.extend(reach(offered, "memory_forget", {"ids": [old_card]}))
            done = len(tool_results(body))
            return [plan[done]] if done < len(plan) else DONE

        with oc.stub.scripted(script):
            second = gw.turn(KEY, SECOND, timeout=300)
        assert second.returncode == 0 and DONE in second.stdout, (
            f"script errors: {oc.stub.script_errors}\n" + second.describe())
        results = tool_results(oc.stub.requests_for(SECOND)[-1])
        print(f"[e2e] tool results: {json.dumps([r['content'][:160] for r in results])}")
        assert oc.alaya.knows("release checklist", NEW_TOKEN), "memory_store stored nothing"
        assert not oc.alaya.knows("VPN password rotation", OLD_TOKEN), "memory_forget forgot nothing"

        compacted = oc.run("sessions", "compact", KEY, "--json", env=gw.client_env, timeout=300)
        print(f"[e2e] compaction: {compacted.stdout.strip()[:300]}")

        third = gw.turn(KEY, THIRD, timeout=300)
        assert third.returncode == 0, third.describe()
        block3 = memory_blocks(oc.stub.request_for(THIRD))
        assert NEW_TOKEN in block3, f"the request after compaction lacks the stored fact; its memory block:\n{block3}"
        assert OLD_TOKEN not in block3, f"the request after compaction carries the forgotten fact:\n{block3}"
    finally:
        gw.stop()
        oc.close()
