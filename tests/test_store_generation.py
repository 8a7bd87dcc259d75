"""Issue 33, a block that is never stale: the store's memory generation (store/generation.py),
which the OpenClaw plugin compares before re-injecting a cached block. On a real store (Kuzu and
LanceDB on disk), through the engine and through `alaya` in a subprocess.

- remember, a correction, an owner's forget and a restore move it on; a forget names its cards;
- a capture (ingest + distill), a recall and a dry-run forget do not move it;
- the forgotten list stays bounded and says from which generation on it is complete.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import session_json

from openclaw_alaya.store import generation


def state_of(memory):
    return generation.read(memory.dirs.state)


def test_deliberate_changes_move_the_generation_and_a_forget_names_its_cards(memory):
    assert state_of(memory) == {"generation": 0, "since": 0, "forgotten": []}
    memory.ingest(session_json("s-gen", [("user", "The staging database runs on the host kestrel-4."),
                                         ("assistant", "Noted: staging on kestrel-4.")]))
    memory.distill()
    memory.recall("staging database host")
    assert state_of(memory)["generation"] == 0, "capture, distill and recall are not deliberate changes"

    stored = memory.remember("The deploy window is Tuesday at 14:00 UTC.", type="fact")
    assert state_of(memory)["generation"] == 1
    corrected = memory.correct(stored.card_id, "The deploy window is Wednesday at 14:00 UTC.")
    assert state_of(memory)["generation"] == 2

    dry = memory.forget([corrected.card_id], dry_run=True)
    assert dry.cards and state_of(memory)["generation"] == 2, "a dry run changes nothing"
    memory.forget([corrected.card_id])
    after = state_of(memory)
    assert after["generation"] == 3
    assert after["forgotten"] == [[corrected.card_id, 3]]


def test_the_cli_moves_it_too(memory, tmp_path):
    """A change made by another process (the user's `alaya forget` beside a gateway) is seen."""
    stored = memory.remember("The on-call phone is kept in the drawer labelled ibis.", type="fact")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "forget",
                        stored.card_id], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads((memory.dirs.state / generation.FILE).read_text())
    assert doc["generation"] == 2 and doc["forgotten"] == [[stored.card_id, 2]]


def test_the_forgotten_list_is_bounded_and_says_since_when_it_is_complete(tmp_path, monkeypatch):
    monkeypatch.setattr(generation, "KEEP_FORGOTTEN", 3)
    generation.bump(tmp_path, ["a", "b"])
    generation.bump(tmp_path)
    assert generation.read(tmp_path) == {"generation": 2, "since": 0, "forgotten": [["a", 1], ["b", 1]]}
    generation.bump(tmp_path, ["c", "d"])
    doc = generation.read(tmp_path)
    assert doc["forgotten"] == [["b", 1], ["c", 3], ["d", 3]]
    # "a" (generation 1) is gone: the list is complete only for forgets after generation 1
    assert doc["since"] == 1 and doc["generation"] == 3


def test_a_forgotten_note_is_not_injected_again_not_even_as_a_recent_session(memory):
    """A stored note is a one-turn session whose title is the note's text; forgetting the note's
    card forgets that session too, so session start's "Recent sessions" does not repeat it."""
    from openclaw_alaya.bridge.inject import StartRequest, build

    gone = memory.remember("The staging VPN password rotation is handled by the tool named ploverkey.",
                           type="fact", agent="main")
    memory.remember("The release checklist for the staging VPN lives in the tool named wrenlist.",
                    type="fact", agent="main")
    request = StartRequest(agent_id="main", session_id="cur", prompt="Which tools do we use for the staging VPN?",
                           budget=1200)
    assert "ploverkey" in build(memory, request)
    memory.forget([gone.card_id])
    block = build(memory, request)
    assert "wrenlist" in block and "ploverkey" not in block, block
    with memory.reading("test") as graph:
        assert graph.get_session(gone.session_id) is None
