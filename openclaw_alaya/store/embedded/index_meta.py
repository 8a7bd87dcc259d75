"""`lancedb/index.json`: what built the L1 index (embedder, dimension, full-text configuration),
readable without importing LanceDB (about a second), so that every read can check it cheaply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARDS = "cards"
META = "index.json"
# The cards' full-text index configuration (`vectors._text_index`), bumped when it changes; an
# index recorded with an older one (or none: version 1) is read as it is and rebuilt by the
# next upgrade (`alaya init`, the daemon's warm-up, a write hold: backend.py `_upgrade_held`).
# 2: the project's English stop words, not LanceDB's (issue 18).
FTS_VERSION = 2


def read_meta(folder: Path) -> dict[str, Any]:
    """The recorded metadata; empty when there is none or it cannot be read."""
    try:
        meta = json.loads((folder / META).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def fts_current(folder: Path) -> bool:
    """Whether the cards' full-text index needs no rebuild. No cards table: nothing to rebuild
    (a damaged store is named by whatever uses it, `VectorStore._table`)."""
    if not (folder / f"{CARDS}.lance").is_dir():
        return True
    return read_meta(folder).get("fts", 1) >= FTS_VERSION
