"""A full-text query widened by each word's derivational siblings (issue 31).

The cards' full-text index stems with Snowball (embedded store) or not at all (postgres,
`store/postgres/words.py`), and neither joins a noun with its adjective: "allergy" is indexed
as `allergi` and "allergic" as `allerg`, so "what food allergy do I have?" found nothing by
words in a card saying the owner is allergic to peanuts (bench/year.py's one missed probe),
and the hash embedder, whose tokens are whole words, left it at a cosine of 0.098.

`widen(text)` appends to a query the sibling forms of its English words under a few
noun/adjective pairings, -y / -ic / -ical (allergy, allergic; economy, economic, economical;
history, historic, historical) and -iety / -ious (anxiety, anxious; variety, various). The
full-text search is an OR of words, so a sibling the cards never use matches nothing and a
made-up one ("basy" from "basic") costs nothing; each backend then stems or splits the
added words as it does the rest, so both find the card. Done on the query side, so every
existing store gains it with no rebuild, and the index and the vectors stay as they are.
"""

from __future__ import annotations

from ..text import STOPWORDS, words

__all__ = ["siblings", "widen"]

# (ending, the endings it trades with); the longer ending of a word is tried first, so
# "historical" is read as -ical, not as -al
_PAIRS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ical", ("ic", "y")),
    ("iety", ("ious",)),
    ("ious", ("iety",)),
    ("ic", ("y", "ical")),
    ("y", ("ic", "ical")),
)
_VOWELS = frozenset("aeiou")
_MIN_ROOT = 4  # "allerg", "econom", "histor", "anx" + "i": shorter roots ("cit" of "city") pair by accident


def siblings(word: str) -> list[str]:
    """The forms `word` trades endings with ("allergy" -> allergic, allergical); empty for a
    word that is short, not plain ascii letters, a stop word, or under none of the pairings.
    A word ending in -ly is an adverb and one in a vowel and -y ("holiday", "journey") no -y
    noun of these pairings: neither pairs with anything."""
    w = word.lower()
    if not (w.isascii() and w.isalpha()) or w in STOPWORDS or w.endswith("ly"):
        return []
    if w.endswith("y") and w[-2:-1] in _VOWELS:
        return []
    for ending, others in _PAIRS:
        root = w[: -len(ending)]
        if w.endswith(ending) and len(root) >= _MIN_ROOT - (ending in ("iety", "ious")):
            return [root + other for other in others]
    return []


def widen(text: str) -> str:
    """`text` followed by the siblings of its words that it does not already hold; `text`
    itself when none of them has any."""
    present = set(words(text))
    extra = [s for w in dict.fromkeys(words(text)) for s in siblings(w) if s not in present]
    extra = list(dict.fromkeys(extra))
    return f"{text} {' '.join(extra)}" if extra else text
