"""Tag hierarchy (issue 31): a tag may be a path, `技术/前端/React` or `tech/frontend/react`, and
a tag names itself and everything filed under it.

- `within`: the filter of `recall --tag` and `cards list --tag`: a card tagged `技术/前端/React`
  is within `技术/前端` (and within `技术/前端/React`), never within `技术/后端` nor `技术/前`;
- `grade`: how closely a card's tags match the tags a recall asks about, graded as one design
  document gives (exact +10, parent +7, child +5, sibling +3), here on a 0..1 scale: the query
  naming the card's own tag, its parent (the card is filed under what was asked), its child (the
  card is more general than what was asked) or its sibling (same parent, another leaf).

Tags compare whatever the case and with surrounding slashes or spaces trimmed.
"""

from __future__ import annotations

from collections.abc import Iterable

EXACT, PARENT, CHILD, SIBLING = 1.0, 0.7, 0.5, 0.3
SEP = "/"


def path(tag: str) -> tuple[str, ...]:
    """A tag's parts, lower-cased: `技术/前端/React` → ("技术", "前端", "react")."""
    return tuple(p for p in (part.strip().lower() for part in tag.split(SEP)) if p)


def within(card_tags: Iterable[str], wanted: str) -> bool:
    """Whether a card tagged `card_tags` is filed under `wanted` (that tag or a child of it)."""
    want = path(wanted)
    return bool(want) and any(path(t)[: len(want)] == want for t in card_tags)


def relation(asked: tuple[str, ...], tag: tuple[str, ...]) -> float:
    """The graded match of one card tag to one asked tag (0: unrelated)."""
    if not asked or not tag:
        return 0.0
    if asked == tag:
        return EXACT
    if tag[: len(asked)] == asked:
        return PARENT  # the query names the card tag's parent (or an ancestor)
    if asked[: len(tag)] == tag:
        return CHILD  # the card's tag is more general than what was asked
    if len(asked) == len(tag) > 1 and asked[:-1] == tag[:-1]:
        return SIBLING
    return 0.0


def grade(card_tags: Iterable[str], asked: Iterable[tuple[str, ...]]) -> float:
    """The best match of any of the card's tags to any asked tag, 0..1."""
    asked = list(asked)
    if not asked:
        return 0.0
    return max((relation(a, path(t)) for t in card_tags for a in asked), default=0.0)


def asked_in(query: str | None, given: Iterable[str] = ()) -> list[tuple[str, ...]]:
    """The tags a recall asks about: those given (`--tag`) and the path-like words of the query
    (`tech/frontend` in "tech/frontend state library": a word with a slash between two parts)."""
    found = [path(t) for t in given]
    for word in (query or "").split():
        parts = path(word.strip(".,;:!?()[]\"'，。？！"))
        if len(parts) > 1 and SEP in word:
            found.append(parts)
    return [p for p in dict.fromkeys(found) if p]
