"""Memory health, `alaya metrics` (issue 31; the seed's "监控指标"): whether the memory is getting
better or filling with noise, computed from the store as it is now. The definitions are the
README's ("Memory health"); in short:

- recall hit rate: recalls that returned at least one card / all recalls, over everything kept
  (`state/usage.json` plus the access-log lines not folded yet) and over the last 7 and 30 days
  of the memory's clock, today included;
- write signal-to-noise: of the cards created at least `MATURE_DAYS` days ago (they had a week
  to be needed), the share that recall has returned at least once (`access_count` > 0, or named
  in the usage history or an unfolded log line), overall and per origin;
- type entropy: Shannon entropy in bits of the card types and of the typed entities, with the
  number k of distinct types and H / log2 k (0 when k < 2): near 1 many equally used types,
  near 0 one type dominates; a growing k with a high normalised H reads as fragmentation;
- cards per origin, per session kind and per tier (tiers as the graph holds them);
- cards forgotten by reason: introspect's forgets in `raw/curation.jsonl` (their `reason`, or
  "age" for the rule that had none) not undone by `alaya restore` (counted as `restored`), and
  the owner's in `raw/tombstones.jsonl` ("owner").

Reads only: one shared-lock hold for the graph, the usage history and the unfolded access log
together (a fold merges a log into the history and removes it in one write-lock hold, so
nothing is counted twice), then the two L3 logs.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..store import tombstones
from ..store.raw import CURATION_LOG, read_log
from . import access, usage
from .common import as_datetime, parse_time

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import CardCensus

# A card younger than this has not had its chance to be recalled yet; a week is also when
# cool-down first turns an unrecalled card WARM, so the two read on the same scale.
MATURE_DAYS = 7
WINDOWS = (7, 30)  # the hit rate's recent windows, in days
TIER_ORDER = ("HOT", "WARM", "COLD")  # shown first when present; any other tier follows by name
DEFAULT_TIER = "WARM"  # what maintenance reads a card stored without a tier as (CardRow)


def compute(memory: "Memory", *, now: Any = None, forgotten: bool = True) -> dict[str, Any]:
    """Every metric at `now` (the memory's clock when None); `forgotten=False` skips reading the
    L3 logs (status's cheap line)."""
    moment = as_datetime(now)
    memory.dirs.require()
    with memory.reading("metrics") as graph:
        census = graph.card_census()
        entity_types = graph.entity_type_counts()
        history = usage.load(memory)
        log = memory.dirs.access_log
        for path in [*access.pending(memory), log]:
            for line in read_log(path):
                history.add(line)
    report: dict[str, Any] = {
        "at": moment.date().isoformat(),
        "cards": len(census),
        "recall": hit_rates(history.days, moment),
        "signal": signal(census, set(history.cards), moment),
        "entropy": {"card_types": entropy(Counter(c.type or "concept" for c in census)),
                    "entity_types": {**entropy(Counter({k: n for k, n in entity_types.items() if k})),
                                     "untyped": entity_types.get(None, 0)}},
        "cards_by_origin": _most_first(Counter(c.origin or "unknown" for c in census)),
        "cards_by_session_kind": _most_first(Counter(c.session_kind or "unknown" for c in census)),
        "tiers": tiers(census),
    }
    if forgotten:
        report["forgotten"] = forgotten_by_reason(memory)
    return report


def hit_rates(days: dict[str, dict[str, int]], moment: datetime) -> dict[str, Any]:
    """Recalls, hits and their ratio overall and over each window ending on `moment`'s day."""
    out = _rate(days.values())
    today = moment.date()
    for n in WINDOWS:
        first = (today - timedelta(days=n - 1)).isoformat()
        out[f"last_{n}_days"] = _rate(v for d, v in days.items() if first <= d <= today.isoformat())
    return out


def _rate(counts: Any) -> dict[str, Any]:
    counts = list(counts)
    recalls = sum(c["recalls"] for c in counts)
    hits = sum(c["hits"] for c in counts)
    return {"recalls": recalls, "hits": hits, "hit_rate": _ratio(hits, recalls)}


def signal(census: list["CardCensus"], returned: set[str], moment: datetime) -> dict[str, Any]:
    """Of the cards created `MATURE_DAYS` or more before `moment`, those recall has returned."""
    cutoff = moment - timedelta(days=MATURE_DAYS)
    by_origin: dict[str, list[int]] = {}
    for card in census:
        created = parse_time(card.created_at)
        if created is None or created > cutoff:
            continue
        tally = by_origin.setdefault(card.origin or "unknown", [0, 0])
        tally[0] += 1
        tally[1] += 1 if card.access_count > 0 or card.id in returned else 0
    cards = sum(t[0] for t in by_origin.values())
    hits = sum(t[1] for t in by_origin.values())
    return {"min_age_days": MATURE_DAYS, "cards": cards, "returned": hits, "ratio": _ratio(hits, cards),
            "by_origin": {o: {"cards": t[0], "returned": t[1], "ratio": _ratio(t[1], t[0])}
                          for o, t in sorted(by_origin.items(), key=lambda kv: (-kv[1][0], kv[0]))}}


def entropy(counts: Counter) -> dict[str, Any]:
    """Shannon entropy (bits) of a distribution, its number of values k, and H / log2 k."""
    total = sum(counts.values())
    bits = max(0.0, -sum(n / total * math.log2(n / total) for n in counts.values() if n)) if total else 0.0
    k = sum(1 for n in counts.values() if n)
    return {"types": k, "bits": round(bits, 4), "normalised": round(bits / math.log2(k), 4) if k > 1 else 0.0,
            "counts": _most_first(counts)}


def tiers(census: list["CardCensus"]) -> dict[str, int]:
    counts = Counter(c.tier or DEFAULT_TIER for c in census)
    known = [t for t in TIER_ORDER if t in counts]
    return {t: counts[t] for t in known + sorted(set(counts) - set(known))}


def forgotten_by_reason(memory: "Memory") -> dict[str, Any]:
    """Cards forgotten, per reason: introspect's (curation log; "age" where no reason was kept)
    less those `alaya restore` brought back (`restored`), and the owner's deliberate ones
    (tombstones)."""
    gone: list[tuple[str, str]] = []  # (card, reason) of introspect's forgets, in log order
    restored = 0
    for record in memory.raw.read_log(CURATION_LOG):
        card = str(record.get("card") or "")
        if record.get("op") == "forget" and card:
            gone.append((card, str(record.get("reason") or "age")))
        elif record.get("op") == "restore" and (undone := [g for g in gone if g[0] == card]):
            gone.remove(undone[-1])
            restored += 1
    reasons: Counter = Counter(why for _card, why in gone)
    reasons["owner"] += sum(1 for r in tombstones.read(memory.raw) if r.get("kind") == "card" and r.get("id"))
    return {"total": sum(reasons.values()), "by_reason": _most_first(+reasons), "restored": restored}


def headline(report: dict[str, Any]) -> str:
    """The metrics in one line (status)."""
    recall = report["recall"]
    if recall["recalls"]:
        week = recall["last_7_days"]["hit_rate"]
        hits = (f"recall hit rate {_percent(recall['hit_rate'])} of {recall['recalls']} recalls"
                f" (last 7 days {_percent(week)})")
    else:
        hits = "no recalls yet"
    sig = report["signal"]
    noise = (f"signal-to-noise {_percent(sig['ratio'])} ({sig['returned']} of {sig['cards']} cards"
             f" ≥ {sig['min_age_days']} d old returned)") if sig["cards"] else "signal-to-noise: no card a week old yet"
    cards, entities = report["entropy"]["card_types"], report["entropy"]["entity_types"]
    return (f"{hits}; {noise}; type entropy: cards {cards['bits']:.2f} bits ({cards['types']} types),"
            f" entities {entities['bits']:.2f} bits ({entities['types']} types)")


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _most_first(counts: Counter) -> dict[str, int]:
    return dict(sorted(((str(k), int(n)) for k, n in counts.items()), key=lambda kv: (-kv[1], kv[0])))
