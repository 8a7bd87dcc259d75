"""Alias candidates among relation names found by their spelling, with no model (issue 35).

Introspect compared names only by their embeddings (consolidate.relation_review), and the hash
embedder puts INSPIRED_BY and INSPIRED_BY_IDEA at 0.71, under `relation_alias_threshold`, so
nothing was proposed. Three rules on the names themselves find them offline:

- `extends`: one name is another with words added (INSPIRED_BY → INSPIRED_BY_IDEA);
- `spelling`: the same words but for an inflection or a typo (OWNED_BY ~ OWNS_BY);
- `synonym`: both mean one relation the same way round by the curated table (recall/synonyms.py:
  LED_TO and RESULTED_IN both mean CAUSES), which `--rel` already follows.

They are proposed, never applied: none of these is certain (INSPIRED_BY_IDEA may be narrower
on purpose; OWNS and OWNED_BY point opposite ways), and relations are the owner's vocabulary.
A proposal carries the command that confirms it (`recall.relation_aliases`), after which
`--rel` follows either name for the other fully and both ways; `alaya config unset` undoes it.
"""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any

from ..recall.synonyms import SENSES

_SUFFIXES = ("ies", "ing", "ed", "es", "s", "d")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _why(a: str, b: str) -> str | None:
    """The rule that makes two names alias candidates, if any."""
    wa, wb = a.split("_"), b.split("_")
    short, long_ = sorted((wa, wb), key=len)
    if len(short) < len(long_) and long_[: len(short)] == short:
        return "extends"
    if len(wa) == len(wb) and [_stem(w) for w in wa] == [_stem(w) for w in wb]:
        return "spelling"
    if a in SENSES and SENSES.get(a) == SENSES.get(b):
        return "synonym"
    return None


def name_candidates(custom: list[str], names: list[str], counts: dict[str, int]) -> list[dict[str, Any]]:
    """(custom name, any name) pairs a rule relates, each once: `alias_of` is the core one, else
    the shorter, else the more used."""
    found = []
    customs = set(custom)
    for a, b in combinations(sorted(set(names)), 2):
        if not ({a, b} & customs):
            continue
        why = _why(a, b)
        if why is None:
            continue
        keep = min((a, b), key=lambda n: (n in customs, len(n), -counts.get(n, 0), n))
        name = b if keep == a else a
        found.append({"name": name, "alias_of": keep, "why": why, "counts": [counts.get(name, 0), counts.get(keep, 0)]})
    return found


def with_confirm(candidates: list[dict[str, Any]], confirmed: dict[str, str]) -> list[dict[str, Any]]:
    """The candidates not confirmed yet, each with the command that confirms it."""
    left = []
    for candidate in candidates:
        name, keep = candidate["name"], candidate["alias_of"]
        if confirmed.get(name) == keep or confirmed.get(keep) == name:
            continue
        value = json.dumps({**confirmed, name: keep})
        left.append({**candidate, "confirm": f"alaya config set recall.relation_aliases '{value}'"})
    return left


def merged(by_embedding: list[dict[str, Any]], by_name: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per pair: the embedding's similarity and the name rule's reason together."""
    out: dict[frozenset[str], dict[str, Any]] = {}
    for entry in [*({**e, "why": "embedding"} for e in by_embedding), *by_name]:
        key = frozenset((entry["name"], entry["alias_of"]))
        if key in out:
            out[key]["why"] = f"{out[key]['why']}, {entry['why']}"
        else:
            out[key] = dict(entry)
    return list(out.values())

