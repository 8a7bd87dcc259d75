"""The built-in store filter: secret redaction (redact.py), on by default.

Registered by the plugin manager before third-party plugins, so their filters see redacted
text. `redaction.enabled: false` in config.json turns it off; `alaya status` shows how many
secrets were redacted (`state/redactions.json`, updated by `Alaya.ingest`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from .store.fsutil import atomic_write
from .hookspecs import hookimpl

if TYPE_CHECKING:
    from .engine import Alaya

STATS_FILE = "redactions.json"


@hookimpl
def store_filter(session: Any, memory: Any) -> Any:
    from .redact import from_config, redact_session

    redactor = from_config(memory.config if memory is not None else None)
    if redactor is None:
        return None
    redacted, counts = redact_session(session, redactor)
    return redacted if counts else None


def record(memory: "Alaya", counts: Counter) -> None:
    """Add the secrets redacted from newly stored turns to the running totals (caller holds
    the write lock)."""
    if not counts:
        return
    stats = stats_of(memory)
    stats["total"] += sum(counts.values())
    by_kind = Counter(stats["by_kind"])
    by_kind.update(counts)
    stats["by_kind"] = dict(sorted(by_kind.items()))
    atomic_write(memory.dirs.state / STATS_FILE, json.dumps(stats, sort_keys=True))


def stats_of(memory: "Alaya") -> dict[str, Any]:
    try:
        data = json.loads((memory.dirs.state / STATS_FILE).read_text(encoding="utf-8"))
        return {"total": int(data["total"]), "by_kind": {str(k): int(v) for k, v in dict(data["by_kind"]).items()}}
    except (OSError, ValueError, KeyError, TypeError):
        return {"total": 0, "by_kind": {}}


def status(memory: "Alaya") -> dict[str, Any]:
    section = getattr(memory.config, "redaction", None)
    stats = stats_of(memory)
    return {
        "enabled": bool(section.enabled) if section is not None else True,
        "redact_raw": bool(section.redact_raw) if section is not None else True,
        "redacted": stats["total"],
        "by_kind": stats["by_kind"],
    }
