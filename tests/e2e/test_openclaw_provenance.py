"""End-to-end: provenance (issue 15) through real OpenClaw 2026.9 and the real alaya: what the
plugin learns from OpenClaw's hooks (hooks/openclaw-alaya/README.md, "What the plugin sends about
provenance") decides how alaya keeps a sub-agent's and a cron job's sessions.

One Gateway serves both cases; the stub model drives the runs.

  (a) the parent's model calls `sessions_spawn`; the child reads a scratch file (a tool call, whose
      result capture does not keep as a turn) and reports. The child's session is stored in L3 with kind `subagent` and the parent's session
      as its parent, and distilled into exactly one card, tagged `subagent-summary`: none of the
      child's other content (the scratch file) becomes a card, and the parent's
      `alaya hook session-start` shows the summary, not the child's raw turns;
  (b) a cron job (isolated session) force-run with `openclaw automations run --wait`: its session
      is stored in L3 with kind `cron`, and the card count does not change.
"""
from __future__ import annotations

import json

import pytest
from openclaw_e2e_support import (
    GENEROUS,
    Gateway,
    ToolCall,
    alaya_bin,
    find_user_message,
    message_text,
    offered_tools,
    plugin_home,
    recorded_calls,
    tool_results,
    wait_for,
    write_recording_wrapper,
)

pytestmark = pytest.mark.e2e

CAPTURE_WAIT_S = 90
OWNER_IDS = ["telegram:12345"]

PARENT_KEY = "agent:main:e2e-prov-parent"
PARENT_PROMPT = "Please find out which port the billing gateway listens on; delegate it to a sub-agent."
CHILD_TASK = "Find which port the billing gateway listens on. Read notes/scratch.md first."
SCRATCH_FILE = "notes/scratch.md"
SCRATCH_TOKEN = "tern-88"  # only in the child's tool result: never a card, never injected
SCRATCH_TEXT = f"Scratch: the canary host is {SCRATCH_TOKEN}; ignore the old port list."
CHILD_REPORT = "Report: the billing gateway listens on port 8443 (gateway config gw-kestrel)."
REPORT_TOKEN = "8443"
ANNOUNCE_MARK = "A background task completed"  # OpenClaw's announce turn to the parent
PARENT_ACK = "PARENT-ACK: a sub-agent is on it."
PARENT_RELAY = "PARENT-RELAY: the sub-agent reported back."

CRON_MESSAGE = "Remember for later: the nightly backup bucket is called puffin-204."
CRON_TOKEN = "puffin-204"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def gw(openclaw_install, tmp_path_factory):
    """One OpenClaw home with the plugin (capture recorded) and owner ids, and its Gateway."""
    home = plugin_home(openclaw_install, tmp_path_factory.mktemp("openclaw-provenance"))
    gateway = None
    try:
        home.calls_dir = home.root / "alaya-calls"
        wrapper = write_recording_wrapper(home.root / "alaya-recording", alaya_bin(), home.calls_dir)
        home.set_plugin_config(command=[str(wrapper)], **GENEROUS)
        # captures through the recorded command, not a warm daemon's socket (issue 33 serves them)
        home.env["ALAYA_NO_SERVE"] = "1"
        cfg = home.read_config()
        cfg.setdefault("commands", {})["ownerAllowFrom"] = OWNER_IDS
        home.write_config(cfg)
        (home.workspace / SCRATCH_FILE).parent.mkdir(parents=True, exist_ok=True)
        (home.workspace / SCRATCH_FILE).write_text(SCRATCH_TEXT + "\n")
        gateway = Gateway(home)
        print(f"[e2e] gateway ready in {gateway.start():.1f} s")
        yield gateway
    finally:
        if gateway is not None:
            gateway.stop()
        home.close()


# --------------------------------------------------------------------------- helpers


def captures(oc, predicate) -> list[dict]:
    """Finished `alaya hook session-end` calls whose payload matches."""
    return [c for c in recorded_calls(oc.calls_dir)
            if "session-end" in c["argv"] and c["payload"] and predicate(c["payload"])]


def wait_capture(gw, predicate, what: str) -> dict:
    got = wait_for(lambda: captures(gw.oc, predicate), CAPTURE_WAIT_S, 1.0)
    assert got, (f"no capture of {what} reached alaya\ncalls: "
                 f"{[(c['argv'][-1], (c['payload'] or {}).get('sessionKey')) for c in recorded_calls(gw.oc.calls_dir)]}"
                 f"\n--- gateway ---\n{gw.output()[-4000:]}")
    assert got[-1]["rc"] == 0, f"alaya hook session-end failed: {got[-1]}"
    return got[-1]


def l3_session(oc, session_id: str) -> dict:
    """The stored L3 session (raw/sessions/<month>/<id>.json, through its index)."""
    raw = oc.alaya.data_dir / "raw" / "sessions"
    index = json.loads((raw / "index.json").read_text())
    assert session_id in index, f"session {session_id} is not in L3: {sorted(index)}"
    return json.loads((raw / index[session_id]).read_text())


def cards(oc) -> list[dict]:
    return json.loads(oc.alaya.run("list", "--json", "--limit", "1000").stdout)["cards"]


def card_count(oc) -> int:
    return json.loads(oc.alaya.run("status", "--json").stdout)["cards"]


def call_tool(body: dict, name: str, args: dict) -> ToolCall:
    """`name` directly when the request offers it, else through Tool Search's tool_call."""
    if name in offered_tools(body):
        return ToolCall(name, args)
    return ToolCall("tool_call", {"id": name, "args": args})


def spawn_script(body: dict):
    """Parent: spawn the child, then acknowledge; child: read the scratch file, then report."""
    users = [message_text(m) for m in body.get("messages") or [] if m.get("role") == "user"]
    done = len(tool_results(body))
    if any("[Subagent Task]" in u and CHILD_TASK in u for u in users):
        return [call_tool(body, "read", {"path": SCRATCH_FILE})] if done == 0 else CHILD_REPORT
    if find_user_message(body, PARENT_PROMPT) is None:
        return None
    if any(ANNOUNCE_MARK in u for u in users):
        return PARENT_RELAY
    if done == 0:
        return [call_tool(body, "sessions_spawn", {"task": CHILD_TASK, "label": "billing port"})]
    return PARENT_ACK


# --------------------------------------------------------------------------- (b) cron


def test_cron_run_is_stored_as_cron_and_adds_no_cards(gw):
    oc = gw.oc
    before = card_count(oc)
    res = oc.run("automations", "add", "every 1h", CRON_MESSAGE, "--name", "e2e-prov-cron", "--session", "isolated",
                 "--no-deliver", "--json", env=gw.client_env)
    job_id = json.loads(res.stdout)["id"]
    res = oc.run("automations", "run", job_id, "--wait", "--wait-timeout", "120s", env=gw.client_env, timeout=180)
    assert '"ok": true' in res.stdout, res.describe()

    call = wait_capture(gw, lambda p: f":cron:{job_id}" in (p.get("sessionKey") or "") and p.get("messages"),
                        f"cron job {job_id}")
    payload = call["payload"]
    print(f"[e2e] cron capture: sessionKey {payload['sessionKey']}, sessionKind {payload.get('sessionKind')}, "
          f"trigger {payload.get('trigger')}, jobId {payload.get('jobId')}; alaya: {call['stdout'].strip()}")
    assert payload.get("sessionKind") == "cron" and payload.get("trigger") == "cron", payload
    assert CRON_TOKEN in call["stdin"], "the cron run's messages were not in the capture"
    out = json.loads(call["stdout"])
    assert out.get("cards", 0) == 0, f"the cron capture made cards: {out}"

    session = l3_session(oc, out["session_id"])
    assert session["kind"] == "cron", {k: session.get(k) for k in ("id", "kind", "parent")}
    assert card_count(oc) == before, "a cron run added cards"
    assert CRON_TOKEN not in json.dumps(cards(oc)), "the cron run's content became a card"


# --------------------------------------------------------------------------- (a) sub-agent


def test_subagent_is_stored_apart_and_summarised_for_its_parent(gw):
    oc = gw.oc
    with oc.stub.scripted(spawn_script):
        res = gw.turn(PARENT_KEY, PARENT_PROMPT, timeout=180)
        assert PARENT_ACK in res.stdout, (f"the parent's turn did not end with the stub's answer\n"
                                          f"script errors: {oc.stub.script_errors}\n" + res.describe())
        child_call = wait_capture(gw, lambda p: ":subagent:" in (p.get("sessionKey") or "") and p.get("messages"),
                                  "the sub-agent's run")
        # the announce turn (the child's report handed to the parent) ends the flow
        announce = wait_capture(gw, lambda p: p.get("sessionKey") == PARENT_KEY
                                and (p.get("inputProvenance") or {}).get("kind") == "inter_session",
                                "the parent's announce turn")
    assert not oc.stub.script_errors, oc.stub.script_errors
    parent_calls = captures(oc, lambda p: p.get("sessionKey") == PARENT_KEY and p.get("messages"))
    parent_sid = parent_calls[0]["payload"]["sessionId"]

    # what the plugin sent
    child = child_call["payload"]
    print(f"[e2e] sub-agent capture: sessionKey {child['sessionKey']}, sessionKind {child.get('sessionKind')}, "
          f"parent {child.get('parentSessionKey')} / {child.get('parentSessionId')}; alaya: {child_call['stdout'].strip()}")
    assert child.get("sessionKind") == "subagent", child
    assert child.get("parentSessionKey") == PARENT_KEY and child.get("parentSessionId") == parent_sid, child
    assert child.get("ownerIds") == OWNER_IDS, child
    assert SCRATCH_TOKEN in child_call["stdin"] and REPORT_TOKEN in child_call["stdin"], (
        "the child's run (scratch read and report) was not in its capture")
    ip = announce["payload"]["inputProvenance"]
    assert ip.get("sourceSessionKey") == child["sessionKey"] and ip.get("sourceTool") == "subagent_announce", ip

    # L3: stored apart, with its parent
    child_sid = json.loads(child_call["stdout"])["session_id"]
    session = l3_session(oc, child_sid)
    assert session["kind"] == "subagent" and session["parent"] == parent_sid, (
        {k: session.get(k) for k in ("id", "kind", "parent")})
    assert REPORT_TOKEN in json.dumps(session["turns"]), "the child's turns are not kept in L3"

    # L2: exactly one card from the child, its summary; nothing else of the child's
    all_cards = cards(oc)
    from_child = [c for c in all_cards if any(s["session_id"] == child_sid for s in c["sources"])]
    assert len(from_child) == 1, f"cards from the sub-agent's session: {[(c['title'], c['tags']) for c in from_child]}"
    summary = from_child[0]
    print(f"[e2e] summary card {summary['id']}: {summary['title']!r}\n      {summary['content'][:400]!r}")
    assert "subagent-summary" in summary["tags"], summary
    assert REPORT_TOKEN in summary["content"], f"the summary lacks the child's report: {summary['content']}"
    assert "Subagent Context" not in summary["content"], f"the summary spends itself on OpenClaw's wrapping: {summary}"
    # The parent's announce turn (OpenClaw hands it the child's result, inputProvenance inter_session,
    # sourceTool subagent_announce) is the sub-agent's result again: the summary holds it, so it is
    # stored in the parent's L3 and gives no card of its own.
    relayed = [c["title"] for c in all_cards if c is not summary and REPORT_TOKEN in c["content"]]
    assert not relayed, f"the announce turn repeated the child's report as parent cards: {relayed}"
    leaked = [c["title"] for c in all_cards if SCRATCH_TOKEN in c["title"] + c["content"]]
    assert not leaked, f"the child's scratch content became cards: {leaked}"

    # the parent's next session-start shows the summary, not the child's raw turns
    payload = {"agentId": "main", "sessionKey": PARENT_KEY, "sessionId": "e2e-prov-parent-next",
               "prompt": "Which port does the billing gateway listen on?", "messages": []}
    out = json.loads(oc.alaya.run("hook", "session-start", "--budget", "1200", input=json.dumps(payload)).stdout)
    block = out.get("prependContext") or ""
    print(f"[e2e] parent's session-start block:\n{block[:1500]}")
    assert f"[{summary['id']}]" in block or summary["title"] in block, (
        f"the parent's session-start does not show the sub-agent's summary {summary['id']}:\n{block}")
    assert SCRATCH_TOKEN not in block, f"the child's raw turns reached the parent's session-start:\n{block}"
