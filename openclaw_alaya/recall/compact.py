"""What recall returns, without repeats (issue 18): a question/answer card carries the opening
of a reply that also has a card of its own, so when both are returned the later one spends the
caller's token budget on text the caller already has. A line of a card's content (one turn's
`Speaker: text`) that an earlier card of the same result already returned word for word is left
out; the card keeps its sources, and one that would be left with nothing is returned whole.

A card whose turns earlier cards all cite is skipped (recall/navigate.py), except when one of
them returned a reply only as its opening (`… ` where the ~300 characters were cut): the rest
of that reply lives only in the reply's own cards, so those give what was not returned yet,
a line that goes on from the opening as `Speaker: … rest`.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^[^:\n]{1,60}: ")
MIN_REPEAT = 20  # chars: a shorter line ("Thanks!") is cheap and too common to call a repeat


class Returned:
    """The text a recall has returned so far, and each next card's content without repeats."""

    def __init__(self) -> None:
        self.text = ""
        self.openings: list[str] = []  # replies returned only as their opening ("… " cut)
        self.cut_turns: set[tuple[str, str]] = set()  # (session, turn) of the cards that returned one

    def without_repeats(self, content: str) -> str:
        """`content` less its lines already returned, whole when that would leave nothing."""
        lines = content.split("\n")
        kept = [line for line in lines if not self._repeats(line)]
        return "\n".join(kept) if kept else content

    def continued(self, content: str) -> str | None:
        """What `content` adds to a reply returned only as its opening: the lines not returned
        yet, each that goes on from such an opening as `… ` and the rest; None when nothing."""
        kept = []
        for line in content.split("\n"):
            if self._repeats(line):
                continue
            head = _HEAD.match(line)
            lead, body = (head.group(0), line[head.end():]) if head else ("", line)
            kept.append(next((f"{lead}\u2026 {body[len(o):].strip()}" for o in self.openings if body.startswith(o)), line))
        return "\n".join(kept) if kept else None

    def record(self, content: str, turns: set[tuple[str, str]]) -> None:
        """`content` as returned for a card citing `turns`, and any reply it gave only the
        opening of."""
        self.text += "\n" + content
        for line in content.split("\n"):
            if line.endswith("\u2026"):
                opening = _body(line)
                if len(opening) >= MIN_REPEAT:
                    self.openings.append(opening)
                    self.cut_turns |= turns

    def _repeats(self, line: str) -> bool:
        body = _body(line)
        return len(body) >= MIN_REPEAT and body in self.text


def _body(line: str) -> str:
    """A content line's text without its `Speaker (date): ` head and any closing `…`."""
    return _HEAD.sub("", line).rstrip("\u2026").strip()
