"""L3 tombstones (`raw/tombstones.jsonl`): what was forgotten on purpose, when and why.

Forgetting removes a card or a session from L2 and L1; the tombstone is what keeps it gone:
capture refuses a forgotten session again (the same transcript re-sent by a hook), distill
and import drop forgotten card ids, and `alaya rebuild` skips forgotten sessions and deletes
forgotten cards after its replay. A record names the card or session and a digest of what it
said, never the text itself (that is what was meant to go).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ports.raw import RawSessions

TOMBSTONES = "tombstones.jsonl"


def digest(text: str) -> str:
    """What a tombstone keeps of forgotten text: enough to recognise it, not to read it."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


def record(raw: "RawSessions", records: list[dict[str, Any]]) -> None:
    """Append tombstones (L3: before L2 and L1 change)."""
    if records:
        raw.append_log(TOMBSTONES, records)


def read(raw: "RawSessions") -> list[dict[str, Any]]:
    return raw.read_log(TOMBSTONES)


def forgotten(raw: "RawSessions", kind: str) -> set[str]:
    """Ids of forgotten `card`s or `session`s."""
    return {str(r.get("id")) for r in read(raw) if r.get("kind") == kind and r.get("id")}
