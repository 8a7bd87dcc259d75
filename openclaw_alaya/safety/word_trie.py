"""Word lists as regex tries: sre tries the branches of an alternation one after the other at
each position, so a list of 80 words costs 80 comparisons where its trie costs a handful."""

from __future__ import annotations

import re

SEPARATOR = "~"  # with `separated`: an optional space, underscore or dash (`api~key`: `api key`, `api_key`, `apikey`)


def trie(words: list[str], *, separated: bool = False, not_after: str = "") -> str:
    """An alternation matching exactly the words, as a trie: one branch per first character,
    and so on down; the empty branch (a word ends here) sorts first, so the shortest word wins.

    `not_after` (a character class) is what may not stand before a word. It is checked after
    the first character (`(?<![…].)`): an assertion before it would stop sre from skipping the
    positions where no word starts."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict, top: bool = False) -> str:
        alts = [(r"[ _\-]?" if separated and c == SEPARATOR else re.escape(c))
                + (f"(?<!{not_after}.)" if top and not_after else "") + emit(sub) if c else ""
                for c, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(tree, top=True)
