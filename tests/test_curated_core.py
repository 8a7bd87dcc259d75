"""The curated core (issue 31, must-show 5): introspect's `core` step promotes a card by
evidence of use (recalled ≥ 3 times by ≥ 3 distinct questions on ≥ 3 days, score ≥ 0.75, the
last within 30 days; maintenance/core.py), session start injects the core first
(bridge/inject.py), a round dropping more than a quarter of the core is refused, and the core
is written back into a workspace's MEMORY.md as a marked section (core_writeback.py) that keeps
the owner's edits, even one made during the write-back, and that workspace sync does not take
back as new owner cards. Real Kuzu and LanceDB stores, `alaya hook session-start` as a
subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.maintenance import core, introspect
from openclaw_alaya.maintenance.workspace import session_id_for, sync

DAY = [datetime(2027, 3, d, 9, tzinfo=timezone.utc) for d in range(1, 29)]
ALICE = "Alice is the billing lead at Acme and owns the invoice pipeline."
DEPLOY = "The deploy window is Friday afternoon once the release freeze ends."
WS_STEPS = ["workspace-sync", "fold-access", "core"]  # (the cards' stamps are on the real clock: no forget step)
OWNER_MD = "# Memory\n\n- I prefer tabs over spaces in every repository.\n\n## Notes\n\nThe NAS lives in the attic.\n"


def recall_on_days(mem: Alaya, card_id: str, questions: list[str], days: list[datetime]) -> None:
    for question, day in zip(questions, days):
        found = mem.recall(question, top_k=1, now=day)
        assert found.nodes and found.nodes[0].card_id == card_id, (question, [n.title for n in found.nodes])


def core_step(report: dict) -> dict:
    entry = next(s for s in report["steps"] if s["step"] == "core")
    assert entry["ok"], entry
    return entry["result"]


def session_start(data: Path, now: datetime, prompt: str, workspace: Path | None = None) -> str:
    env = {**os.environ, "ALAYA_NOW": now.isoformat()}
    env.pop("ALAYA_HOME", None)
    event = {"agentId": "main", "sessionId": "new-one", "prompt": prompt}
    if workspace is not None:
        event["workspaceDir"] = str(workspace)
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "hook", "session-start"],
                          input=json.dumps(event),
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout).get("prependContext", "")


def test_a_fact_recalled_by_three_questions_on_three_days_is_promoted_and_injected_first(memory):
    alice = memory.remember(ALICE, importance=0.5).card_id
    deploy = memory.remember(DEPLOY, importance=0.9).card_id
    memory.remember("The office plant is watered on Mondays by whoever arrives first.")
    recall_on_days(memory, alice, ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"], DAY[:3])
    recall_on_days(memory, deploy, ["deploy window friday"] * 5, DAY[:5])  # five times, one question
    introspect.run(memory, steps=["fold-access"], now=DAY[5])
    dry = core_step(introspect.run(memory, steps=["core"], dry_run=True, now=DAY[5]))  # says what would change
    assert dry["dry_run"] and dry["promoted"] == [alice] and not core.core_state.path_of(memory).exists()
    result = core_step(introspect.run(memory, now=DAY[5]))
    assert result["promoted"] == [alice], result
    assert any(e["id"] == deploy and "distinct queries" in e["why"] for e in result["not_promoted"]), result
    entry = json.loads(core.core_state.path_of(memory).read_text())["cards"][0]
    assert entry["id"] == alice and entry["score"] >= 0.75
    assert entry["evidence"] == {"recalls": 3, "queries": 3, "days": 3, "last_day": "2027-03-03", "importance": 0.5}
    # session start: the core first, within the block, said once; the one-question card is no core
    text = session_start(memory.dirs.root, DAY[6], "what did we decide about the deploy window?")
    assert text.startswith("<alaya-memory untrusted=\"true\">")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Core memory (curated: promoted by use)", headings
    core_part = text.split("## ", 2)[1]
    assert f"[{alice}]" in core_part and deploy not in core_part and text.count(alice) == 1


def test_a_round_that_would_drop_more_than_a_quarter_of_the_core_is_refused(memory):
    facts = [f"The {name} server runs {os_name} and sits in rack {rack}." for name, os_name, rack in
             (("zephyr", "Debian", 4), ("quartz", "Alpine", 7), ("nimbus", "FreeBSD", 9), ("tundra", "Gentoo", 2))]
    ids = [memory.remember(fact).card_id for fact in facts]
    for cid, fact in zip(ids, facts):
        name, os_name, rack = fact.split()[1], fact.split()[4], fact.split()[-1].rstrip(".")
        recall_on_days(memory, cid, [f"{name} server", f"which server runs {os_name}", f"{name} rack {rack}"], DAY[:3])
    assert sorted(core_step(introspect.run(memory, now=DAY[3]))["promoted"]) == sorted(ids)
    before = core.core_state.path_of(memory).read_text()
    memory.forget(cards=ids[:2], reason="test: half the core goes")
    result = core_step(introspect.run(memory, now=DAY[4]))
    assert result["refused"] and "would drop 2 of the 4" in result["refused"], result
    assert [e["id"] for e in json.loads(core.core_state.path_of(memory).read_text())["cards"]] == \
        [e["id"] for e in json.loads(before)["cards"]]  # unchanged
    text = session_start(memory.dirs.root, DAY[5], "")
    assert ids[0] not in text and ids[2] in text  # a forgotten card is never injected, refused round or not
    # a corrected card is no loss: its successor takes its place
    newer = memory.correct(ids[2], "The nimbus server now runs OpenBSD and sits in rack 9.").card_id
    memory.config.core.max_drop = 1.0
    result = core_step(introspect.run(memory, steps=["core"], now=DAY[6]))
    assert result["replaced"] == [{"id": ids[2], "by": newer}] and len(result["dropped"]) == 2, result


def workspace_memory(tmp_path: Path) -> tuple[Alaya, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(OWNER_MD)
    mem = Alaya(tmp_path / "data", config=Config.model_validate({"workspace": {"dir": str(ws)}}))
    mem.init()
    return mem, ws


def test_the_core_is_written_into_memory_md_and_a_hand_edit_during_the_write_back_is_kept(tmp_path, monkeypatch):
    mem, ws = workspace_memory(tmp_path)
    alice = mem.remember(ALICE).card_id
    recall_on_days(mem, alice, ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"], DAY[:3])
    result = core_step(introspect.run(mem, steps=WS_STEPS, now=DAY[3]))
    assert result["memory_md"][0]["status"] == "written", result
    text = (ws / "MEMORY.md").read_text()
    assert text.startswith(OWNER_MD) and ALICE in text and "<!-- alaya:core:begin" in text  # nothing of the owner's touched
    # the owner edits MEMORY.md between the write-back's read and its rename: the edit is kept
    deploy = mem.remember(DEPLOY).card_id
    recall_on_days(mem, deploy, ["deploy window friday", "when can we release", "release freeze deploy"], DAY[4:7])
    real = tempfile.mkstemp
    hand = "- A line the owner typed during the write-back.\n"

    def edit_then_stage(*args, **kwargs):
        if Path(kwargs.get("dir", "")) == ws:
            with open(ws / "MEMORY.md", "a") as f:
                f.write(hand)
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", edit_then_stage)
    raced = core_step(introspect.run(mem, steps=["fold-access", "core"], now=DAY[7]))
    monkeypatch.setattr(tempfile, "mkstemp", real)
    assert raced["promoted"] == [deploy] and raced["memory_md"][0]["status"] == "kept", raced
    assert "changed meanwhile" in raced["memory_md"][0]["why"]
    after = (ws / "MEMORY.md").read_text()
    assert after == text + hand and DEPLOY not in after and not list(ws.glob(".MEMORY.md.*"))
    # the next run writes from the edited file: the hand line stays, the new card goes in the section
    again = core_step(introspect.run(mem, steps=["core"], now=DAY[8]))
    assert again["memory_md"][0]["status"] == "written", again
    final = (ws / "MEMORY.md").read_text()
    assert final.startswith(OWNER_MD) and hand in final and DEPLOY in final and ALICE in final


def test_a_core_card_written_into_the_sessions_memory_md_is_not_injected_twice(tmp_path):
    """OpenClaw's bootstrap injects MEMORY.md (its first 20,000 characters) into the session:
    a core card the write-back put there is left out of the block for that workspace, and only
    there; a line the owner edited is no longer ours, so the card is said by the block again."""
    mem, ws = workspace_memory(tmp_path)
    alice = mem.remember(ALICE).card_id
    recall_on_days(mem, alice, ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"], DAY[:3])
    assert core_step(introspect.run(mem, steps=WS_STEPS, now=DAY[3]))["memory_md"][0]["status"] == "written"
    assert f"[{alice}]" in session_start(mem.dirs.root, DAY[4], "")  # a session elsewhere: no MEMORY.md of ours
    assert alice not in session_start(mem.dirs.root, DAY[4], "who leads billing?", workspace=ws)
    other = tmp_path / "other-ws"
    other.mkdir()
    assert f"[{alice}]" in session_start(mem.dirs.root, DAY[4], "", workspace=other)
    path = ws / "MEMORY.md"
    path.write_text(path.read_text().replace("billing lead at Acme", "billing lead at Acme Corp"))
    assert f"[{alice}]" in session_start(mem.dirs.root, DAY[4], "", workspace=ws)


def memory_md_cards(mem: Alaya) -> list:
    with mem.reading("test") as graph:
        found = graph.get_cards(graph.session_card_ids(session_id_for("shared", "MEMORY.md")))
    return [c for c in found.values() if not c.valid_until]


def test_workspace_sync_does_not_take_the_core_section_back_as_owner_cards(tmp_path):
    mem, ws = workspace_memory(tmp_path)
    alice = mem.remember(ALICE).card_id
    recall_on_days(mem, alice, ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"], DAY[:3])
    assert core_step(introspect.run(mem, steps=WS_STEPS, now=DAY[3]))["memory_md"][0]["status"] == "written"
    first = sync(mem, ws)  # MEMORY.md changed (our section): nothing new for memory
    assert first["cards"] == 0, first
    owner_cards = memory_md_cards(mem)
    assert len(owner_cards) == 2 and not any("Alice" in c.content for c in owner_cards)  # the owner's two lines only
    # an edit of our line by hand makes it the owner's: it is read, and not written again
    path = ws / "MEMORY.md"
    path.write_text(path.read_text().replace("billing lead at Acme", "billing lead at Acme Corp"))
    assert sync(mem, ws)["cards"] == 1
    assert any("Acme Corp" in c.content for c in memory_md_cards(mem))
    again = core_step(introspect.run(mem, steps=["core"], now=DAY[4]))
    assert again["memory_md"][0]["status"] in ("unchanged", "written"), again
    assert path.read_text().count("billing lead at Acme") == 1


def test_a_section_rewrite_dropping_more_than_a_quarter_is_refused_and_the_owners_lines_stay():
    from openclaw_alaya.ingest import core_section
    from openclaw_alaya.maintenance.core_writeback import rewrite

    ours = [core_section.line_for(f"card-{i}", f"fact number {i}") for i in range(4)]
    owner = "- my own line, added inside the section"
    text = "\n".join(["# Memory", "- outside", core_section.BEGIN_LINE, core_section.HEADING, *ours, owner,
                      core_section.END, "tail"]) + "\n"
    new, why, _ = rewrite(text, ours[:2], 0.25)  # two of four would go
    assert new is None and "would drop 2 of the section's 4 lines" in why
    new, why, counts = rewrite(text, [*ours[:3], core_section.line_for("card-9", "a new fact")], 0.25)
    assert why is None and counts == {"written": 4, "dropped": 1, "kept": 1}
    assert new.startswith("# Memory\n- outside\n") and new.endswith(f"{owner}\n{core_section.END}\ntail\n")
    assert "a new fact" in new and "fact number 3" not in new
    # a marker gone: the owner's business, nothing written
    assert rewrite(text.replace(core_section.END, ""), ours, 0.25)[1].startswith("the core section has lost a marker")
