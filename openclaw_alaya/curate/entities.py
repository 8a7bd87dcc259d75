"""`alaya entities`: the people, projects and things cards mention, as typed entities with a
canonical name and aliases.

Every change is a record in `raw/curation.jsonl` (`{"op": "entity", "action": …}`) applied to
the graph by `apply` — the same function `alaya rebuild` replays them with. Merging or renaming
moves the MENTIONS edges, keeps the old name as an alias (so recall's `--concepts` and later
mentions still find the entity) and rewrites the entity lists of the cards that named it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import InputError, NotFoundError
from ..models import index_row, now_iso
from ..store.raw import CURATION_LOG

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

_TYPE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MAX_NAME = 200
ACTIONS = ("list", "show", "merge", "alias", "rename", "type")


def check_type(kind: Any) -> str:
    if not isinstance(kind, str) or not _TYPE.fullmatch(kind.strip().lower()):
        raise InputError(f"entity type {str(kind)[:40]!r} is not a word (letters, digits, _ or -, up to 32)")
    return kind.strip().lower()


def _check_name(name: Any, what: str = "entity name") -> str:
    cleaned = " ".join(str(name or "").split())
    if not cleaned or len(cleaned) > MAX_NAME:
        raise InputError(f"{what} must be 1-{MAX_NAME} characters (got {str(name)[:40]!r})")
    return cleaned


def find(graph: "CardGraph", name: str) -> dict[str, Any] | None:
    """The entity called `name`: exactly, else ignoring case, else by one of its aliases."""
    rows = sorted(graph.entities_named(name), key=lambda e: (e.name != name, e.name.lower() != name.lower(), e.name))
    return rows[0]._asdict() if rows else None


def _require(graph: "CardGraph", name: str) -> dict[str, Any]:
    found = find(graph, _check_name(name))
    if found is None:
        raise NotFoundError(f"no entity {name!r}")
    return found


# --- reads -----------------------------------------------------------------------------------


def list_entities(memory: "Memory", *, kind: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """Entities by how many cards mention them, most first."""
    if limit < 1 or limit > 1000 or offset < 0:
        raise InputError("limit must be 1-1000 and offset 0 or more")
    kind = check_type(kind) if kind else None
    with memory.reading("entities list") as graph:
        total = graph.entity_count(kind)
        rows = graph.entities_by_mentions(kind, limit=limit, offset=offset)
    entities = [row._asdict() for row in rows]
    return {"entities": entities, "total": total, "offset": offset, "limit": limit}


def show(memory: "Memory", name: str, *, limit: int = 50) -> dict[str, Any]:
    """The entity and the cards that mention it, newest first."""
    with memory.reading("entities show") as graph:
        entity = _require(graph, name)
        rows = graph.entity_cards(entity["name"])
        links = graph.entity_links([entity["name"]])
    cards = [{"id": i, "title": t, "type": k, "created_at": c, "superseded": bool(v)} for i, t, k, c, v in rows]
    relations = [{"src": a, "rel": rel, "dst": b} for a, rel, b in links]  # IS_A, PART_OF… (issue 35)
    return {**entity, "mentions": len(cards), "cards": cards[:limit], "relations": relations}


# --- changes ---------------------------------------------------------------------------------


def set_types(memory: "Memory", types: dict[str, str]) -> None:
    _change(memory, [{"action": "type", "name": _check_name(n), "type": check_type(t)} for n, t in types.items()])


def change(memory: "Memory", action: str, name: str, value: str) -> dict[str, Any]:
    """`merge NAME OTHER` (OTHER goes into NAME), `alias NAME ALIAS`, `rename NAME NEW`, `type NAME TYPE`."""
    if action not in ("merge", "alias", "rename", "type"):
        raise InputError(f"unknown entities action {action!r} ({', '.join(ACTIONS)})")
    with memory.reading(f"entities {action} (checking)") as graph:
        entity = _require(graph, name)
        other = find(graph, _check_name(value))
    record: dict[str, Any] = {"action": action, "name": entity["name"]}
    if action == "merge":
        if other is None:
            raise NotFoundError(f"no entity {value!r}")
        if other["name"] == entity["name"]:
            raise InputError(f"{value!r} is {entity['name']!r} already")
        record["other"] = other["name"]
    elif action == "type":
        record["type"] = check_type(value)
    else:
        value = _check_name(value)
        if other is not None and other["name"] != entity["name"]:
            raise InputError(f"{value!r} is the entity {other['name']!r}: merge them instead "
                             f"(`alaya entities merge {entity['name']!r} {other['name']!r}`)")
        record["alias" if action == "alias" else "new"] = value
    _change(memory, [record])
    return show(memory, record.get("new", entity["name"]), limit=0)


def _change(memory: "Memory", records: list[dict[str, Any]]) -> None:
    stamp = now_iso()
    records = [{"op": "entity", **r, "ts": stamp} for r in records]
    with memory.writing(f"entities {records[0]['action']} {records[0]['name']}") as graph:
        with graph:
            memory.raw.append_log(CURATION_LOG, records)  # L3 before L2
            changed = [cid for record in records for cid in apply(graph, record)]
            cards = graph.get_cards(changed)
        if cards:  # the index text names the entities: the new names become searchable
            vectors = memory.index.vectors_for(list(cards))
            rows = [c for c in cards.values() if c.id in vectors]
            if rows:
                import numpy as np

                memory.index.upsert_cards([index_row(c) for c in rows], np.stack([vectors[c.id] for c in rows]))


def apply(graph: "CardGraph", record: dict[str, Any]) -> list[str]:
    """One entity record on the graph (live, and replayed by rebuild); returns the ids of the
    cards whose entity lists changed. A record that no longer applies does nothing."""
    action, name = record.get("action"), record.get("name")
    if not name:
        return []
    if action == "type":
        graph.set_entity_type(name, record.get("type") or "")
        return []
    if action == "alias":
        graph.add_entity_alias(name, record.get("alias"))
        return []
    if action == "rename":
        new = record.get("new")
        return graph.rename_entity(name, new) if new else []
    if action == "merge":
        return graph.merge_entities(name, record.get("other") or "")
    return []

