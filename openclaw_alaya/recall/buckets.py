"""Time buckets: what was talked about each day, ISO week and month (sessions, cards, card
types, top tags and the titles of the most important cards).

Introspect's time-buckets step caches the buckets of the last `introspect.keep_days` days,
`keep_weeks` weeks and `keep_months` months in `state/buckets.json` (maintenance/buckets.py). A
card belongs to the date of the session it came from (`periods.first_moment` over
`GraphStore.card_times`), not to when it was distilled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .periods import first_moment

if TYPE_CHECKING:
    from ..config import IntrospectConfig
    from ..memory import Memory
    from ..store.graph import GraphStore

HIGHLIGHTS = 5
TOP_TAGS = 5

Sessions = list[tuple[str, datetime | None]]  # (id, when it started)
Cards = list[tuple[str, str, str, float, list[str], datetime | None]]  # (id, title, type, importance, tags, when)


def cache_path(memory: "Memory") -> Path:
    return memory.dirs.state / "buckets.json"


def keys(moment: datetime) -> dict[str, str]:
    """The day, ISO week and month `moment` falls in, as bucket names."""
    year, week, _ = moment.isocalendar()
    return {"daily": moment.strftime("%Y-%m-%d"), "weekly": f"{year}-W{week:02d}", "monthly": moment.strftime("%Y-%m")}


def read(graph: "GraphStore") -> tuple[Sessions, Cards]:
    """What the buckets are computed from: every session and card, with when it happened."""
    sessions = [(sid, first_moment((started, ingested), timezone.utc)) for sid, started, ingested in
                graph.query("MATCH (s:Session) RETURN s.id, s.started_at, s.ingested_at")]
    times = graph.card_times()
    cards = [(cid, title, ctype, importance, tags, first_moment(times[cid], timezone.utc))
             for cid, title, ctype, importance, tags in
             graph.query("MATCH (c:Card) RETURN c.id, c.title, c.type, c.importance, c.tags")]
    return sessions, cards


def compute(sessions: Sessions, cards: Cards, now: datetime, config: "IntrospectConfig") -> dict[str, Any]:
    """The buckets of the last `config.keep_*` days, weeks and months up to `now`'s."""
    keep = {
        "daily": {keys(now - timedelta(days=i))["daily"] for i in range(config.keep_days)},
        "weekly": {keys(now - timedelta(weeks=i))["weekly"] for i in range(config.keep_weeks)},
        "monthly": {(now.replace(day=1) - timedelta(days=31 * i)).strftime("%Y-%m") for i in range(config.keep_months)},
    }
    acc: dict[str, dict[str, dict[str, Any]]] = {k: defaultdict(lambda: {
        "sessions": set(), "cards": 0, "types": Counter(), "tags": Counter(), "top": []}) for k in keep}
    for sid, moment in sessions:
        if moment is None:
            continue
        for kind, key in keys(moment).items():
            if key in keep[kind]:
                acc[kind][key]["sessions"].add(sid)
    for cid, title, ctype, importance, tags, moment in cards:
        if moment is None:
            continue
        for kind, key in keys(moment).items():
            if key not in keep[kind]:
                continue
            bucket = acc[kind][key]
            bucket["cards"] += 1
            bucket["types"][ctype or "concept"] += 1
            bucket["tags"].update(tags or [])
            bucket["top"].append((-(importance or 0.0), title or cid))
    out: dict[str, Any] = {"computed_at": now.astimezone(timezone.utc).isoformat(timespec="seconds")}
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
