"""Saved copies of cards introspect forgot (`state/forgotten/<card-id>.json`; issue 31:
forgetting that is reversible until purged).

Introspect's forget step takes a card out of L2 and L1 at once (recall, session start, `list`
and the tools stop seeing it), but first saves here what `alaya restore` needs to put it back
as it was: the card with every field, its card → card edges with their reasons
(curate/restore.py builds and applies the copy). A copy is a file of its own, written
atomically before the card leaves L2, so a kill at any point leaves the card in L2 or its copy
on disk (or both). The copy holds the card's text, so it goes when the owner forgets the card
(curate/purge.py) and when the purge window (`introspect.forget_purge_after_days`) has passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..models import check_id
from .fsutil import atomic_write_many, fsync_dir, link_refused
from .trust import read_trusted

FOLDER = "forgotten"  # in state/


def folder(state: Path) -> Path:
    return state / FOLDER


def _path(state: Path, card_id: str) -> Path:
    check_id(card_id, "card id")  # a file name: no path parts
    return folder(state) / f"{card_id}.json"


def _refuse_link(state: Path) -> None:
    if folder(state).is_symlink():
        raise link_refused(folder(state))


def save(state: Path, copies: list[dict[str, Any]]) -> None:
    """Write each copy ({"card": {...}, …}) as its card's file, all made durable together."""
    if copies:
        _refuse_link(state)
        atomic_write_many([(_path(state, c["card"]["id"]), json.dumps(c, ensure_ascii=False)) for c in copies])


def load(state: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The copies of these cards that are kept, by card id."""
    _refuse_link(state)
    found = {}
    for cid in ids:
        path = _path(state, cid)
        if path.is_file() and not path.is_symlink():
            found[cid] = json.loads(read_trusted(path).decode("utf-8"))
    return found


def all_copies(state: Path) -> list[dict[str, Any]]:
    """Every copy kept, oldest forget first."""
    _refuse_link(state)
    if not folder(state).is_dir():
        return []
    ids = [p.stem for p in folder(state).glob("*.json") if not p.is_symlink()]
    return sorted(load(state, ids).values(), key=lambda c: (str(c.get("forgotten_at") or ""), c["card"]["id"]))


def erase(state: Path, ids: list[str]) -> int:
    """Delete these cards' copies for good; how many there were."""
    _refuse_link(state)
    gone = 0
    for cid in ids:
        path = _path(state, cid)
        if path.exists() or path.is_symlink():
            path.unlink()
            gone += 1
    if gone:
        fsync_dir(folder(state))
    return gone
