"""`alaya workspace sync` (docs/workspace.md): an OpenClaw workspace's Markdown memory becomes
typed cards with `path#Lstart-Lend` citations, incrementally; bad input is reported and the
rest still synced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openclaw_alaya.maintenance import workspace as ws_mod
from openclaw_alaya.maintenance.workspace import sync
from openclaw_alaya.models import ENTITY_TYPE
from openclaw_alaya.store.embedded.graph import GraphStore

MEMORY = """# Long-term memory

- Keep the gateway on loopback. <!-- trigger: gateway setup, network safety --> <!-- importance: 9 -->
- The billing database is Postgres 16 on db-1. <!-- project: github.com/acme/billing -->
"""
USER = """# User

- Prefers short answers in English, code in TypeScript.
- 用户喜欢简洁的中文回答。
"""
DAYS = {
    "2025-11-24": ("Set up the billing service locally.", [
        "- W @Alice @Acme: Alice is the billing lead at Acme.",
        "- B @billing: I ran the migration suite; two tests failed.",
    ]),
    "2025-11-25": ("会议记录：和张三讨论了发布计划。", [
        "- W @张三：张三负责发布，2025年11月28日上线。",
        "- O(c=0.8) @张三：张三的估计通常偏乐观。",
    ]),
    "2025-11-26": ("Debugged the connection pool.", [
        "- B @billing: I fixed the connection pool leak in billing.",
        "- S: The pool leak came from unclosed cursors.",
    ]),
    "2025-11-27": ("Planning the freeze.", [
        "- W @Acme: Acme freezes deploys from 2025-12-20 to 2026-01-05.",
        "- O(c=0.95) @Bob: Bob is the most careful reviewer on the team.",
    ]),
    "2025-11-28": ("Release day.", ["- B: I shipped version 2.3 with the pool fix."]),
    "2025-11-29": ("Quiet day.", ["- S @billing: Billing errors dropped to zero after the fix."]),
    "2025-11-30": ("Weekly review.", ["- O(c=0.6) @Postgres: Postgres 16 is fast enough for billing."]),
}


def make_workspace(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "bank" / "entities").mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (root / "USER.md").write_text(USER, encoding="utf-8")
    for day, (prose, retain) in DAYS.items():
        text = f"# {day}\n\n{prose}\n\n## Retain\n" + "\n".join(retain) + "\n"
        (root / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    (root / "bank" / "entities" / "alice.md").write_text("# Alice\n\nAlice leads billing at Acme.\n", encoding="utf-8")
    return root


def all_cards(memory):
    with memory.reading("test") as graph:  # through the port: on any backend (issue 34)
        return graph.get_cards(sorted(graph.all_card_ids()))


def by_text(cards, text):
    """The one card holding `text` (reflect's entity summaries, which quote it, aside)."""
    found = [c for c in cards.values() if text in c.content and c.type != ENTITY_TYPE]
    assert len(found) == 1, (text, [c.content for c in found])
    return found[0]


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path / "workspace")


def test_retain_types_become_typed_cards_with_entities_and_line_citations(memory, workspace):
    report = sync(memory, workspace, agent_id="main")
    assert report["files"] == 10 and report["stored"] == 10 and not report["errors"] and not report["warnings"]
    cards = all_cards(memory)
    world = by_text(cards, "Alice is the billing lead at Acme.")
    assert world.kind == "world" and world.entities == ["Alice", "Acme"] and world.type == "fact"
    assert world.sources[0].path == "memory/2025-11-24.md" and world.sources[0].turn_ids == ["v1:L6-L6"]
    assert world.occurred == "2025-11-24" and world.origin == "agent" and world.session_kind == "import"
    assert by_text(cards, "I ran the migration suite").kind == "experience"
    opinion = by_text(cards, "张三的估计通常偏乐观")
    assert opinion.kind == "opinion" and opinion.confidence == 0.8 and opinion.entities == ["张三"]
    zh = by_text(cards, "张三负责发布")
    assert zh.kind == "world" and zh.occurred == "2025-11-28"  # the date the text gives
    assert by_text(cards, "unclosed cursors").kind == "observation"
    freeze = by_text(cards, "Acme freezes deploys")
    assert freeze.occurred == "2025-12-20/2026-01-05" and freeze.valid_from == "2025-12-20"
    # MEMORY.md: curated by the owner; annotations read
    gateway = by_text(cards, "Keep the gateway on loopback.")
    assert gateway.origin == "owner" and gateway.importance == 0.9 and gateway.kind is None
    assert {"trigger:gateway setup", "trigger:network safety"} <= set(gateway.tags)
    assert "project:github.com/acme/billing" in by_text(cards, "Postgres 16 on db-1").tags
    assert gateway.content == "Keep the gateway on loopback."  # annotations out of the text
    # lines outside Retain become cards too, bank/ included
    assert by_text(cards, "Debugged the connection pool.").kind is None
    assert by_text(cards, "Alice leads billing at Acme.").sources[0].path == "bank/entities/alice.md"
    # recall JSON: source, kind, timestamp, entities
    node = next(n for n in memory.recall("Alice billing lead Acme", scope="main").nodes if n.card_id == world.id)
    assert node.source == "memory/2025-11-24.md#L6" and node.kind == "world" and node.timestamp == "2025-11-24"
    assert node.entities == ["Alice", "Acme"]
    # trace shows the lines
    trace = memory.trace(world.id)
    assert [t.content for t in trace.sessions[0].turns] == ["- W @Alice @Acme: Alice is the billing lead at Acme."]
    assert trace.sessions[0].turns[0].name == "memory/2025-11-24.md#L6-L6"


def test_resync_is_a_no_op_and_an_edit_changes_exactly_one_card(memory, workspace):
    sync(memory, workspace, agent_id="main")
    before = all_cards(memory)
    again = sync(memory, workspace, agent_id="main")
    assert again["unchanged"] == 10 and again["stored"] == 0 and again["cards"] == 0
    note = workspace / "memory" / "2025-11-26.md"
    note.write_text(note.read_text(encoding="utf-8").replace("connection pool leak", "pool leak (cursor)"), encoding="utf-8")
    report = sync(memory, workspace, agent_id="main")
    assert report["stored"] == 1 and report["cards"] == 1 and report["superseded"] == 0 and report["moved"] == 0
    after = all_cards(memory)
    assert set(after) == set(before)  # updated in place: same ids
    changed = [cid for cid in after if after[cid].content != before[cid].content]
    assert len(changed) == 1 and after[changed[0]].content == "I fixed the pool leak (cursor) in billing."
    assert after[changed[0]].sources[0].turn_ids == ["v2:L6-L6"]


def test_a_deleted_line_supersedes_its_card_and_lines_below_move(memory, workspace):
    sync(memory, workspace, agent_id="main")
    note = workspace / "memory" / "2025-11-24.md"
    note.write_text(note.read_text(encoding="utf-8").replace("- W @Alice @Acme: Alice is the billing lead at Acme.\n", ""),
                    encoding="utf-8")
    report = sync(memory, workspace, agent_id="main")
    assert report["superseded"] == 1 and report["cards"] == 0 and report["moved"] == 1
    cards = all_cards(memory)
    gone = by_text(cards, "Alice is the billing lead")
    assert gone.valid_until  # superseded, not deleted
    kept = by_text(cards, "I ran the migration suite")
    assert not kept.valid_until and kept.sources[0].turn_ids == ["v2:L6-L6"]
    assert memory.trace(gone.id).sessions[0].turns[0].content.endswith("billing lead at Acme.")  # v1 kept in L3


def test_rebuild_gives_the_same_cards_without_the_workspace(memory, workspace, tmp_path):
    import shutil

    from openclaw_alaya.maintenance.rebuild import rebuild

    sync(memory, workspace, agent_id="main")
    note = workspace / "memory" / "2025-11-25.md"
    note.write_text(note.read_text(encoding="utf-8").replace("- O(c=0.8) @张三：张三的估计通常偏乐观。\n", ""), encoding="utf-8")
    sync(memory, workspace, agent_id="main")
    before = {cid: (c.content, c.kind, c.confidence, bool(c.valid_until), c.sources) for cid, c in all_cards(memory).items()}
    shutil.rmtree(workspace)
    rebuild(memory)
    after = {cid: (c.content, c.kind, c.confidence, bool(c.valid_until), c.sources) for cid, c in all_cards(memory).items()}
    assert after == before


def test_bad_input_is_reported_and_the_rest_synced(memory, workspace, tmp_path):
    memory.config.workspace.max_file_bytes = 64 * 1024
    (workspace / "memory" / "2025-12-01.md").write_bytes("# day\n\nCafé \xe9t\xe9\n".encode("latin-1"))
    (workspace / "memory" / "2025-12-02.md").write_text("x" * (100 * 1024), encoding="utf-8")
    (workspace / "memory" / "2025-12-03.md").write_text(
        "## Retain\n- O(c=1.7) @Bob: too sure\n- W @Bob:\n- W @: nameless entity\n- S @Carol: fine line\n", encoding="utf-8")
    outside = tmp_path / "secret.md"
    outside.write_text("- outside the workspace\n", encoding="utf-8")
    os.symlink(outside, workspace / "memory" / "2025-12-04.md")
    report = sync(memory, workspace, agent_id="main")
    errors = "\n".join(report["errors"])
    assert "memory/2025-12-01.md: not UTF-8" in errors
    assert "memory/2025-12-02.md: 0.1 MB, over workspace.max_file_bytes" in errors
    assert "memory/2025-12-04.md: a symlink" in errors and "outside the workspace" in errors
    warnings = "\n".join(report["warnings"])
    assert "2025-12-03.md:2: Retain line: confidence c=1.7 is outside 0..1" in warnings
    assert "2025-12-03.md:3: Retain line W has no text" in warnings
    assert "2025-12-03.md:4: Retain line: an @ with no name" in warnings
    assert report["stored"] == 11  # the ten good files and the one with bad lines
    cards = all_cards(memory)
    assert by_text(cards, "fine line").kind == "observation"
    assert by_text(cards, "too sure").kind is None  # kept as a plain note: nothing lost
    assert not any("outside the workspace" in c.content for c in cards.values())


def test_a_workspace_that_disappears_mid_sync_keeps_what_was_stored(memory, workspace, monkeypatch):
    import shutil

    sync(memory, workspace, agent_id="main")
    count = len(all_cards(memory))
    for note in (workspace / "memory").glob("*.md"):
        note.write_text(note.read_text(encoding="utf-8") + "\n- One more line.\n", encoding="utf-8")
    real = ws_mod.read_file
    calls = []

    def vanish(path, limit):
        calls.append(path)
        if len(calls) == 3:
            shutil.rmtree(workspace)
        return real(path, limit)

    monkeypatch.setattr(ws_mod, "read_file", vanish)
    report = sync(memory, workspace, agent_id="main")
    assert any("disappeared" in e for e in report["errors"])
    assert report["stored"] == 2 and report["superseded"] == 0
    cards = all_cards(memory)
    assert len(cards) == count + 2 and not any(c.valid_until for c in cards.values())


def test_session_start_syncs_the_workspace_and_injects_triggered_cards(memory, workspace):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "ALAYA_NO_SERVE": "1"}
    event = {"agentId": "main", "sessionId": "s1", "prompt": "help me with the gateway setup", "workspaceDir": str(workspace)}
    out = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "hook",
                          "session-start"], input=json.dumps(event), capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    text = json.loads(out.stdout)["prependContext"]
    assert "Cards this prompt triggers" in text and "Keep the gateway on loopback." in text
    others = [text.index(h) for h in ("Cards relevant to this prompt", "Hottest and most recent cards") if h in text]
    assert all(text.index("Cards this prompt triggers") < at for at in others)  # ahead of the other cards
    assert len(all_cards(memory)) > 10  # synced on the way


def test_session_start_keeps_a_workspace_synced_as_shared_in_shared(memory, workspace, tmp_path):
    """`alaya workspace sync DIR` (no --agent: shared) and then OpenClaw's session start for agent
    main on the same folder: main sees shared cards already, so the hook syncs in shared too; a
    sync in main's scope would make every entry a second card. A folder never synced as shared
    is synced in the event's agent's scope."""
    from openclaw_alaya.cli.hook import _sync_workspace

    sync(memory, workspace)
    count = len(all_cards(memory))
    note = workspace / "memory" / "2025-11-30.md"
    note.write_text(note.read_text(encoding="utf-8") + "- W @Zephyr: Zephyr runs on port 9177.\n", encoding="utf-8")
    _sync_workspace(memory, {"agentId": "main", "workspaceDir": str(workspace)})
    cards = all_cards(memory)
    assert len(cards) == count + 1 and {c.scope for c in cards.values()} == {"shared"}
    assert by_text(cards, "Zephyr runs on port 9177.").sources[0].path == "memory/2025-11-30.md"

    other = make_workspace(tmp_path / "other")
    _sync_workspace(memory, {"agentId": "main", "workspaceDir": str(other)})
    assert {c.scope for c in all_cards(memory).values()} == {"shared", "main"}


def test_ingest_of_a_markdown_note_points_to_workspace_sync(memory, workspace):
    from openclaw_alaya.errors import InputError

    with pytest.raises(InputError, match="alaya workspace sync"):
        memory.ingest(str(workspace / "memory" / "2025-11-27.md"))


def test_cli_workspace_sync_json(memory, workspace):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "ALAYA_NO_SERVE": "1"}
    out = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "workspace",
                          "sync", str(workspace), "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["stored"] == 10 and report["cards"] >= 20


SEEDED_USER = Path(__file__).parent / "fixtures" / "openclaw-seeded-USER.md"  # as OpenClaw 2026.9.6 wrote it


def test_openclaws_seeded_user_md_is_not_memory_but_directives_written_into_it_are(memory, tmp_path):
    root = tmp_path / "fresh"
    root.mkdir()
    seeded = SEEDED_USER.read_text(encoding="utf-8")
    (root / "USER.md").write_text(seeded, encoding="utf-8")
    assert sync(memory, root, agent_id="main")["cards"] == 0  # guidance, an example, a placeholder: no cards
    directives = ("\n<!-- observed: 2026-11-02 | status: active -->\n\n- Prefer dark mode in every editor.\n"
                  "\n<!-- observed: 2026-10-01 | status: superseded -->\n\n- Prefer light mode.\n")
    (root / "USER.md").write_text(seeded + directives, encoding="utf-8")
    sync(memory, root, agent_id="main")
    cards = all_cards(memory)
    assert [c.content for c in cards.values()] == ["Prefer dark mode in every editor."]
    # the user marks the directive superseded, as OpenClaw's format says: its card is superseded
    (root / "USER.md").write_text(seeded + directives.replace("2026-11-02 | status: active", "2026-11-02 | status: superseded"),
                                  encoding="utf-8")
    sync(memory, root, agent_id="main")
    assert all(c.valid_until for c in all_cards(memory).values())


def test_synced_files_are_not_listed_as_recent_sessions(memory, workspace):
    sync(memory, workspace, agent_id="main")
    with GraphStore(memory.dirs.graph, read_only=True) as graph:
        overview = graph.overview(["main", "shared"], top=8, sessions=12)
    assert overview["cards"] > 0 and overview["sessions"] == []  # the notes' cards count, the files are no sessions
