"""How cards and sessions sit in the postgres graph's tables (migrations/0003_graph.sql), and the
round trip of a Python row through them (issue 34). A missing value is NULL here; it reads back
as the embedded graph's reads give it (`""` where that graph keeps no NULL in a column a card
always fills), so that both backends hand the layers above the same cards."""

from __future__ import annotations

import json
from typing import Any

from ...models import Card, SourceRef

CARD_FIELDS = list(Card.model_fields)
SESSION_FIELDS = ["id", "agent_id", "started_at", "ingested_at", "path", "title", "source_format", "turn_count",
                  "distilled_turns", "last_card", "kind", "parent", "channel", "summary"]
# a card's usage, kept when the card is written again (`upsert_cards`)
USAGE = {"created_at", "temperature", "tier", "access_count", "last_accessed"}
_CARD_NULLABLE = frozenset({"valid_from", "valid_until", "last_accessed", "origin", "session_kind", "kind", "occurred"})
_SESSION_NULLABLE = frozenset({"started_at", "title", "last_card", "agent_id", "path", "ingested_at", "kind", "parent",
                               "channel", "summary"})


def low(column: str) -> str:
    """`column` lower-cased as the database's locale lowers it: the graph's text columns are
    COLLATE "C" (code-point order), under which lower() changes only ASCII letters."""
    return f'lower({column} COLLATE "default")'


def card_values(card: Card) -> dict[str, Any]:
    """The card as the `cards` columns take it (sources as JSON text, as the embedded graph keeps them)."""
    row = card.model_dump()
    row["sources"] = json.dumps([s.model_dump() for s in card.sources], ensure_ascii=False)
    return row


def card_columns(alias: str = "c") -> str:
    return ", ".join(f"{alias}.{f}" for f in CARD_FIELDS)


def card_from(values: tuple[Any, ...]) -> Card:
    """A card out of a row of `card_columns()`."""
    row = {k: (None if v == "" and k in _CARD_NULLABLE else v) for k, v in zip(CARD_FIELDS, values)}
    row["sources"] = [SourceRef(**s) for s in json.loads(row["sources"] or "[]")]
    row["tags"] = list(row["tags"] or [])
    row["entities"] = list(row["entities"] or [])
    for text in ("title", "content", "type", "scope", "created_at", "updated_at"):
        if row[text] is None:
            row[text] = ""  # as the embedded graph reads a card stored without it
    if row["tier"] is None:
        row.pop("tier")
    return Card(**row)


def session_columns(alias: str = "s") -> str:
    return ", ".join(f"{alias}.{f}" for f in SESSION_FIELDS)


def session_from(values: tuple[Any, ...]) -> dict[str, Any]:
    """A Session's columns as `get_session` gives them ("" for a text the embedded graph keeps as "")."""
    row = dict(zip(SESSION_FIELDS, values))
    for key, value in row.items():
        if value is None and key not in _SESSION_NULLABLE:
            row[key] = 0 if key in ("turn_count", "distilled_turns") else ""
        elif value == "" and key in _SESSION_NULLABLE:
            row[key] = None
    return row


def cited(sources: str | None) -> frozenset[str] | None:
    """The sessions a card's stored sources JSON names; None when it cannot be read."""
    try:
        return frozenset(s["session_id"] for s in json.loads(sources or "[]"))
    except (ValueError, TypeError, KeyError):
        return None
