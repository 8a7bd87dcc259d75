"""What recall returns, without repeats (issue 18): a question/answer card carries the opening
of a reply that also has a card of its own, so when both are returned the later one spends the
caller's token budget on text the caller already has. A line of a card's content (one turn's
`Speaker: text`) that an earlier card of the same result already returned word for word is left
out (a line cut short, `…`, when its opening was), and one whose opening an earlier card
returned cut short keeps only the rest; the card keeps its sources, and one that would be left
with nothing is returned whole.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^[^:\n]{1,60}: ")
CUT = "…"
MIN_REPEAT = 20  # chars: a shorter line ("Thanks!") is cheap and too common to call a repeat


class Returned:
    """The text a recall has returned so far, and each next card's content without repeats."""

    def __init__(self) -> None:
        self.text = ""
        self.openings: list[str] = []  # bodies of the lines returned cut short, less the `…`

    def without_repeats(self, content: str) -> str:
        """`content` less its lines already returned and the openings already returned,
        whole when that would leave nothing."""
        kept = [self._rest(line) for line in content.split("\n") if not self._repeats(line)]
        return "\n".join(kept) if kept else content

    def record(self, content: str) -> None:
        self.text += "\n" + content
        self.openings += [body for line in content.split("\n") if CUT in line and len(body := _body(line)) >= MIN_REPEAT]

    def _repeats(self, line: str) -> bool:
        body = _body(line)
        return len(body) >= MIN_REPEAT and body in self.text

    def _rest(self, line: str) -> str:
        """`line` with an opening already returned replaced by `…`."""
        head = _HEAD.match(line)
        text = line[head.end():] if head else line
        opening = max((o for o in self.openings if text.startswith(o)), key=len, default="")
        if not opening:
            return line
        return (head.group(0) if head else "") + CUT + " " + text[len(opening):].lstrip(" " + CUT)


def _body(line: str) -> str:
    """A line's text without its `Speaker: ` head, up to the mark where it was cut short (what
    follows the mark is a note on the whole turn, `[last year = 2022]`)."""
    return _HEAD.sub("", line).split(CUT, 1)[0].strip()
