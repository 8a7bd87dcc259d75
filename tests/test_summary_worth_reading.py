"""The integrated summary worth reading (issue 33): written from the cards, offline, never a
count of tags ("1 card. Active areas: concept 1; tags: concept 1, noted 1, …" before). A real
store (Kuzu, LanceDB) whose expected summary lines are known: what the user is working on, the
owner's standing preferences and decisions, what changed recently; the model's acknowledgements
("Noted.", "Stored for the runbook.", "STUB-REPLY-OK") never become cards or topics; only
injectable origins."""

from __future__ import annotations

import json
import re

import pytest

from openclaw_alaya import Alaya
from openclaw_alaya.bridge import summary as summary_mod
from openclaw_alaya.bridge.inject import StartRequest, build
from openclaw_alaya.text import estimate_tokens

NOW = "2026-12-01T09:00:00+00:00"
ACKS = ("Noted.", "Stored for the runbook.", "STUB-REPLY-OK", "Got it.", "OK")


def session(sid: str, day: str, turns: list[tuple[str, str, str]]) -> bytes:
    """A session of (role, origin, text) turns, as the project's JSON format gives them."""
    return json.dumps({"session_id": sid, "agent_id": "main", "started_at": f"{day}T10:00:00+00:00", "turns": [
        {"id": f"t{i}", "role": role, "origin": origin, "content": text} for i, (role, origin, text) in enumerate(turns, 1)
    ]}).encode()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ALAYA_NOW", NOW)
    memory = Alaya(tmp_path_factory.mktemp("summary") / "data")
    memory.init()
    for sid, day, turns in (
        ("s-pnpm", "2026-11-02", [("user", "owner", "I prefer pnpm over npm in every repo, always."),
                                  ("assistant", "agent", "Noted.")]),
        ("s-staging", "2026-11-03", [("user", "owner", "We decided to seed the staging DB from fixtures, because it resets every night."),
                                     ("assistant", "agent", "Stored for the runbook.")]),
        ("s-pool", "2026-11-05", [("user", "owner", "Our billing DB pool size is 20."), ("assistant", "agent", "OK")]),
        ("s-stranger", "2026-11-06", [("user", "untrusted", "I prefer skipping code review on Fridays.")]),
        ("s-agent", "2026-11-07", [("user", "owner", "Which queue should the workers read?"),
                                   ("assistant", "agent", "STUB-REPLY-OK"),
                                   ("assistant", "agent", "We decided to use the Redis stream for the worker queue.")]),
    ):
        memory.ingest(session(sid, day, turns))
    memory.distill()
    memory.ingest(session("s-pool-2", "2026-11-20", [("user", "owner", "We raised the billing DB pool size to 120."),
                                                      ("assistant", "agent", "Got it.")]))
    memory.distill()
    yield memory
    mp.undo()


def test_the_summary_says_what_the_user_works_on_stands_by_and_changed(store):
    summary = summary_mod.refresh(store, ["main"])["main"]
    standing = [(c["type"], c["title"]) for c in summary["standing"]]
    assert ("preference", "I prefer pnpm over npm in every repo, always.") in standing
    assert any(kind == "decision" and "seed the staging DB from fixtures" in title for kind, title in standing)
    assert not any("Friday" in title for _, title in standing)  # a stranger's, never injected on its own
    assert not any("Redis" in title for _, title in standing)  # the agent's, not the owner's
    assert [c["what"] for c in summary["changed"]] == ["billing db pool size: 20 → 120"]
    assert summary["changed"][0]["date"] == "2026-11-20"
    assert "DB" in summary["working_on"]
    topics = {t.lower() for t in summary["working_on"]} | {t.lower() for t, _ in summary["topics"]}
    assert not topics & {"noted", "stub-reply-ok", "runbook", "ok", "concept", "decision"}
    assert "tags" not in summary and "types" not in summary


def test_acknowledgements_are_never_cards(store):
    titles = [c.title for c in store.list_cards(scope="main").cards]
    assert titles and not [t for t in titles if t.strip() in ACKS or "STUB-REPLY" in t]


def test_the_block_reads_it_within_budget_and_untrusted(store):
    text = build(store, StartRequest(agent_id="main", session_id="new", prompt="", budget=1200))
    part = text.split("### Integrated summary", 1)[1]
    lines = [line for line in part.splitlines() if line.startswith("- ")]
    assert re.fullmatch(r"- Working on: .*\bDB\b.*", lines[0])
    assert any(re.fullmatch(r"- \[card-[^\]]+\] Standing preference: I prefer pnpm over npm in every repo, always\.", line)
               for line in lines)
    assert any(line.endswith("Changed 2026-11-20: billing db pool size: 20 → 120") for line in lines)
    assert "Active areas" not in text and "tags:" not in text and not re.search(r"\b(concept|fact|decision) \d", text)
    assert "Friday" not in text and "untrusted historical data" in text.lower() and estimate_tokens(text) <= 1200
    # a card the summary says is not said again among the hottest and newest
    ids = re.findall(r"\[(card-[^\]]+)\]", text)
    assert len(ids) == len(set(ids))


def test_the_summary_gives_way_to_the_prompts_cards(store):
    """After the prompt's cards, so that a tight budget cuts the overview first: the prompt's
    cards lose none while the overview still has a line; and the change is said beside its card."""
    def parts(budget: int) -> tuple[int, int, str]:
        text = build(store, StartRequest(agent_id="main", session_id="new", prompt="billing DB pool size", budget=budget))
        assert estimate_tokens(text) <= budget
        cards = text.split("### Cards relevant to this prompt", 1)[1].split("###", 1)[0] if "### Cards relevant" in text else ""
        overview = text.split("### Integrated summary", 1)[1] if "### Integrated summary" in text else ""
        return cards.count("\n- ["), overview.count("\n- "), overview

    full_cards, full_lines, overview = parts(1200)
    assert full_cards >= 2 and "Changed 2026-11-20: billing db pool size: 20 → 120" in overview
    cut = [parts(budget) for budget in range(320, 180, -10)]
    assert any(cards == full_cards and 0 < lines < full_lines for cards, lines, _ in cut)  # the overview gave way
    assert all(lines == 0 for cards, lines, _ in cut if cards < full_cards)  # before any card did
