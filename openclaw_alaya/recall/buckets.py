"""Time buckets: what was talked about each day, ISO week and month (sessions, cards, card
types, top tags and the titles of the most important cards), and `alaya summary`, which shows
the bucket of one period.

Introspect's time-buckets step caches the buckets of the last `introspect.keep_days` days,
`keep_weeks` weeks and `keep_months` months in `state/buckets.json` (maintenance/buckets.py),
with the graph's `freshness` they were computed at. `summary` reads its bucket from there while
the graph is still that one, and computes it from the graph otherwise (no cache yet, a period
the cache does not keep, sessions or cards added or removed since). A card belongs to the date
of the session it came from (`periods.first_moment` over the graph's `card_times`), not to when
it was distilled.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..models import trust_class
from .periods import aware, containing, first_moment, period_of

if TYPE_CHECKING:
    from ..config import IntrospectConfig
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

HIGHLIGHTS = 5
TOP_TAGS = 5
KINDS = {"day": "daily", "week": "weekly", "month": "monthly"}  # `alaya summary --period` -> bucket kind

Sessions = list[tuple[str, datetime | None]]  # (id, when it started)
# (id, title, type, importance, tags, when, shown): a card is a highlight only when it may be shown
# unasked (docs/provenance.md, injectable): a stranger's card is counted, its title not shown
Cards = list[tuple[str, str, str, float, list[str], datetime | None, bool]]


def cache_path(memory: "Memory") -> Path:
    return memory.dirs.state / "buckets.json"


def keys(moment: datetime) -> dict[str, str]:
    """The day, ISO week and month `moment` falls in, as bucket names."""
    year, week, _ = moment.isocalendar()
    return {"daily": moment.strftime("%Y-%m-%d"), "weekly": f"{year}-W{week:02d}", "monthly": moment.strftime("%Y-%m")}


def read(graph: "CardGraph") -> tuple[Sessions, Cards]:
    """What the buckets are computed from: every session and card, with when it happened."""
    sessions = [(s["id"], first_moment((s["started_at"], s["ingested_at"]), timezone.utc)) for s in graph.sessions()]
    times = graph.card_times()
    cards = [(c.id, c.title, c.type, c.importance, c.tags, first_moment(times[c.id], timezone.utc),
              trust_class(c.origin) == "injectable") for c in graph.card_headlines()]
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
    for cid, title, ctype, importance, tags, moment, shown in cards:
        if moment is None:
            continue
        for kind, key in keys(moment).items():
            if key not in keep[kind]:
                continue
            bucket = acc[kind][key]
            bucket["cards"] += 1
            bucket["types"][ctype or "concept"] += 1
            bucket["tags"].update(tags or [])
            if shown:
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


def summary(memory: "Memory", period: str, at: str | datetime | None = None, *,
            now: datetime | None = None) -> dict[str, Any]:
    """The bucket of the day, week or month around `at` (a datetime, or anything `--since`
    takes; default now): from introspect's cache while the graph is as it was then, else
    computed from the graph."""
    kind = KINDS.get(period)
    if kind is None:
        raise InputError(f"unknown period {period!r} ({', '.join(KINDS)})")
    now = aware(now)
    if isinstance(at, datetime):
        moment = aware(at)
    else:
        moment = period_of(at, now, "at").start if at else now
    span = containing(period, moment)
    key = keys(moment)[kind]
    memory.dirs.require()
    with memory.reading(f"summary {period}") as graph:
        fresh = graph.freshness()
        bucket = _cached(memory, kind, key, fresh)
        cached = bucket is not None
        if bucket is None:
            sessions, cards = read(graph)
    if bucket is None:
        computed = compute(sessions, cards, moment, memory.config.introspect)[kind]
        bucket = next((b for b in computed if b["period"] == key), None) or {
            "period": key, "sessions": 0, "cards": 0, "types": {}, "tags": [], "highlights": []}
    return {
        **bucket,
        "period": period,
        "bucket": key,
        "first_day": span.start.date().isoformat(),
        "last_day": (span.end - timedelta(days=1)).date().isoformat(),
        "cached": cached,
    }


def _cached(memory: "Memory", kind: str, key: str, fresh: list[Any]) -> dict[str, Any] | None:
    """The bucket from `state/buckets.json`, if the file was computed from the graph as it is
    and keeps that period."""
    try:
        data = json.loads(cache_path(memory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("freshness") != fresh:
        return None
    return next((b for b in data.get(kind) or [] if isinstance(b, dict) and b.get("period") == key), None)
