"""Question intent in recall (issue 18) and the entity and opinion shapes (issue 16): the cards
that answer a kind of question rank higher, as a bounded boost and never a filter; "tell me
about Peter" and "what does Peter prefer?" bring Peter's cards and opinions up, and a question
that only mentions a name ranks as it did, except that what the person it names said comes
before what others said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_alaya.config import IntentWeights, RankWeights, RecallConfig
from openclaw_alaya.embedding import HashEmbedder
from openclaw_alaya.maintenance.workspace import sync
from openclaw_alaya.models import Card
from openclaw_alaya.recall.intent import classify, last_speaker, speakers, without_names
from openclaw_alaya.recall.navigate import Recaller

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
OFF = IntentWeights(answer=0, near=0, entity=0, speaker=0)


@pytest.mark.parametrize(("question", "name", "entity"), [
    ("which package manager?", "choice", None),
    ("which graph database did we choose", "decision", None),
    ("What do we prefer for indentation?", "preference", None),
    ("How do I upgrade Kuzu?", "how-to", None),
    ("When did we ship 2.3?", "time", None),
    ("Who fixed the pool leak?", "person", None),
    ("tell me about Peter", "entity", "Peter"),
    ("Who is Peter Ng?", "entity", "Peter Ng"),
    ("what do you know about Kuzu", "entity", "Kuzu"),
    ("what does Peter prefer?", "opinion", "Peter"),
    ("what do we prefer?", "preference", None),
    ("我们用哪个包管理器？", "choice", None),
    ("我们决定用什么图数据库", "decision", None),
    ("他喜欢什么编辑器", "preference", None),
    ("怎么升级 Kuzu", "how-to", None),
    ("上线是什么时候", "time", None),
    ("介绍一下张三", "entity", "张三"),
    ("张三是谁？", "entity", "张三"),
    ("张三喜欢什么？", "opinion", "张三"),
])
def test_questions_are_classified_in_english_and_chinese(question, name, entity):
    intent = classify(question)
    assert intent is not None and (intent.name, intent.entity) == (name, entity)


@pytest.mark.parametrize("question", [
    "Who is Melanie a fan of in terms of modern music?",  # a name in a longer question: no entity shape
    "Who is Peter's manager?",
])
def test_only_explicit_forms_are_entity_questions(question):
    assert classify(question).name == "person"


def test_a_question_without_intent():
    assert classify("billing service database connections") is None
    assert classify("Which one is faster?") is None  # "which … is" compares, it asks for no choice


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from openclaw_alaya import Alaya

    memory = Alaya(tmp_path_factory.mktemp("intent") / "data")
    memory.init()
    for session in sorted(DEMO.iterdir()):
        memory.ingest(session)
    memory.distill()
    return memory


@pytest.fixture
def intent_off(demo):
    """The demo store with every intent weight at 0: ranking as before the intent existed."""
    kept = demo.config.recall.intent
    demo.config.recall.intent = OFF
    yield demo
    demo.config.recall.intent = kept


@pytest.mark.parametrize(("question", "answer_type", "answer_words"), [
    ("which package manager?", "preference", "npm"),
    ("which graph database did we choose", "decision", "Kuzu"),
])
def test_the_demo_questions_rank_the_answering_card_first(demo, question, answer_type, answer_words):
    first = demo.recall(question).nodes[0]
    assert first.type == answer_type and answer_words in first.title + first.content


def test_without_the_intent_the_package_manager_question_ranks_another_card_first(intent_off):
    """The intent is what lifts the pnpm preference over the cards that say "package" (the
    graph-database question's decision card now wins on words and session context alone)."""
    assert intent_off.recall("which package manager?").nodes[0].type not in ("preference", "decision")


def test_a_boost_reorders_and_never_filters(demo, intent_off):
    question = "which package manager?"
    before = {n.card_id for n in intent_off.recall(question, top_k=50).nodes}
    demo.config.recall.intent = IntentWeights()
    after = {n.card_id for n in demo.recall(question, top_k=50).nodes}
    assert after == before
    assert all(0 <= n.score <= 1 for n in demo.recall(question, top_k=50).nodes)


PETER = """# 2025-11-24

## Retain
- W @Maria: Maria will tell Peter about the offsite in Lisbon next month.
- W @Maria: Maria asked Peter about the budget for the offsite and the hotel.
- W @Peter: Works on the payments team, based in Berlin.
- B @Peter: I paired with him on the refund service rewrite.
- O(c=0.7) @Peter: Prefers small pull requests over big ones.
- O(c=0.9) @Maria: Prefers tabs over spaces, and says so about every pull request.
"""


@pytest.fixture
def peter(memory, tmp_path):
    root = tmp_path / "workspace"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2025-11-24.md").write_text(PETER, encoding="utf-8")
    sync(memory, root, agent_id="main")
    return memory


def _peters(nodes) -> list[bool]:
    return ["Peter" in n.entities for n in nodes]


def test_tell_me_about_an_entity_brings_its_cards_first(peter):
    nodes = peter.recall("tell me about Peter", scope="main", top_k=3).nodes
    assert _peters(nodes) == [True, True, True]
    peter.config.recall.intent = OFF  # words alone: the cards that say "tell … about Peter" come first
    assert peter.recall("tell me about Peter", scope="main", top_k=1).nodes[0].entities != ["Peter"]


def test_a_question_that_only_mentions_the_entity_ranks_as_before(peter):
    question = "the offsite budget Peter asked about"
    with_intent = [n.card_id for n in peter.recall(question, scope="main").nodes]
    peter.config.recall.intent = OFF
    assert [n.card_id for n in peter.recall(question, scope="main").nodes] == with_intent


def test_what_does_an_entity_prefer_gives_its_opinions_with_confidence_and_evidence(peter):
    nodes = peter.recall("what does Peter prefer?", scope="main", top_k=4).nodes
    first = nodes[0]
    assert first.kind == "opinion" and first.entities == ["Peter"] and first.confidence == 0.7
    assert first.source == "memory/2025-11-24.md#L8"  # the evidence: the line it was written on
    assert sum(_peters(nodes)) == 3  # and what else is known about Peter, above what Maria was told


def test_who_a_question_asks_about_and_who_said_a_card():
    assert speakers("What did Melanie's kids paint with Jon?") == {"melanie"}  # Jon is who she painted with
    assert speakers("What did Jon say about Gina's progress?") == {"jon"}
    assert speakers("How do Jon and Gina both like to destress?") == {"jon", "gina"}
    assert speakers("What LGBTQ+ events has Caroline joined?") == {"caroline"}  # an acronym is no name
    assert speakers("When did I move?") == frozenset()  # the opening word and "I" name no one
    card = Card(id="c", title="t", content="Caroline (8 May 2023): What did you paint?\nMelanie: A sunset.",
                created_at="x", updated_at="x")
    assert last_speaker(card) == "melanie"
    for content in ("Plain text, said by no one in particular.", "Bob is not a careful reviewer: he approved it."):
        assert last_speaker(card.model_copy(update={"content": content})) is None


HARBOUR = [
    ("Alice", "Bob and I spent Saturday at the harbour; I painted the old lighthouse by the harbour wall."),
    ("Bob", "I painted the lighthouse too, from the beach, in watercolours."),
]


def test_what_the_named_person_said_comes_first(memory):
    turns = [{"id": f"t{i}", "role": "user", "name": name, "content": text} for i, (name, text) in enumerate(HARBOUR, 1)]
    memory.ingest(json.dumps({"session_id": "s-art", "started_at": "2026-03-01T10:00:00+00:00", "turns": turns}).encode())
    memory.ingest(json.dumps({"session_id": "s-work", "started_at": "2026-03-02T10:00:00+00:00", "turns": [
        {"id": "t1", "role": "user", "content": "The quarterly budget review moves to Thursday."}]}).encode())
    memory.distill()
    question = "What did Bob paint at the harbour?"
    assert memory.recall(question, top_k=1).nodes[0].content.startswith("Bob")
    # a name further on is who it is about, not who said it
    assert memory.recall("What did Bob say about Alice's lighthouse painting?", top_k=1).nodes[0].content.startswith("Bob")
    memory.config.recall.intent = IntentWeights(speaker=0)  # words alone: Alice's card says "harbour" twice
    memory.config.recall.weights = RankWeights(recency=0, importance=0, access=0, tag=0)  # the two recalls above used Bob's
    assert memory.recall(question, top_k=1).nodes[0].content.startswith("Alice")


def test_the_people_a_question_names_weigh_less_in_its_vector():
    """Their names head nearly every card of a conversation: at full weight they pull the
    vector search toward cards that say little but a name."""
    question = "What did Melanie make in her pottery class?"
    assert without_names(question) == "What did make in her pottery class?"
    assert without_names("who is Tomás?") is None  # mostly names: the question keeps them
    assert without_names("which package manager do we use?") is None

    embedder = HashEmbedder()
    pleasantry, answer = embedder.embed(["Glad it helped, Melanie! Thanks, Melanie.", "I made a bowl in pottery class."])

    def closeness(names_in_vector: float) -> tuple[float, float]:
        vector = Recaller(RecallConfig(names_in_vector=names_in_vector), embedder)._query_vector(question)
        return float(vector @ pleasantry), float(vector @ answer)

    (pleasant_before, answer_before), (pleasant_after, answer_after) = closeness(1.0), closeness(0.4)
    assert pleasant_after < pleasant_before and answer_after > answer_before
    plain = Recaller(RecallConfig(), embedder)._query_vector("who is Tomás?")
    assert (plain == embedder.embed(["who is Tomás?"])[0]).all()
