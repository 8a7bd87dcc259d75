"""`state/workspace.json`: what `alaya workspace sync` saw of each workspace file (size, mtime,
digest) and the trigger phrases of its cards, so an unchanged file costs a stat and session
start matches triggers without reading the graph (docs/workspace.md). A cache: lost, the next
sync reads the files again and finds L3 already has them.

    {"workspaces": {"<agent>\\u0000<folder>": {"files": {"MEMORY.md": {"stat": [size, mtime_ns],
     "sha": "…", "triggers": {"<card id>": ["gateway setup", …]}}}}}}
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write

if TYPE_CHECKING:
    from ..memory import Memory

STATE = "workspace.json"
CURATED = ("MEMORY.md", "memory.md", "USER.md")  # the owner's curated files: origin owner, triggers honoured
MAX_TRIGGERED = 3  # cards a prompt's triggers add at session start (OpenClaw's limit too)


def load_state(memory: "Memory") -> dict[str, Any]:
    try:
        data = json.loads((memory.dirs.state / STATE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_state(memory: "Memory", state: dict[str, Any]) -> None:
    try:
        atomic_write(memory.dirs.state / STATE, json.dumps(state, ensure_ascii=False, separators=(",", ":")))
    except OSError as exc:
        print(f"alaya: warning: {STATE} not saved ({exc.strerror}); the next sync reads the files again", file=sys.stderr)


def triggered(memory: "Memory", agent_id: str, prompt: str) -> list[str]:
    """Ids of the curated cards (MEMORY.md, USER.md) whose trigger phrases the prompt matches,
    at most MAX_TRIGGERED: a phrase matches when each of its words is in the prompt (a phrase
    in a script written without spaces: when it is in the prompt). Daily notes never trigger
    (OpenClaw's rule: only the curated tier auto-injects)."""
    if not prompt:
        return []
    words = set(re.findall(r"\w+", prompt.lower()))
    lowered = prompt.lower()
    found: list[str] = []
    for ws_key, ws in (load_state(memory).get("workspaces") or {}).items():
        if ws_key.split("\x00", 1)[0] not in (agent_id, "shared"):
            continue
        for rel, entry in (ws.get("files") or {}).items():
            if rel not in CURATED:
                continue
            for cid, phrases in (entry.get("triggers") or {}).items():
                if cid not in found and any(_matches(p, words, lowered) for p in phrases):
                    found.append(cid)
    return found[:MAX_TRIGGERED]


def _matches(phrase: str, words: set[str], prompt: str) -> bool:
    parts = re.findall(r"\w+", phrase.lower())
    if not parts:
        return False
    if any(not p.isascii() for p in parts):
        return phrase.lower().strip() in prompt
    return all(p in words for p in parts)
