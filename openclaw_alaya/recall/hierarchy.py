"""The entities under a concept in the entity hierarchy (issue 35): asking for "connection
pooler" or 前端 also finds the cards about PgBouncer or React, stated as IS_A / PART_OF of them
(distill/entity_links.py), a level or two down."""

from __future__ import annotations

from typing import Protocol

from ..distill.entity_links import HIERARCHY

LEVELS = 2  # 技术 → 前端 → React: a tag path's depth in the seed's examples


class _Links(Protocol):
    def entity_links(self, names: list[str]) -> list[tuple[str, str, str]]: ...


def below(graph: _Links, names: list[str], levels: int = LEVELS) -> list[str]:
    """Entity names whose IS_A / PART_OF chain reaches one of `names` within `levels` steps,
    nearest first (the names themselves left out)."""
    seen = {n.lower() for n in names}
    frontier, found = list(seen), []
    for _ in range(levels):
        if not frontier:
            break
        at = set(frontier)
        frontier = []
        for child, rel, parent in graph.entity_links(sorted(at)):
            if rel in HIERARCHY and parent.lower() in at and child.lower() not in seen:
                seen.add(child.lower())
                frontier.append(child.lower())
                found.append(child)
    return found
