"""Relation names that mean a core relation, with no model (issue 35): a curated table.

The design's own example asks `--rel CAUSED_BY` and gets a card reached over `LED_TO`
(rel_sim 0.93). With the default hash embedder the words "led to" and "caused by" share nothing,
so embedding the names (navigate's `_similar_relations`) never finds it; the table does. Each
name is listed with the relation it means and whether it states it the other way round: `X
LED_TO Y` is `Y CAUSED_BY X`, so a walk asked for CAUSED_BY follows LED_TO edges *into* a card
(towards its causes), never out of it. Symmetric meanings (SIMILAR_TO, CONTRADICTS) go both ways.

The groups come from the design documents (CAUSES / CAUSED_BY, DEPENDS_ON, SIMILAR_TO,
CONTRADICTS "矛盾/替代: old plan vs new", so SUPERSEDES and REPLACES fall under it, TEMPORAL_NEXT;
INSPIRED_BY ≈ INFLUENCED_BY) and the names the code already writes (curate/triplets.py's
PART_OF, INCLUDES; the distiller's IS_A and PART_OF between entities). A configured embedder
still adds the names it finds close (navigate.py), and raises a listed name's fit when it
finds it closer than `SYNONYM_FIT`.
"""

from __future__ import annotations

# How well a listed synonym fits the named relation (the design's example: LED_TO for
# CAUSED_BY at 0.93); below a named relation's 1, above the embedder's threshold (0.6).
SYNONYM_FIT = 0.9

# relation → (names meaning it, names meaning it the other way round)
_GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "CAUSED_BY": (("BECAUSE_OF", "DUE_TO", "RESULTED_FROM", "RESULTS_FROM", "RESULT_OF", "TRIGGERED_BY",
                   "STEMS_FROM"),
                  ("CAUSES", "LED_TO", "LEADS_TO", "RESULTED_IN", "RESULTS_IN", "TRIGGERED", "TRIGGERS",
                   "PRODUCED")),
    "DEPENDS_ON": (("REQUIRES", "NEEDS", "RELIES_ON", "USES", "BUILT_ON", "BASED_ON"),
                   ("REQUIRED_BY", "NEEDED_BY", "USED_BY", "DEPENDED_ON_BY")),
    "SIMILAR_TO": (("LIKE", "RESEMBLES", "SAME_AS", "ANALOGOUS_TO", "DUPLICATES"), ()),
    "CONTRADICTS": (("CONFLICTS_WITH", "OPPOSES", "INCONSISTENT_WITH", "SUPERSEDES", "SUPERSEDED_BY",
                     "REPLACES", "REPLACED_BY", "OVERRIDES"), ()),
    "TEMPORAL_NEXT": (("FOLLOWED_BY", "PRECEDES", "BEFORE"), ("FOLLOWS", "AFTER", "PRECEDED_BY")),
    "PART_OF": (("BELONGS_TO", "MEMBER_OF", "COMPONENT_OF", "WITHIN"), ("CONTAINS", "INCLUDES", "HAS_PART")),
    "IS_A": (("INSTANCE_OF", "KIND_OF", "TYPE_OF", "SUBCLASS_OF"), ("EXAMPLE_IS",)),
    "INSPIRED_BY": (("INFLUENCED_BY",), ("INSPIRED", "INFLUENCED")),
}
SYMMETRIC = frozenset({"SIMILAR_TO", "CONTRADICTS"})


def _senses() -> dict[str, tuple[str, bool]]:
    found: dict[str, tuple[str, bool]] = {}
    for core, (same, reverse) in _GROUPS.items():
        found[core] = (core, False)
        found.update((name, (core, False)) for name in same)
        found.update((name, (core, True)) for name in reverse)
    return found


# name → (the relation it means, whether it states it the other way round)
SENSES = _senses()

Way = bool | None  # which edges a walk follows: True out of the card, False into it, None both


def following(named: list[str], aliases: dict[str, str] | None = None) -> dict[str, tuple[float, Way]]:
    """Relation name → (fit, way) for a walk asked to follow `named`: each named relation and
    each name confirmed as the same (`aliases`: alias → the name it stands for) fully and both
    ways, as a named one always was; each synonym of the table at `SYNONYM_FIT`, in the way that
    means a named one (`LED_TO` into the card for CAUSED_BY; both ways for symmetric ones)."""
    alias_of = aliases or {}
    canon = lambda name: alias_of.get(name, name)  # noqa: E731
    wanted = {canon(name) for name in named}
    found: dict[str, tuple[float, Way]] = {name: (1.0, None) for name in [*named, *sorted(wanted)]}
    found.update((alias, (1.0, None)) for alias, name in alias_of.items() if name in wanted)
    for name in wanted:
        meant = SENSES.get(name)
        if meant is None:
            continue
        core, reversed_ = meant
        listed = [*SENSES.items(), *((a, SENSES[n]) for a, n in alias_of.items() if n in SENSES)]
        for other, (other_core, other_reversed) in listed:
            if other_core != core:
                continue
            way: Way = None if core in SYMMETRIC else other_reversed == reversed_
            old = found.get(other)
            if old is None or (old[0] < 1.0 and old[1] != way):  # two named ones each way: both
                found[other] = (SYNONYM_FIT, way if old is None else None)
    return found


def custom_meaning(name: str, aliases: dict[str, str] | None = None) -> str:
    """How `alaya schema` describes a custom relation: what it is followed as, if anything."""
    confirmed = (aliases or {}).get(name)
    if confirmed:
        return f"custom relation, confirmed alias of {confirmed}"
    meant = SENSES.get(name)
    if meant is None or meant[0] == name:
        return "custom relation"
    core, reversed_ = meant
    return f"custom relation, a synonym of {core}{' the other way round' if reversed_ else ''}"
