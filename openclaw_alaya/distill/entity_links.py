"""Relations between entities, and their hierarchy, from the cards' own words (issue 35).

Cards only linked to entities (MENTIONS); nothing said that PgBouncer is a connection pooler or
that React sits under 前端 under 技术. These heuristics, run on every distilled card whatever the
distiller (plan.py), state it as entity → entity edges:

- "PgBouncer is a connection pooler for Postgres": PgBouncer IS_A connection pooler, and
  DEPENDS_ON Postgres when the thing after "for" is one of the card's entities;
  "React 是一个前端框架": React IS_A 前端框架;
- "X is part of Y", "X belongs to Y", "X 属于 Y", "X 是 Y 的一部分": X PART_OF Y;
- a tag path ("技术/前端/React", the seed's hierarchical tags): React PART_OF 前端 PART_OF 技术.

The subject must be an entity of the card (the distiller found it a name), so "this is a
problem" states nothing; the category is a short noun phrase, kept in the card's casing.
"""

from __future__ import annotations

import re

from ..models import CONCEPT_TAG, Card

# a hierarchy edge: the child first (the seed's entity `parent_id`)
HIERARCHY = ("IS_A", "PART_OF")
_MAX_CATEGORY_WORDS = 4
_MAX_SENTENCE = 240
_SENTENCE = re.compile(r"[^.!?。！？;；\n]+")
_EN_IS_A = re.compile(r"^\s*(?P<x>.+?)\s+(?:is|are)\s+(?:a|an)\s+(?P<y>[A-Za-z][\w+#-]*(?:\s+[\w+#-]+)*?)"
                      r"(?:\s+(?P<how>for|with|in|on|that|which|used|to)\b(?P<rest>[^,(]*).*)?\s*[,:]?\s*$", re.I)
_EN_PART_OF = re.compile(r"^\s*(?P<x>.+?)\s+(?:is|are)\s+(?:a\s+)?(?:part|component|member)\s+of\s+(?:the\s+)?"
                         r"(?P<y>[\w .+#-]+?)\s*$|^\s*(?P<x2>.+?)\s+belongs?\s+to\s+(?:the\s+)?(?P<y2>[\w .+#-]+?)\s*$", re.I)
_ZH_IS_A = re.compile(r"^\s*(?P<x>.+?)\s*是(?:一个|一种|一款|个|种)(?P<y>[\u4e00-\u9fffA-Za-z0-9 ]{1,12}?)\s*$")
_ZH_PART_OF = re.compile(r"^\s*(?P<x>.+?)\s*(?:属于|是)\s*(?P<y>[\u4e00-\u9fffA-Za-z0-9 ]{1,12}?)\s*(?:的一部分|的组成部分)?\s*$")
_ZH_PART_MARK = re.compile(r"属于|的一部分|的组成部分")
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.I)


def entity_links(card: Card) -> list[tuple[str, str, str]]:
    """(entity, relation, entity) stated by the card's text and tag paths, each once."""
    names = {e.casefold(): e for e in card.entities}
    found: dict[tuple[str, str, str], None] = {}
    for sentence in _SENTENCE.findall(f"{card.title}. {card.content}"):
        if len(sentence) > _MAX_SENTENCE:
            continue  # a definition is short; and the patterns stay cheap on any input
        for link in _stated(sentence, names):
            found[link] = None
    for tag in card.tags:
        if tag.startswith(CONCEPT_TAG):
            continue  # a lexicon's concept (distill/concepts.py), not a hierarchy the owner filed under
        parts = [p.strip() for p in tag.split("/") if p.strip()]
        found.update(dict.fromkeys((child, "PART_OF", parent) for parent, child in zip(parts, parts[1:])))
    return [link for link in found if link[0].casefold() != link[2].casefold()]


def _stated(sentence: str, names: dict[str, str]) -> list[tuple[str, str, str]]:
    def entity(text: str | None) -> str | None:
        return names.get(_ARTICLES.sub("", (text or "").strip()).casefold()) if text else None

    part = _EN_PART_OF.match(sentence)
    if part:
        x, y = entity(part["x"] or part["x2"]), _category(part["y"] or part["y2"], names)
        return [(x, "PART_OF", y)] if x and y else []
    if _ZH_PART_MARK.search(sentence):
        zh_part = _ZH_PART_OF.match(sentence)
        x = entity(zh_part["x"]) if zh_part else None
        y = _category(zh_part["y"], names) if zh_part else None
        return [(x, "PART_OF", y)] if x and y else []
    for pattern in (_EN_IS_A, _ZH_IS_A):
        match = pattern.match(sentence)
        x = entity(match["x"]) if match else None
        y = _category(match["y"], names) if match else None
        if x and y:
            found = match.groupdict()  # "… for Postgres": what it serves, when that is an entity
            target = entity(found.get("rest")) if found.get("how") in ("for", "with") else None
            return [(x, "IS_A", y)] + ([(x, "DEPENDS_ON", target)] if target else [])
    return []


def _category(text: str, names: dict[str, str]) -> str | None:
    """A short noun phrase as an entity name (an entity of the card keeps its spelling)."""
    phrase = " ".join(_ARTICLES.sub("", text.strip()).split())
    if not phrase or len(phrase.split()) > _MAX_CATEGORY_WORDS:
        return None
    return names.get(phrase.casefold(), phrase)
