"""The curated core's state, `state/core.json` (issue 31): which cards introspect's `core` step
promoted (maintenance/core.py) and session start injects first (inject.py). Here, below both,
so the session-start path reads one small file and then the cards by id in one graph read.

    {"version": 1,
     "updated_at": "<ISO, the memory's clock>",
     "cards": [{"id": "<card id>", "score": 0.83, "promoted_at": "<ISO>",
                "evidence": {"recalls": n, "queries": q, "days": d, "last_day": "YYYY-MM-DD",
                             "importance": 0.6}}, …],              best first
     "refused": {"at": "<ISO>", "why": "…"} | absent}              the last round refused, if it was

A file that cannot be read is an empty core (the next round starts it again): it is a choice
derived from the usage history and the graph, never memory of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write
from ..store.trust import read_trusted

if TYPE_CHECKING:
    from ..memory import Memory

VERSION = 1


def path_of(memory: "Memory") -> Path:
    return memory.dirs.state / "core.json"


def load(memory: "Memory") -> dict[str, Any]:
    """The state as written (an empty core when there is none or it cannot be read)."""
    try:
        data = json.loads(read_trusted(path_of(memory)).decode("utf-8"))
    except (OSError, ValueError):
        return {"version": VERSION, "cards": []}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("cards"), list):
        return {"version": VERSION, "cards": []}
    data["cards"] = [e for e in data["cards"] if isinstance(e, dict) and isinstance(e.get("id"), str)]
    return data


def ids(memory: "Memory") -> list[str]:
    """The core's card ids, best first."""
    return [e["id"] for e in load(memory)["cards"]]


def save(memory: "Memory", state: dict[str, Any]) -> None:
    atomic_write(path_of(memory), json.dumps({**state, "version": VERSION}, ensure_ascii=False, indent=1))


def too_many_lost(lost: int, prior: int, fraction: float) -> bool:
    """Whether losing `lost` of `prior` entries is refused: more than `fraction` of them, and more
    than one (a single card leaving never blocks a small core)."""
    return lost > 1 and prior > 0 and lost / prior > fraction
