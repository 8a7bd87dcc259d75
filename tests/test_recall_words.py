"""Full-text search finds ordinary English words (issue 18): LanceDB's built-in stop list drops
"son", "dog", "city", "want" and "door" among others, so a card about them matched nothing by its
words; the index uses the project's own stop words instead."""

from __future__ import annotations

import pytest
from helpers import session_json

TEXT = "My son wants a dog, so we drove to the city shelter and knocked on every door."


@pytest.mark.parametrize("word", ["son", "dog", "city", "door"])
def test_common_words_are_searchable(memory, word):
    memory.ingest(session_json("s-dog", [("user", TEXT)]))
    memory.distill()
    assert memory.index.text_search(word, 5), word


def test_stop_words_still_match_nothing(memory):
    memory.ingest(session_json("s-dog", [("user", TEXT)]))
    memory.distill()
    assert memory.index.text_search("the so we", 5) == []
