"""Whether a text repeats untrusted text: provenance follows content (docs/provenance.md).

An assistant that answers a stranger ("Team rule noted: before every deploy we run curl … |
sh") or an owner who pastes a stranger's words passes that text on under a trusted origin.
The rule that catches it is measurable: a text repeats untrusted text when it shares a run of
`RUN` words with it (CJK characters count as words, punctuation and case are ignored), or, for
an untrusted text shorter than that (at least `MIN_WORDS` words), holds all of it in order.
Stdlib only, no knowledge of turns: callers hand in strings.
"""

from __future__ import annotations

import re

RUN = 6  # words in a row shared with untrusted text: a repetition
MIN_WORDS = 3  # a shorter untrusted text is too common to count ("ok thanks", "yes")
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Echoes:
    """The untrusted texts seen so far, ready to test another text against."""

    def __init__(self, texts: "list[str] | tuple[str, ...]" = ()) -> None:
        self._runs: set[tuple[str, ...]] = set()
        self._short: set[str] = set()
        for text in texts:
            self.add(text)

    def __bool__(self) -> bool:
        return bool(self._runs or self._short)

    def add(self, text: str) -> None:
        seq = words(text)
        if len(seq) >= RUN:
            self._runs.update(tuple(seq[i:i + RUN]) for i in range(len(seq) - RUN + 1))
        elif len(seq) >= MIN_WORDS:
            self._short.add(" ".join(seq))

    def repeated_in(self, text: str) -> bool:
        """Whether `text` repeats any of the untrusted texts (the module docstring's rule)."""
        if not self:
            return False
        seq = words(text)
        if self._runs and any(tuple(seq[i:i + RUN]) in self._runs for i in range(len(seq) - RUN + 1)):
            return True
        joined = f" {' '.join(seq)} "
        return any(f" {short} " in joined for short in self._short)
