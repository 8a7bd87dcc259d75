"""Card titles say what the card is about: a contentless opening ("Let's go with it.") gives way
to the card's most telling sentence, or to the turn it answers, and a "no" is never dropped; a
decision or preference card's title is the decision or preference itself (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest

import openclaw_alaya
from openclaw_alaya.distill import HeuristicDistiller
from openclaw_alaya.distill.heuristic import title_judge
from openclaw_alaya.ingest.formats import parse_session
from openclaw_alaya.models import Session, Turn

DEMO = Path(openclaw_alaya.__file__).resolve().parent / "demo"


def _title_of(session: Session, turn_id: str) -> str:
    """The title of the card that ``turn_id`` opens, through the distiller as it runs."""
    cards = [c for c in HeuristicDistiller().distill(session).cards if c.turn_ids[0] == turn_id]
    assert cards, f"no card opens with {turn_id}"
    return cards[0].title


def _chat(*lines: tuple[str, str]) -> Session:
    """A session from (speaker, text) lines, turn ids t1, t2, …"""
    turns = [Turn(id=f"t{i}", role="user", name=who, content=text) for i, (who, text) in enumerate(lines, 1)]
    return Session(id="titles", started_at="2026-02-20T10:00:00Z", turns=turns)


@pytest.mark.parametrize("lines, expected", [
    ([("claw", "Kuzu is embedded and opens a 50k-node graph in under 100 ms; Neo4j needs a JVM."),
      ("Mei", "OK. Let's go with it. We decided: Kuzu as the graph store, LanceDB for vectors.")],
     "Kuzu as the graph store, LanceDB for vectors."),  # the decision from the same turn, its label dropped
    ([("claw", "Kuzu as the graph store fits the hook budget: it is embedded and opens in under 100 ms."),
      ("Mei", "Let's go with it.")],
     "Let's go with it \u2014 Kuzu as the graph store"),  # alone: what it answers
    ([("Ana", "Deployed v2.14.1 with PR #482 at 15:32, all green."),
      ("claw", "Good to hear. Summary for the incident doc: billing-api pool exhaustion from a session leak in reconcile.py.")],
     "Summary for the incident doc"),
], ids=["lets-go-with-it", "lets-go-with-it-alone", "good-to-hear"])
def test_a_contentless_opening_gives_way(lines: list[tuple[str, str]], expected: str) -> None:
    assert _title_of(_chat(*lines), "t2").startswith(expected)


def test_two_things_stack_up_here_gives_way_to_a_telling_sentence() -> None:
    session = _chat(
        ("Ana", "The only change is the invoice reconciler job, and the HPA scaled us to 8 pods."),
        ("claw", "Two things stack up here. First, 8 pods with 30 connections each make 240, but Postgres allows 200. "
                 "Second, reconcile.py leaks one session per failed invoice."),
    )
    title = _title_of(session, "t2")
    assert "Two things" not in title
    assert "Postgres" in title or "reconcile.py" in title


def test_a_contentless_no_keeps_its_negation() -> None:
    session = _chat(
        ("claw", "We could ship the billing-api fix on Friday evening."),
        ("Mei", "Let's not do that, it's too risky."),
        ("claw", "Then the billing-api fix goes out on Friday at 18:00."),
        ("Mei", "Don't do that. The billing-api fix waits until Monday."),
    )
    assert _title_of(session, "t2").startswith("Let's not do that, it's too risky \u2014 We could ship the billing-api fix")
    assert _title_of(session, "t4") == "Don't do that \u2014 The billing-api fix waits until Monday."


def test_a_chinese_contentless_title_names_what_it_answers() -> None:
    session = _chat(
        ("claw", "订单服务用 Redis Stream，峰值每秒 800 条消息足够。"),
        ("李雷", "就这么定了。"),
    )
    assert _title_of(session, "t2").startswith("就这么定了 \u2014 订单服务用 Redis Stream")


@pytest.mark.parametrize("title, contentless", [
    ("Let's go with it.", True),
    ("Good to hear.", True),
    ("Two things stack up here.", True),
    ("就这么定了。", True),
    ("No npm please.", False),
    ("Tabs are evil.", False),
    ("Neo4j 5 has a vector index now.", False),
    ("周五不要上线。", False),
    ("Mei agrees.", True),  # a speaker's name is not what a card is about
])
def test_the_contentless_rule(title: str, contentless: bool) -> None:
    judge = title_judge(_chat(("Mei", "Hello there.")))
    assert judge.contentless(title) is contentless


@pytest.mark.parametrize("path", sorted(p for p in DEMO.iterdir() if p.is_file()), ids=lambda p: p.name)
def test_no_contentless_titles_on_the_demo_sessions(path: Path) -> None:
    session = parse_session(path.read_bytes(), source_name=path.name)
    judge = title_judge(session)
    titles = [c.title for c in HeuristicDistiller().distill(session).cards]
    assert titles
    assert [t for t in titles if judge.contentless(t)] == []


@pytest.mark.parametrize("path, turn_id, expected", [
    ("decision-graph-store.json", "t0011", "Kuzu for the card graph, LanceDB for embeddings and full-text, no Neo4j."),
    ("prefs-pnpm.json", "t0003", "No npm please. I prefer pnpm over npm, always."),
    ("zh-team-prefs.json", "t0001", "以后回复我请用中文，但代码注释一律用英文。"),
    ("zh-team-prefs.json", "t0009", "那我们决定用 Redis Stream，等日均消息量超过 5000 万再考虑迁到 Kafka。"),
], ids=["kuzu", "pnpm", "zh-preference", "zh-decision"])
def test_demo_decisions_and_preferences_name_themselves(path: str, turn_id: str, expected: str) -> None:
    """The title is the decision or preference, its label ("We decided:", "我的偏好：") dropped."""
    session = parse_session((DEMO / path).read_bytes(), source_name=path)
    assert _title_of(session, turn_id) == expected


def test_a_decision_card_opens_with_the_decision_not_its_lead() -> None:
    session = parse_session((DEMO / "decision-graph-store.json").read_bytes(), source_name="decision-graph-store.json")
    card = next(c for c in HeuristicDistiller().distill(session).cards if c.turn_ids[0] == "t0011")
    assert card.type == "decision"
    assert card.content.startswith("Mei (20 February 2026): We decided: Kuzu for the card graph")


@pytest.mark.parametrize("lines, expected", [
    ([("Ana", "Good to hear. We decided: pnpm for the monorepo, npm only in CI images.")],
     "Pnpm for the monorepo, npm only in CI images."),
    ([("Ana", "决定：订单服务改用 Redis Stream。")], "订单服务改用 Redis Stream。"),
    ([("Ana", "我们决定用 pnpm。")], "我们决定用 pnpm。"),
    ([("Ana", "我更喜欢 pnpm，不要用 npm。")], "我更喜欢 pnpm，不要用 npm。"),
    ([("Ana", "Never npm here. I prefer pnpm for every package.")], "Never npm here. I prefer pnpm for every package."),
    ([("Ana", "No, I prefer tabs over spaces in Go files.")], "I prefer tabs over spaces in Go files."),
], ids=["label-and-lead", "zh-label", "zh-decision", "zh-preference", "negation-kept", "bare-no-dropped"])
def test_decision_and_preference_title_forms(lines: list[tuple[str, str]], expected: str) -> None:
    card = HeuristicDistiller().distill(_chat(*lines)).cards[0]
    assert card.type in {"decision", "preference"}
    assert card.title == expected
    assert "Good to hear" not in card.content


def _roles(*turns: tuple[str, str]) -> Session:
    """A session from (role, text) turns, as OpenClaw captures them (no speaker names)."""
    return Session(id="acks", turns=[Turn(id=f"t{i}", role=role, content=text) for i, (role, text) in enumerate(turns, 1)])


@pytest.mark.parametrize("ack", ["Noted.", "Stored for the runbook.", "STUB-REPLY-OK", "NO_REPLY",
                                 "Understood, I'll remember that.", "Saved to memory."])
def test_an_acknowledgement_is_no_card(ack: str) -> None:
    """Issue 33: the model's acknowledgements became cards, titles and the top topic."""
    cards = HeuristicDistiller().distill(_roles(("user", "The release train leaves every Tuesday at 10:00."),
                                                ("assistant", ack))).cards
    assert [c.turn_ids for c in cards] == [["t1"]]
    assert not {t.lower() for c in cards for t in [*c.tags, *c.entities]} & {"noted", "stub-reply-ok", "no_reply", "runbook"}


def test_a_card_that_opens_with_noted_is_titled_by_its_knowledge() -> None:
    """Issue 33: "Noted." (an entity to the extractor) titled a card holding a gotcha and a decision."""
    cards = HeuristicDistiller().distill(_roles(
        ("user", "Remember the staging rules."),
        ("assistant", "Noted. Gotcha: the staging DB resets every night, so don't keep test data there. "
                      "We decided to seed it from fixtures."))).cards
    card = next(c for c in cards if c.turn_ids == ["t2"])
    assert card.title == "Gotcha: the staging DB resets every night, so don't keep test data there."
    assert "Noted" not in card.content and "noted" not in card.tags
