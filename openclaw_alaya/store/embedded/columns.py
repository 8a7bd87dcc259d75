"""How cards and sessions sit in Kuzu's node tables (store/embedded/graph.py): the columns and
their types, the card → card relation tables, and the round trip of a Python row through them
(no NULL is written to a STRING column). Shared by `GraphStore` and its query mixins."""

from __future__ import annotations

import json
from typing import Any

from ...models import CORE_RELATIONS, Card, SourceRef

CARD_RELATIONS = [r for r in CORE_RELATIONS if r != "EXTRACTED_FROM"]
CUSTOM = "CUSTOM"

_CARD_TYPES = {
    "id": "STRING", "title": "STRING", "content": "STRING", "type": "STRING", "tags": "STRING[]",
    "entities": "STRING[]", "importance": "DOUBLE", "scope": "STRING", "sources": "STRING",
    "created_at": "STRING", "updated_at": "STRING", "valid_from": "STRING", "valid_until": "STRING",
    "temperature": "DOUBLE", "tier": "STRING", "access_count": "INT64", "last_accessed": "STRING",
    "origin": "STRING", "session_kind": "STRING", "kind": "STRING", "confidence": "DOUBLE", "occurred": "STRING",
}
_SESSION_TYPES = {
    "id": "STRING", "agent_id": "STRING", "started_at": "STRING", "ingested_at": "STRING",
    "path": "STRING", "title": "STRING", "source_format": "STRING", "turn_count": "INT64",
    "distilled_turns": "INT64", "last_card": "STRING", "kind": "STRING", "parent": "STRING",
    "channel": "STRING", "summary": "STRING",
}
CARD_FIELDS = list(_CARD_TYPES)
_SESSION_FIELDS = list(_SESSION_TYPES)
assert set(CARD_FIELDS) == set(Card.model_fields)


# Kuzu 0.11.3 corrupts a STRING column when a NULL is written into it after its rows were
# updated from NULL to text: later reads return other columns' values or segfault (seen
# with Session.last_card after a few hundred cards). So no NULL is ever written to a STRING
# property: None is stored as "" and read back as None (`_stored`/`_loaded`).
_NONE_STRING = ""


def _stored(row: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    return {
        key: (_NONE_STRING if types.get(key) == "STRING" else [] if types.get(key, "").endswith("[]") else value)
        if value is None else value
        for key, value in row.items()
    }


def _loaded(row: dict[str, Any], nullable: frozenset[str]) -> dict[str, Any]:
    return {key: None if value == _NONE_STRING and key in nullable else value for key, value in row.items()}


_CARD_NULLABLE = frozenset({"valid_from", "valid_until", "last_accessed", "origin", "session_kind", "kind", "occurred"})
_SESSION_NULLABLE = frozenset({"started_at", "title", "last_card", "agent_id", "path", "ingested_at", "kind", "parent",
                               "channel", "summary"})


def _card_row(card: Card) -> dict[str, Any]:
    row = card.model_dump()
    row["sources"] = json.dumps([s.model_dump() for s in card.sources], ensure_ascii=False)
    return _stored(row, _CARD_TYPES)


def card_from_row(row: dict[str, Any]) -> Card:
    row = _loaded(row, _CARD_NULLABLE)
    row["sources"] = [SourceRef(**s) for s in json.loads(row["sources"] or "[]")]
    row["tags"] = row["tags"] or []
    row["entities"] = row["entities"] or []
    return Card(**row)
