"""Full-text search finds ordinary English words (issue 18): LanceDB's built-in stop list drops
"son", "dog", "city", "want" and "door" among others, so a card about them matched nothing by its
words; the index uses the project's own stop words instead, and an existing store's index is
rebuilt with them before it is next read."""

from __future__ import annotations

import json

import pytest
from helpers import session_json
from lancedb.index import FTS

from openclaw_alaya.store.embedded.index_meta import CARDS, FTS_VERSION, META, read_meta

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


def _old_index(memory) -> None:
    """The full-text index as stores made before issue 18 have it: LanceDB's built-in stop words,
    and no configuration version in index.json."""
    memory.index._table(CARDS).create_index(
        "text", config=FTS(base_tokenizer="icu", stem=True, remove_stop_words=True, ascii_folding=True), replace=True
    )
    meta = read_meta(memory.dirs.lancedb)
    del meta["fts"]
    (memory.dirs.lancedb / META).write_text(json.dumps(meta))


def test_an_old_index_is_read_as_it_is_and_rebuilt_by_an_upgrade(memory):
    memory.ingest(session_json("s-dog", [("user", TEXT)]))
    memory.distill()
    _old_index(memory)
    assert memory.index.text_search("son", 5) == []
    table = memory.index._table(CARDS)

    with memory.reading("test"):  # a read writes nothing: the old index answers as it is
        pass
    assert memory.index.text_search("son", 5) == []
    memory.upgrade()
    assert memory.index.text_search("son", 5)
    assert read_meta(memory.dirs.lancedb)["fts"] == FTS_VERSION
    upgraded = table.version

    memory.upgrade()  # current now: nothing rebuilt again
    assert table.version == upgraded
