"""Bridges in the graph (issue 32): a message telling of one's situation reaches the old card of
the state, goal or cause it follows from, though they share no word and, for the hash embedder,
no vector. The distiller files each card under the concepts its words name (`about/…` tags,
distill/concepts.py) and marks the cards that state a stance; recall searches a situation's
concepts against those tags. Made-up conversations, English and Chinese."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.distill.concepts import concept_tags, concepts
from openclaw_alaya.models import Card, Session, Turn, index_row, index_text
from openclaw_alaya.recall.intent import classify, situation

# (cue, what the assistant answered, the message weeks later, the other sessions)
ENGLISH = (
    "Ever since I started refusing extra weekend shifts, I feel far less anxious.",
    "Guarding your free time clearly pays off.",
    "My boss dumped three new projects on my desk and I'm totally stressed.",
    [
        ("I baked sourdough bread with rye flour on Sunday.", "Rye gives it a lovely crust."),
        ("We booked flights to Lisbon for the spring holiday.", "Lisbon is lovely in April."),
        ("The dog needs his vaccination at the vet on Friday.", "Friday morning slots fill quickly."),
        ("I set up the new laptop with a tiling window manager.", "Tiling keeps windows tidy."),
        ("My tomatoes finally turned red in the garden.", "Homegrown tomatoes taste best."),
        ("We watched an old western film last night.", "Westerns have great landscapes."),
        ("I repainted the bathroom walls a pale green.", "Pale green brightens a small room."),
        ("The football match went to penalties yesterday.", "Penalties are nerve-wracking to watch."),
    ],
)
CHINESE = (
    "自从我开始拒绝周末加班，就没那么焦虑了。",
    "守住休息时间很值得。",
    "经理又给我塞了三个新项目，我快崩溃了。",
    [
        ("周日我用黑麦粉烤了面包。", "黑麦面包的皮很香。"),
        ("我们订了春假去里斯本的机票。", "四月的里斯本很美。"),
        ("狗周五要去打疫苗。", "周五上午的号很抢手。"),
        ("我给新电脑装了平铺式窗口管理器。", "平铺窗口很整齐。"),
        ("花园里的番茄终于红了。", "自己种的番茄最好吃。"),
        ("昨晚我们看了一部老西部片。", "西部片的风景很壮观。"),
    ],
)


def _memory(tmp_path, cue: str, answer: str, others: list[tuple[str, str]]) -> Alaya:
    memory = Alaya(tmp_path / "data", config=Config())
    memory.init()
    sessions = [("cue", cue, answer), *((f"s{i}", said, reply) for i, (said, reply) in enumerate(others))]
    for day, (sid, said, reply) in enumerate(sessions, 1):
        memory.ingest(Session(id=sid, started_at=f"2026-01-{day:02d}T10:00:00", turns=[
            Turn(id=f"{sid}-1", role="user", name="Alex", content=said),
            Turn(id=f"{sid}-2", role="assistant", content=reply)]))
    memory.distill()
    return memory


@pytest.mark.parametrize("case", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_a_situation_reaches_the_state_it_follows_from_without_a_shared_word(tmp_path, case):
    cue, answer, later, others = case
    memory = _memory(tmp_path, cue, answer, others)
    nodes = memory.recall(later, top_k=5, now=datetime(2026, 3, 1, tzinfo=timezone.utc)).nodes
    cited = [{t for s in n.sources for t in s.turn_ids} for n in nodes]
    assert "cue-1" in cited[0], [n.content for n in nodes]


def test_cards_are_filed_under_their_concepts_and_stance():
    english = concept_tags("Alex (3 May 2026): Ever since I started refusing extra shifts, I feel far less anxious.")
    assert "about/nervousness" in english and "about/stance" in english
    chinese = concept_tags("最近工作压力很大，晚上总是失眠")
    assert {"about/nervousness", "about/sleep", "about/stance"} <= set(chinese)
    # what the card says of itself, not what someone said, files it under nothing
    assert concept_tags("Alex (3 May 2026): ok [shared a photo: a crowd of people at a concert]") == []
    # a word in many categories counts less than one in few: "stress" names nervousness first
    assert concepts("so much stress", 1) == ["nervousness"]


def test_a_stance_card_s_concepts_are_words_of_its_full_text_row_and_no_part_of_its_vector():
    stance = Card(id="c", title="t", content="x", tags=["fact", "about/nervousness", "about/stance"],
                  created_at="", updated_at="")
    assert {"about_nervousness", "about_stance"} <= set(index_row(stance)["text"].split())
    assert "nervousness" not in index_text(stance)  # what the embedder embeds
    # a card stating no stance keeps its row as it was: a situation is searched for stances alone
    plain = stance.model_copy(update={"tags": ["fact", "about/nervousness"]})
    assert index_row(plain)["text"] == index_text(plain)


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm totally overwhelmed with the new project.", True),
    ("我最近总是睡不好", True),
    ("What did I say about the trip?", False),
    ("billing service database connections", False),  # nobody's situation
    ("Did Melanie go camping?", False),
])
def test_a_situation_is_a_first_person_statement(text, expected):
    assert situation(text) is expected
    assert (getattr(classify(text), "name", None) == "situation") is expected
