"""When a card title says nothing, and what to put in its place.

A title is *contentless* when it has no anchor (a digit, or an entity that is not a speaker's
name: a technology, a path, a capitalised name, a quoted or ASCII term in Chinese text) and
fewer than two content words. Content words are English words of three letters or more that
are not stopwords, fillers, speaker names or vague counting words ("two", "things"); Chinese
text counts one word per two characters that are not particles or pronouns. So "Let's go with
it." (0), "Good to hear." (1: hear), "Two things stack up here." (1: stack) and "那就这么定了。"
are contentless, while "No npm please." (npm), "Tabs are evil." (2) and "周五不要上线。" are not.

The replacement is the card's first sentence that is not contentless, else the first such
sentence of the turn the card answers. The first rather than the wordiest: speakers lead with
their topic, and on LoCoMo dev the wordiest (often a photo caption) cost evidence recall.
"""

from __future__ import annotations

import re

from .cues import FILLER_WORDS, NEGATION_CJK_RE, NEGATION_WORDS, STOPWORDS, TITLE_VAGUE_WORDS
from .entities import CJK_RE, extract_entities

_ASCII_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_CJK_FILLER_CHARS = frozenset("的了吗呢吧啊呀哦嗯哈好是对我你他她它们这那就也都很太真")
_DIGIT_RE = re.compile(r"\d")
MIN_CONTENT_WORDS = 2


def content_words(text: str, skip: set[str] | frozenset[str]) -> int:
    """How many words of ``text`` carry meaning: the test for "says something" without a tagger."""
    n = 0
    for m in _ASCII_WORD_RE.finditer(text):
        w = m.group(0).replace("\u2019", "'").lower().strip("'-")
        if len(w) >= 3 and w not in STOPWORDS and w not in FILLER_WORDS and w not in skip and "'" not in w:
            n += 1
    if CJK_RE.search(text):
        n += sum(1 for c in CJK_RE.findall(text) if c not in _CJK_FILLER_CHARS) // 2
    return n


class TitleJudge:
    """Scores titles for one session, whose speaker names are not what a card is about."""

    def __init__(self, name_keys: set[str], known_caps: dict[str, None]) -> None:
        self.skip = set(name_keys) | TITLE_VAGUE_WORDS
        self.name_keys = name_keys
        self.known_caps = known_caps

    def anchors(self, title: str) -> int:
        """Digits and non-speaker entities: the surest sign a title names its subject."""
        ents = [e for e in extract_entities(title, self.known_caps) if e.lower() not in self.name_keys]
        return len(ents) + (1 if _DIGIT_RE.search(title) else 0)

    def contentless(self, title: str) -> bool:
        """No anchor and fewer than two content words: "Let's go with it.", "Good to hear."."""
        return self.anchors(title) == 0 and content_words(title, self.skip) < MIN_CONTENT_WORDS

    def first(self, titles: list[str]) -> str | None:
        """The earliest title that is not contentless, or None: a speaker's topic comes first."""
        return next((t for t in titles if t and not self.contentless(t)), None)


def negates(title: str) -> bool:
    """Whether ``title`` says no, so that replacing it could flip what the card means."""
    words = re.findall(r"[a-z']+", title.lower().replace("\u2019", "'"))
    return any(w in NEGATION_WORDS or w.endswith("n't") for w in words) or bool(NEGATION_CJK_RE.search(title))
