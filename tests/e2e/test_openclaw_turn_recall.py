"""End-to-end (issue 32): per-turn recall inside real OpenClaw with the real `alaya` daemon.

A session whose first message names nothing; its second message names a memory stored weeks
before. The plugin asks the warm daemon's `alaya hook turn` on that second message, and the model's
request for it carries the card in its system prompt, as an untrusted `recall="turn"` block, never
in the user message; the first request has no such block. Session start's block is switched off
(`budgetTokens: 0`) so that the card can only arrive through the per-turn path.
"""
from __future__ import annotations

import pytest
from openclaw_e2e_support import GENEROUS, STUB_REPLY, find_user_message, plugin_home, system_text

pytestmark = pytest.mark.e2e

TURN_OPEN = '<alaya-memory untrusted="true" recall="turn">'
SEED_FACT = "The nightly invoice export job runs on the host wren-19 and writes to the finance bucket."
SEED_TOKEN = "wren-19"
FIRST = "Good morning, let us get started with today's work."
SECOND = "Which host runs the nightly invoice export job again?"


@pytest.fixture(scope="module")
def oc(openclaw_install, tmp_path_factory):
    home = plugin_home(openclaw_install, tmp_path_factory.mktemp("openclaw-turn-recall"))
    yield home
    home.close()


def test_a_later_message_brings_back_its_memory_through_the_warm_daemon(oc):
    oc.set_plugin_config(command=None, captureOn=None, budgetTokens=0, captureEnabled=False, **GENEROUS)
    oc.alaya.seed(SEED_FACT, "Noted: the invoice export runs nightly on wren-19.")
    card = next(n for n in oc.alaya.recall(SECOND)["nodes"] if SEED_TOKEN in n["content"])
    oc.alaya.run("serve", "start", timeout=300)  # warm before the turns: the plugin asks only a warm daemon

    first = oc.local_turn("e2e-turn", FIRST)
    assert STUB_REPLY in first.stdout, first.describe()
    second = oc.local_turn("e2e-turn", SECOND)
    assert STUB_REPLY in second.stdout, second.describe()

    body1, body2 = oc.stub.request_for(FIRST), oc.stub.request_for(SECOND)
    assert body1 is not None and body2 is not None, second.describe()
    assert TURN_OPEN not in system_text(body1), "the first message brought nothing back"
    system = system_text(body2)
    assert TURN_OPEN in system and SEED_TOKEN in system, (
        f"the second request's system prompt lacks the turn block\nsystem: {system[-3000:]}\n" + second.describe())
    assert f"[{card['card_id']}]" in system
    assert SEED_TOKEN not in find_user_message(body2, SECOND), "the turn block went into the user message"
