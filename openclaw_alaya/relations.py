"""Relation names: normalising what users and distillers write, and storing links both ways
where the relation's meaning requires it (symmetric ones, CAUSES/CAUSED_BY)."""

from __future__ import annotations

import re

from .errors import InputError
from .models import CORE_RELATIONS, INVERSE_RELATIONS, SYMMETRIC_RELATIONS, Link

_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
RESERVED = {"EXTRACTED_FROM", "MENTIONS"}  # card→session / card→entity, not between cards


def normalise_relation(name: str) -> str:
    """`depends on` → `DEPENDS_ON`; anything else that is not a tidy name is refused."""
    cleaned = re.sub(r"[\s\-]+", "_", str(name).strip()).upper()
    if not _NAME.match(cleaned):
        raise InputError(
            f"invalid relation name {str(name)[:40]!r}: use letters, digits and _ (up to 64), starting with a letter"
        )
    if cleaned in RESERVED:
        raise InputError(f"{cleaned} is maintained by alaya itself and cannot be linked by hand")
    return cleaned


def is_custom(name: str) -> bool:
    return name not in CORE_RELATIONS


def expand_link(src: str, dst: str, rel: str, weight: float, created_at: str) -> list[Link]:
    """The stored edges for one stated relation: the edge itself plus its mirror if any."""
    links = [Link(src=src, dst=dst, rel=rel, weight=weight, created_at=created_at)]
    if rel in SYMMETRIC_RELATIONS:
        links.append(Link(src=dst, dst=src, rel=rel, weight=weight, created_at=created_at))
    elif rel in INVERSE_RELATIONS:
        links.append(Link(src=dst, dst=src, rel=INVERSE_RELATIONS[rel], weight=weight, created_at=created_at))
    return links


def relation_description(name: str) -> str:
    """The text a relation is embedded from, so that names cluster by meaning."""
    words = name.replace("_", " ").lower()
    return f"{words}: {CORE_RELATIONS.get(name, 'custom relation')}"
