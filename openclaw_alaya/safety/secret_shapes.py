"""Secrets that a pattern alone cannot tell from ordinary text: card numbers and seed phrases.

A run of 13–19 digits is a card number only when its check digit is right (Luhn), it starts
like one (2221–2720, 3, 4, 5, 6) and its grouping is a card's (fours, or 4-6-5 / 4-6-4).
A run of words is a wallet seed phrase when at least 12 of them in a row are on the BIP39
English list (`bip39-english.txt` here, 2048 words; seeds are 12, 15, 18, 21 or 24 of
them, numbered or not); ordinary prose breaks such runs with words that are not on it.
Both searches are linear: each candidate run is found by a pattern whose repetitions cannot
overlap, then checked in code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

SEED_MIN_WORDS = 12

# 13–19 digits, single spaces or dashes between them, not part of a longer number or word.
# (What may not stand before the first digit is checked after it, `(?<!….)`: a leading
# assertion would stop sre from skipping to the next digit.)
CARD_CANDIDATE = re.compile(
    r"\d(?<![A-Za-z0-9_.\-]\d)(?<!\d \d)[ \-]?(?:\d[ \-]?){11,17}\d(?![A-Za-z0-9_\-]|[ \-]?\d|\.\d)"
)
# A run of short words (with optional "1." / "2)" numbering between them), at least 12 long.
_WORD_RUN = re.compile(r"(?<![A-Za-z])(?:(?:\d{1,2}[.):]?[ \t]*)?[A-Za-z]{3,8}(?![A-Za-z])[\s,]*){12,}")
_WORD = re.compile(r"[A-Za-z]+")
_CARD_GROUPS = {(4, 6, 5), (4, 6, 4)}


@lru_cache(maxsize=1)
def bip39_words() -> frozenset[str]:
    """The BIP39 English word list (read once, on first use)."""
    path = Path(__file__).resolve().parent / "bip39-english.txt"
    return frozenset(path.read_text(encoding="ascii").split())


def luhn_ok(digits: str) -> bool:
    """The Luhn check digit of a card number is right."""
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def is_card_number(candidate: str) -> bool:
    """A `CARD_CANDIDATE` match that is a card number: length, issuer prefix, grouping, Luhn."""
    digits = re.sub(r"[ \-]", "", candidate)
    if not 13 <= len(digits) <= 19:
        return False
    if not (digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720):
        return False
    separators = set(re.findall(r"[ \-]", candidate))
    if len(separators) > 1:
        return False
    if separators:
        groups = tuple(len(g) for g in re.split(r"[ \-]", candidate))
        fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
        if not (fours or groups in _CARD_GROUPS):
            return False
    return luhn_ok(digits)


def seed_phrase_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every run of at least 12 consecutive BIP39 words in the text.

    The words of a run are looked up all at once (`findall`, a set test each) and their
    positions read only where 12 in a row are on the list: reading a match object per word
    cost more than every other pattern on word-dense text (issue 30's throughput)."""
    words = bip39_words()
    for run in _WORD_RUN.finditer(text):
        on_list = [word in words for word in _WORD.findall(run.group(0).lower())]
        if sum(on_list) < SEED_MIN_WORDS:
            continue
        found = list(_WORD.finditer(run.group(0)))
        start = 0
        for i, listed in enumerate([*on_list, False]):
            if listed:
                continue
            if i - start >= SEED_MIN_WORDS:
                yield run.start() + found[start].start(), run.start() + found[i - 1].end()
            start = i + 1
