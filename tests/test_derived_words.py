"""Derivational siblings in full-text recall (issue 31): a question asked with the noun finds a
card that says it with the adjective, and the other way round, on a real store (Kuzu and
LanceDB on disk, the default hash embedder). Main missed bench/year.py's "what food allergy do
I have?" against "I am allergic to peanuts": Snowball indexes allergy as `allergi` and allergic
as `allerg`, and the hash vectors of the two texts are under the similarity floor."""

from __future__ import annotations

import pytest

from openclaw_alaya.recall.derived import siblings, widen

NOTES = [
    "The strategic plan is to ship the relay first.",
    "Nora is anxious about the move to Lisbon.",
    "Rates look economical for the new cluster.",
    "Marta studied biological sciences before joining.",
    "We keep the deploy scripts in the infra repository.",
    "Lunch with the platform team is on Fridays at noon.",
    "The billing service runs on three replicas in production.",
]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from openclaw_alaya import Alaya

    memory = Alaya(tmp_path_factory.mktemp("derived") / "data")
    memory.init()
    for note in NOTES:
        memory.remember(note)
    return memory


# each question shares only the derived word with its answer, whose hash vector is under the
# similarity floor (0.07-0.09 against 0.1), so only words can find it
@pytest.mark.parametrize("question, answer", [
    ("which strategy did we choose?", NOTES[0]),
    ("what is her anxiety about?", NOTES[1]),
    ("what did we say about the economy?", NOTES[2]),
    ("who has a biology background?", NOTES[3]),
])
def test_a_derivational_sibling_is_found_first(memory, question, answer):
    nodes = memory.recall(question, top_k=3).nodes
    assert nodes and nodes[0].content.startswith(answer[:30]), [n.content for n in nodes]


def test_siblings_pair_nouns_and_adjectives_only():
    assert siblings("allergy") == ["allergic", "allergical"]
    assert siblings("historical") == ["historic", "history"]
    assert siblings("anxious") == ["anxiety"]
    # adverbs, vowel + y, short roots and stop words pair with nothing
    assert [siblings(w) for w in ("daily", "holiday", "city", "basic", "any")] == [[], [], [], [], []]


def test_widen_adds_only_missing_siblings():
    assert widen("allergy or allergic?") == "allergy or allergic? allergical"
    assert widen("deploy scripts") == "deploy scripts"
