"""The daily trend of the memory's health (issue 31): introspect's `metrics` step keeps one
snapshot per day of the memory's clock in `state/metrics.jsonl`, so that `alaya metrics
--history` shows whether the memory is getting better or filling with noise.

A line: `{"day": "YYYY-MM-DD", "cards", "recalls", "hit_rate", "hit_rate_7d", "signal",
"card_type_entropy", "entity_type_entropy", "tiers": {…}, "forgotten"}`. A second run on the
same day replaces that day's line; at most `KEEP_DAYS` days are kept (the oldest go). A damaged
line is skipped; the file is a statistic, never memory, and is rewritten whole on each run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write
from ..store.trust import read_trusted

if TYPE_CHECKING:
    from ..memory import Memory

KEEP_DAYS = 400  # a year of daily runs and a month to compare against


def path_of(memory: "Memory") -> Path:
    return memory.dirs.state / "metrics.jsonl"


def snapshot(report: dict[str, Any]) -> dict[str, Any]:
    """What a day keeps of a full report (metrics.compute)."""
    recall, entropy = report["recall"], report["entropy"]
    return {"day": report["at"], "cards": report["cards"], "recalls": recall["recalls"],
            "hit_rate": recall["hit_rate"], "hit_rate_7d": recall["last_7_days"]["hit_rate"],
            "signal": report["signal"]["ratio"], "card_type_entropy": entropy["card_types"]["bits"],
            "entity_type_entropy": entropy["entity_types"]["bits"], "tiers": report["tiers"],
            "forgotten": report.get("forgotten", {}).get("total", 0)}


def load(memory: "Memory") -> list[dict[str, Any]]:
    """The snapshots kept, oldest day first (none when the file is missing or unreadable)."""
    try:
        text = read_trusted(path_of(memory)).decode("utf-8", "replace")
    except OSError:
        return []
    days: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("day"), str):
            days[entry["day"]] = entry
    return [days[d] for d in sorted(days)]


def record(memory: "Memory", line: dict[str, Any]) -> int:
    """The day's snapshot written in place of any earlier one that day; how many days are kept."""
    kept = {entry["day"]: entry for entry in load(memory)}
    kept[line["day"]] = line
    days = sorted(kept)[-KEEP_DAYS:]
    atomic_write(path_of(memory), "".join(json.dumps(kept[d], ensure_ascii=False, sort_keys=True) + "\n" for d in days))
    return len(days)


def keep(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    """Introspect's `metrics` step: today's snapshot computed and (unless a dry run) recorded."""
    from .metrics import compute

    line = snapshot(compute(memory, now=now))
    if dry_run:
        return {**line, "dry_run": True}
    return {**line, "days_kept": record(memory, line)}
