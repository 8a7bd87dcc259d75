"""End-to-end: the agent's daily note, written through real OpenClaw 2026.9's `write` tool, is
memory the next session recalls, citing the note's line (issue 16, must-show 2).

One OpenClaw home with the plugin (its alaya calls recorded), two `openclaw agent --local` turns:

  session 1 (plugin `daemon: false`, so its session-start runs the recorded `alaya` command and
      the payload is seen: its `workspaceDir` is the agent workspace): the stub model calls
      OpenClaw's `write` tool (directly, or through Tool Search's `tool_call` when it is not
      offered) to create `memory/<today>.md` in the workspace, with a `## Retain` line, then
      answers;
  session 2 (a new session id; the default path: session-start served by the alaya daemon, which
      syncs, so writes, in its process) asks about it:
      (a) the file is on disk as the model wrote it;
      (b) session 2's session-start (the plugin's `before_prompt_build`, with the event's
          `workspaceDir`) synced the workspace: the injected block in the model's request holds
          the fact and the card made of that line;
      (c) `alaya recall --json` finds that card with `source` `memory/<today>.md#L<line>`.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from openclaw_e2e_support import (
    GENEROUS,
    ToolCall,
    alaya_bin,
    find_user_message,
    offered_tools,
    plugin_home,
    recorded_calls,
    tool_results,
    write_recording_wrapper,
)

pytestmark = pytest.mark.e2e

BLOCK_OPEN, BLOCK_CLOSE = "<alaya-memory", "</alaya-memory>"
DONE_1 = "STUB-NOTE-WRITTEN"
DONE_2 = "STUB-ANSWERED"
TOKEN = "9177"
FACT = "the Zephyr cluster runs on port 9177."
PROMPT_1 = "Please note in today's memory log that the Zephyr cluster runs on port 9177."
PROMPT_2 = "Which port does the Zephyr cluster run on?"


def daily_note(day: str) -> str:
    return (f"# {day}\n"
            "\n"
            "## Notes\n"
            "- Talked with the user about the Zephyr cluster's deployment.\n"
            "\n"
            "## Retain\n"
            f"- W @Zephyr: {FACT}\n")


def call_tool(body: dict, name: str, args: dict) -> ToolCall:
    """`name` directly when the request offers it, else through Tool Search's tool_call."""
    if name in offered_tools(body):
        return ToolCall(name, args)
    return ToolCall("tool_call", {"id": name, "args": args})


@pytest.fixture(scope="module")
def oc(openclaw_install, tmp_path_factory):
    home = plugin_home(openclaw_install, tmp_path_factory.mktemp("openclaw-workspace"))
    try:
        home.calls_dir = home.root / "alaya-calls"
        wrapper = write_recording_wrapper(home.root / "alaya-recording", alaya_bin(), home.calls_dir)
        home.set_plugin_config(command=[str(wrapper)], **GENEROUS)
        yield home
    finally:
        home.close()


def session_starts(oc, session_id: str) -> list[dict]:
    return [c for c in recorded_calls(oc.calls_dir)
            if "session-start" in c["argv"] and (c["payload"] or {}).get("sessionId") == session_id]


def test_daily_note_written_through_write_is_recalled_with_its_line(oc):
    day = datetime.date.today().isoformat()
    rel = f"memory/{day}.md"
    note = daily_note(day)
    fact_line = note.splitlines().index(f"- W @Zephyr: {FACT}") + 1
    ws = Path(oc.workspace)
    assert not (ws / rel).exists()

    # ---- session 1: the model writes the daily note
    first: dict = {}

    def script(body: dict):
        if find_user_message(body, PROMPT_1) is None:
            return None
        if not tool_results(body):
            first.setdefault("offered", offered_tools(body))
            return [call_tool(body, "write", {"path": rel, "content": note})]
        return DONE_1

    oc.set_plugin_config(daemon=False)
    with oc.stub.scripted(script):
        res = oc.local_turn("e2e-ws-1", PROMPT_1)
    oc.set_plugin_config(daemon=None)
    assert not oc.stub.script_errors, oc.stub.script_errors
    assert res.returncode == 0 and DONE_1 in res.stdout, res.describe()
    results = tool_results(oc.stub.requests_for(PROMPT_1)[-1])
    print(f"[e2e] session 1: {res.seconds:.1f} s; write offered directly: {'write' in first['offered']}; tool result(s): "
          f"{[(r['name'], r['arguments'][:120], r['content'][:200]) for r in results]}")

    # (a) on disk as written
    assert (ws / rel).exists(), (f"the write tool did not create {rel} in the workspace {ws}\n"
                                 f"tool results: {results}\n" + res.describe())
    assert (ws / rel).read_text() == note

    start1 = session_starts(oc, "e2e-ws-1")
    assert start1 and start1[0]["rc"] == 0, f"session 1's alaya hook session-start: {start1}"
    print(f"[e2e] session-start payload keys: {sorted(start1[0]['payload'])}; "
          f"workspaceDir {start1[0]['payload'].get('workspaceDir')!r} (workspace {ws})")
    assert Path(start1[0]["payload"]["workspaceDir"]).resolve() == ws.resolve(), start1[0]["payload"]

    # written after session 1's start synced the workspace: not memory until a sync sees it
    assert not [n for n in oc.alaya.recall("Zephyr cluster port")["nodes"] if (n.get("source") or "").startswith(rel)]

    # ---- session 2: a new session asks about it
    res2 = oc.local_turn("e2e-ws-2", PROMPT_2)
    assert res2.returncode == 0, res2.describe()
    print(f"[e2e] session 2: {res2.seconds:.1f} s")

    # (c) recall finds the card of that line, citing it
    nodes = oc.alaya.recall("Zephyr cluster port")["nodes"]
    cited = [n for n in nodes if n.get("source") == f"{rel}#L{fact_line}"]
    assert cited, ("alaya recall does not find the daily note's Retain line with its source\n"
                   + json.dumps([{k: n.get(k) for k in ("card_id", "source", "kind", "content")} for n in nodes],
                                indent=1)[:4000])
    card = cited[0]
    print(f"[e2e] recalled: {card['card_id']} source {card['source']} kind {card.get('kind')} "
          f"entities {card.get('entities')} content {card['content']!r}")
    assert TOKEN in card["content"] and card.get("kind") == "world", card

    # (b) session 2's session-start synced the note (nothing else syncs here; no `workspace.dir` is
    # configured, so only the event's workspaceDir can have named the folder) and injected it.
    state = json.loads((oc.alaya.data_dir / "state" / "workspace.json").read_text())["workspaces"]
    synced = {key.split("\0", 1)[1]: sorted(v["files"]) for key, v in state.items() if key.startswith("main\0")}
    print(f"[e2e] workspaces alaya synced for agent main: {synced}")
    assert rel in synced.get(str(ws.resolve()), []), synced
    print(f"[e2e] session 2's session-start: "
          f"{'the recorded alaya command' if session_starts(oc, 'e2e-ws-2') else 'served by the daemon'}")
    body = oc.stub.request_for(PROMPT_2)
    assert body is not None, res2.describe()
    text = find_user_message(body, PROMPT_2)
    region = text[: text.index(PROMPT_2)]
    assert BLOCK_OPEN in region and BLOCK_CLOSE in region, f"no memory block before the prompt:\n{text[:3000]}"
    block = region[region.index(BLOCK_OPEN): region.index(BLOCK_CLOSE) + len(BLOCK_CLOSE)]
    print(f"[e2e] session 2's injected block:\n{block[:2000]}")
    assert TOKEN in block and f"[{card['card_id']}]" in block, (
        f"session 2's injected block lacks the daily note's card {card['card_id']}:\n{block}")
