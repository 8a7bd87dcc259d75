"""What recall returns, without repeats (issue 18): a question/answer card carries the opening
of a reply that also has a card of its own, so when both are returned the later one spends the
caller's token budget on text the caller already has. A line of a card's content (one turn's
`Speaker: text`) that an earlier card of the same result already returned word for word is left
out; the card keeps its sources, and one that would be left with nothing is returned whole.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^[^:\n]{1,60}: ")
MIN_REPEAT = 20  # chars: a shorter line ("Thanks!") is cheap and too common to call a repeat


class Returned:
    """The text a recall has returned so far, and each next card's content without repeats."""

    def __init__(self) -> None:
        self.text = ""

    def without_repeats(self, content: str) -> str:
        """`content` less its lines already returned, whole when that would leave nothing."""
        lines = content.split("\n")
        kept = [line for line in lines if not self._repeats(line)]
        return "\n".join(kept) if kept else content

    def record(self, content: str) -> None:
        self.text += "\n" + content

    def _repeats(self, line: str) -> bool:
        body = _HEAD.sub("", line).rstrip("…").strip()
        return len(body) >= MIN_REPEAT and body in self.text
