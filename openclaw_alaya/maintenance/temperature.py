"""Cool down: every card's temperature recomputed, tiers reassigned (docs/architecture.md,
"Cards, relations, temperature").

    temperature = recency × frequency × relevance                       (each in [0, 1])

    recency    = 0.5 ** (days since the card was last recalled — or created, if never —
                         / temperature.half_life_days)
    frequency  = F + (1 − F) · min(1, ln(1 + access_count) / ln(1 + temperature.frequency_saturation))
                 with F = temperature.frequency_floor (a card nobody recalled yet is not worthless)
    relevance  = R + (1 − R) · importance,  R = temperature.relevance_floor
                 (halved for a card whose fact was superseded: `valid_until` in the past)

A new card starts HOT at temperature 1.0 (`models.Card`): what was just learnt is what the
next sessions most likely need. Tiers, recomputed here: HOT when the card was created at most
`temperature.hot_days` (7) days ago, or recalled more than `temperature.hot_accesses` (10)
times, or its temperature is at or above `temperature.hot_threshold` (0.7); else WARM at or
above `warm_threshold` (0.3), COLD below. At most `temperature.hot_limit` cards are HOT: the
coolest of the rest are demoted to WARM. With the defaults (F 0.75, R 0.6, half-life 30 days) a
card of average importance (0.5) that nobody recalls is HOT for its first week (its temperature
0.6 and falling), WARM after, and COLD after one half-life; a card recalled more than ten times
stays HOT (unless the HOT limit demotes it).

Tiers save cost, never findability (issue 31): every card, COLD included, keeps its L1 row (its
full-text row and its vector), so recall finds a card nobody asked about for a year by its words
and by its meaning. Before issue 31 a COLD card lost that row, and `alaya recall "billing pool"`
found nothing 49 days after the card was written; a card of such a store without a row gets it
back at the next cool-down. What the tiers decide is what is HOT (session start, ranking) and
what forget may consider (forget.py); `footprint` says what L1 holds per tier.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import TemperatureConfig
from ..models import index_row, index_text
from ..store.ports.upkeep import CardRow
from .common import as_datetime, parse_time

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import UpkeepGraph

_SUPERSEDED_RELEVANCE = 0.5


def temperature(
    *,
    created_at: str | None,
    last_accessed: str | None,
    access_count: int,
    importance: float,
    now: datetime,
    config: TemperatureConfig,
    valid_until: str | None = None,
) -> float:
    """The formula of the module docstring, for one card."""
    moments = [m for m in (parse_time(created_at), parse_time(last_accessed)) if m is not None]
    age_days = max(0.0, (now - max(moments)).total_seconds() / 86400) if moments else 0.0
    recency = 0.5 ** (age_days / config.half_life_days)
    saturation = min(1.0, math.log1p(max(0, access_count)) / math.log1p(config.frequency_saturation))
    frequency = config.frequency_floor + (1 - config.frequency_floor) * saturation
    relevance = config.relevance_floor + (1 - config.relevance_floor) * min(1.0, max(0.0, importance))
    ended = parse_time(valid_until)
    if ended is not None and ended <= now:
        relevance *= _SUPERSEDED_RELEVANCE
    return recency * frequency * relevance


def tier_of(value: float, config: TemperatureConfig, *, age_days: float | None = None, access_count: int = 0) -> str:
    """The tier of a card at this temperature, created `age_days` ago (None: unknown) and
    recalled `access_count` times (the module docstring's rule, before the HOT limit)."""
    if value >= config.hot_threshold or access_count > config.hot_accesses:
        return "HOT"
    if age_days is not None and age_days <= config.hot_days:
        return "HOT"
    if value >= config.warm_threshold:
        return "WARM"
    return "COLD"


def _age_days(created_at: str | None, now: datetime) -> float | None:
    created = parse_time(created_at)
    return None if created is None else max(0.0, (now - created).total_seconds() / 86400)


def histogram(values: list[float], bins: int = 10) -> list[dict[str, Any]]:
    counts, edges = np.histogram(np.clip(values, 0, 1), bins=bins, range=(0.0, 1.0)) if values else (
        [0] * bins, np.linspace(0, 1, bins + 1))
    return [{"from": round(float(edges[i]), 2), "to": round(float(edges[i + 1]), 2), "cards": int(counts[i])}
            for i in range(bins)]


def plan(rows: list[CardRow], indexed: set[str], now: datetime, config: TemperatureConfig) -> dict[str, Any]:
    """New temperature and tier per card, the HOT overflow, and the cards whose L1 row is missing."""
    temps = {
        r.id: temperature(created_at=r.created_at, last_accessed=r.last_accessed, access_count=r.access_count,
                          importance=r.importance, now=now, config=config, valid_until=r.valid_until)
        for r in rows
    }
    by_id = {r.id: r for r in rows}
    tiers = {cid: tier_of(t, config, age_days=_age_days(by_id[cid].created_at, now),
                          access_count=by_id[cid].access_count) for cid, t in temps.items()}
    hot = sorted((cid for cid, tier in tiers.items() if tier == "HOT"), key=lambda c: (-temps[c], c))
    demoted = hot[config.hot_limit:]
    for cid in demoted:
        tiers[cid] = "WARM"
    updates = [
        {"id": cid, "temperature": round(temps[cid], 4), "tier": tiers[cid]}
        for cid in temps
        if tiers[cid] != by_id[cid].tier or abs(round(temps[cid], 4) - by_id[cid].temperature) >= 1e-4
    ]
    transitions = Counter(f"{by_id[cid].tier}->{tiers[cid]}" for cid in temps if tiers[cid] != by_id[cid].tier)
    add_rows = sorted(cid for cid in tiers if cid not in indexed)
    return {
        "temps": temps, "tiers": tiers, "updates": updates, "transitions": dict(sorted(transitions.items())),
        "demoted": demoted, "add_rows": add_rows,
    }


def cool_down(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    """Recompute temperatures and tiers; a card without an L1 row gets it back."""
    moment = as_datetime(now)
    config = memory.config.temperature
    with memory.reading("introspect cool-down (reading cards)") as graph:
        rows = graph.card_rows()
        indexed = set(memory.index.card_ids())
    p = plan(rows, indexed, moment, config)
    report = {
        "cards": len(rows),
        "tiers": dict(Counter(p["tiers"].values())),
        "transitions": p["transitions"],
        "demoted_hot_limit": len(p["demoted"]),
        "embeddings_restored": len(p["add_rows"]),
        "histogram": histogram(list(p["temps"].values())),
    }
    if dry_run or not (p["updates"] or p["add_rows"]):
        return report
    restore: list[Any] = []
    if p["add_rows"]:
        with memory.reading("introspect cool-down (cards to re-index)") as graph:
            restore = list(graph.get_cards(p["add_rows"]).values())
    vectors = memory.embedder.embed([index_text(card) for card in restore]) if restore else None
    with memory.writing("introspect cool-down") as graph:
        with graph:
            apply_updates(graph, p["updates"])
            present = graph.present_ids([c.id for c in restore])
        keep = [i for i, card in enumerate(restore) if card.id in present]
        if keep:
            memory.index.upsert_cards([index_row(restore[i]) for i in keep], vectors[keep])
    return report


def apply_updates(graph: "UpkeepGraph", updates: list[dict[str, Any]]) -> None:
    graph.set_card_columns(updates, ["temperature", "tier"])


def footprint(memory: "Memory") -> dict[str, Any]:
    """What tiering costs and saves now, for `bench/year.py` (issue 31): cards per tier, L1 rows
    and L1 bytes on disk. Every tier keeps its row, so `l1_bytes_saved` is 0 and
    `unfindable_cards` (cards without a row) should be 0 too; the COLD tier saves session-start
    and ranking attention, not bytes."""
    with memory.reading("tier footprint") as graph:
        tiers = graph.tier_counts()
        rows = memory.index.card_count()
    cards = sum(tiers.values())
    return {"tiers": {str(k or "WARM"): v for k, v in sorted(tiers.items(), key=lambda kv: str(kv[0]))},
            "cards": cards, "l1_rows": rows, "unfindable_cards": max(0, cards - rows),
            "l1_bytes": memory.storage.footprint().l1, "l1_bytes_saved": 0}
