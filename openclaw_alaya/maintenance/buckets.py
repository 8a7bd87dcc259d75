"""Time buckets: daily, weekly and monthly summaries of what was talked about, cached in
`state/buckets.json` for the session-start summary and for people (`alaya status`).

A card belongs to the date of the session it came from (`started_at`, else when it was
ingested), not to when it was distilled. Each bucket: sessions, cards, card types, top tags and
the titles of its most important cards. Kept: the last `introspect.keep_days` days,
`keep_weeks` ISO weeks and `keep_months` months before `now`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write
from .common import as_datetime, iso, parse_time

if TYPE_CHECKING:
    from ..memory import Memory

HIGHLIGHTS = 5
TOP_TAGS = 5


def _keys(moment: datetime) -> dict[str, str]:
    year, week, _ = moment.isocalendar()
    return {"daily": moment.strftime("%Y-%m-%d"), "weekly": f"{year}-W{week:02d}", "monthly": moment.strftime("%Y-%m")}


def compute(sessions: list[tuple[str, str | None]], cards: list[tuple], now: datetime, config: Any) -> dict[str, Any]:
    """sessions: (id, date); cards: (id, title, type, importance, tags, session date)."""
    keep = {
        "daily": {_keys(now - timedelta(days=i))["daily"] for i in range(config.keep_days)},
        "weekly": {_keys(now - timedelta(weeks=i))["weekly"] for i in range(config.keep_weeks)},
        "monthly": {(now.replace(day=1) - timedelta(days=31 * i)).strftime("%Y-%m") for i in range(config.keep_months)},
    }
    acc: dict[str, dict[str, dict[str, Any]]] = {k: defaultdict(lambda: {
        "sessions": set(), "cards": 0, "types": Counter(), "tags": Counter(), "top": []}) for k in keep}
    for sid, date in sessions:
        moment = parse_time(date)
        if moment is None:
            continue
        for kind, key in _keys(moment).items():
            if key in keep[kind]:
                acc[kind][key]["sessions"].add(sid)
    for cid, title, ctype, importance, tags, date in cards:
        moment = parse_time(date)
        if moment is None:
            continue
        for kind, key in _keys(moment).items():
            if key not in keep[kind]:
                continue
            bucket = acc[kind][key]
            bucket["cards"] += 1
            bucket["types"][ctype or "concept"] += 1
            bucket["tags"].update(tags or [])
            bucket["top"].append((-(importance or 0.0), title or cid))
    out: dict[str, Any] = {"computed_at": iso(now)}
    for kind in keep:
        out[kind] = [
            {
                "period": key,
                "sessions": len(b["sessions"]),
                "cards": b["cards"],
                "types": dict(b["types"].most_common()),
                "tags": [t for t, _ in b["tags"].most_common(TOP_TAGS)],
                "highlights": [t for _, t in sorted(b["top"])[:HIGHLIGHTS]],
            }
            for key, b in sorted(acc[kind].items(), reverse=True)
        ]
    return out


def refresh(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    moment = as_datetime(now)
    with memory.reading("introspect time buckets") as graph:
        sessions = graph.query("MATCH (s:Session) RETURN s.id, coalesce(s.started_at, s.ingested_at)")
        cards = graph.query(
            "MATCH (c:Card)-[:EXTRACTED_FROM]->(s:Session) RETURN c.id, c.title, c.type, c.importance,"
            " c.tags, coalesce(s.started_at, s.ingested_at)")
    seen: set[str] = set()
    unique = []
    for row in cards:  # a merged card has several sources: count it once, at its first session
        if row[0] not in seen:
            seen.add(row[0])
            unique.append(tuple(row))
    buckets = compute([tuple(s) for s in sessions], unique, moment, memory.config.introspect)
    if not dry_run:
        atomic_write(memory.dirs.state / "buckets.json", json.dumps(buckets, ensure_ascii=False, indent=1))
    return {kind: len(buckets[kind]) for kind in ("daily", "weekly", "monthly")}
