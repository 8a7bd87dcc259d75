"""The store's memory generation (`state/generation.json`; issue 33: a block that is never stale).

A number that every deliberate change of what memory says moves on: memory_store / `alaya
remember`, a correction, an owner's forget, a restore, introspect's forget. Capture and distill
do not move it: what they add comes from the conversation the session already shows, and a
turn's capture would otherwise make every cached block stale. The OpenClaw plugin caches the
block it injects per session and compares this number before re-injecting it (one small file
read a turn, no `alaya` call), so a change made anywhere on this store (another gateway, the
daemon, the CLI) reaches the next model request.

The file also names the cards forgotten most recently, each with the generation that forgot
it, complete from `since` on: a plugin that cannot get a fresh block in time re-injects its
last good one only without those cards (hooks/openclaw-alaya/lib/freshness.js). Forgotten text
must never come back, so the list is written before the forget's caller gets its answer.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .fsutil import atomic_write, ensure_dir
from .trust import read_trusted

FILE = "generation.json"  # in state/
LOCK = ".generation.lock"  # in state/: one bump at a time, so no forgotten id is lost in a race
# Forgotten ids kept in the file: a plugin's cached block is refreshed at the next turn, so it
# needs only the forgets since its block was fetched; 1000 ids are about 20 KB to read.
KEEP_FORGOTTEN = 1000


def read(state: Path) -> dict[str, Any]:
    """{"generation": int, "since": int, "forgotten": [[card id, generation], …]}; all zero and
    empty before the first change."""
    try:
        doc = json.loads(read_trusted(state / FILE).decode("utf-8"))
    except FileNotFoundError:
        return {"generation": 0, "since": 0, "forgotten": []}
    return {"generation": int(doc.get("generation", 0)), "since": int(doc.get("since", 0)),
            "forgotten": [list(f) for f in doc.get("forgotten", [])]}


def bump(state: Path, forgotten: Iterable[str] = ()) -> int:
    """Move the generation on (the cards in `forgotten` were just forgotten); the new number."""
    ensure_dir(state)
    fd = os.open(state / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        doc = read(state)
        generation = doc["generation"] + 1
        listed = doc["forgotten"] + [[cid, generation] for cid in dict.fromkeys(forgotten)]
        kept = listed[-KEEP_FORGOTTEN:]
        since = doc["since"] if len(kept) == len(listed) else kept[0][1]  # complete after that one
        atomic_write(state / FILE, json.dumps({"generation": generation, "since": since, "forgotten": kept}))
        return generation
    finally:
        os.close(fd)  # releases the lock
