"""Introspect's `core` step (issue 31): a small curated core of cards, promoted by evidence of
use, as OpenClaw's dreaming promotes into MEMORY.md (its deep phase). Session start injects the
core first (bridge/inject.py); with a workspace, it is also written into MEMORY.md
(core_writeback.py).

Evidence: the usage history (usage.py: the distinct questions that returned a card, the
distinct days, the times returned) and the graph (the card still valid, its importance, and an
injectable origin: `provenance.inject_origins`; a stranger's card is never promoted).

    score = 0.35·recency + 0.25·diversity + 0.15·consolidation + 0.10·frequency + 0.15·importance
    recency       = 0.5 ^ (days since last returned / core.half_life_days)
    diversity     = min(distinct queries / core.min_queries, 1)
    consolidation = min(distinct days / core.min_days, 1)
    frequency     = min(times returned / (2·core.min_recalls), 1)

Promoted when score ≥ `core.min_score`, returned ≥ `min_recalls` times by ≥ `min_queries`
questions on ≥ `min_days` days, the last within `max_age_days`. The weights follow OpenClaw's
deep ranking (frequency, query diversity, recency, multi-day consolidation), with importance
standing in for its relevance signal, which an offline store does not have: the minimum evidence
recalled today scores 0.85 at importance 0.5 and stays above 0.75 for about a week, so recency
is what the score decides beyond the gates.

A round, in order: members whose card was merged take its survivor's place, superseded ones
their successor's (a valid card it CONTRADICTS, of an injectable origin); members whose card
is gone, superseded without successor or no longer injectable are dropped; new candidates fill
the free places best first, then displace the weakest members they outscore. A round dropping
more than `core.max_drop` of the prior core (and more than one card) is refused: the core stays
as it was, and the report says so; displacements stop before that line. Members are otherwise
kept: like MEMORY.md, the core does not decay by itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from ..bridge import core_state
from ..bridge.inject import injectable
from . import usage as usage_mod
from .common import as_datetime, iso

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..memory import Memory
    from ..models import Card

WEIGHTS = {"recency": 0.35, "diversity": 0.25, "consolidation": 0.15, "frequency": 0.10, "importance": 0.15}


@dataclass
class Evidence:
    recalls: int
    queries: int
    days: int
    last_day: str | None
    importance: float

    def dump(self) -> dict[str, Any]:
        return {"recalls": self.recalls, "queries": self.queries, "days": self.days, "last_day": self.last_day,
                "importance": round(self.importance, 3)}


def evidence_of(use: usage_mod.CardUsage | None, card: "Card") -> Evidence:
    if use is None:
        return Evidence(0, 0, 0, None, card.importance or 0.0)
    return Evidence(use.returned, len(use.queries), len(use.days), max(use.days) if use.days else None,
                    card.importance or 0.0)


def age_days(ev: Evidence, today: date) -> float:
    return math.inf if ev.last_day is None else max((today - date.fromisoformat(ev.last_day)).days, 0)


def score(ev: Evidence, cfg: "CoreConfig", today: date) -> float:
    """The module docstring's score, in [0, 1]."""
    age = age_days(ev, today)
    parts = {"recency": 0.0 if math.isinf(age) else 0.5 ** (age / cfg.half_life_days),
             "diversity": min(ev.queries / cfg.min_queries, 1.0),
             "consolidation": min(ev.days / cfg.min_days, 1.0),
             "frequency": min(ev.recalls / (2 * cfg.min_recalls), 1.0),
             "importance": min(max(ev.importance, 0.0), 1.0)}
    return round(sum(WEIGHTS[k] * v for k, v in parts.items()), 4)


def why_not(ev: Evidence, value: float, cfg: "CoreConfig", today: date) -> str | None:
    """The first gate the evidence fails (None: promotable)."""
    if ev.recalls < cfg.min_recalls:
        return f"recalled {ev.recalls} times (< {cfg.min_recalls})"
    if ev.queries < cfg.min_queries:
        return f"by {ev.queries} distinct queries (< {cfg.min_queries})"
    if ev.days < cfg.min_days:
        return f"on {ev.days} days (< {cfg.min_days})"
    if age_days(ev, today) > cfg.max_age_days:
        return f"last recalled over {cfg.max_age_days:g} days ago"
    if value < cfg.min_score:
        return f"score {value:.2f} (< {cfg.min_score:g})"
    return None


def _eligible(card: "Card | None", origins: list[str]) -> bool:
    return card is not None and not card.valid_until and (card.origin or "unknown") in origins


def _successor(graph: Any, card_id: str, origins: list[str]) -> "Card | None":
    """The valid, injectable card that superseded this one (the resolver links them CONTRADICTS)."""
    others = {b if a == card_id else a for a, _rel, b, _w in graph.neighbours([card_id], ["CONTRADICTS"])} - {card_id}
    found = [c for c in graph.get_cards(sorted(others)).values() if _eligible(c, origins)]
    return max(found, key=lambda c: (c.valid_from or c.created_at or "", c.id), default=None)


def plan(memory: "Memory", *, now: Any = None) -> dict[str, Any]:
    """The next core and what changes (nothing written): `cards` (the new state's entries),
    `promoted`, `replaced`, `dropped`, `displaced`, `refused` (why, or None), `candidates`."""
    cfg = memory.config.core
    moment = as_datetime(now)
    today, stamp = moment.date(), iso(moment)
    origins = injectable(memory)
    history = usage_mod.load(memory)
    prior = core_state.load(memory)["cards"]
    with memory.reading("introspect core") as graph:
        merged = graph.resolve_ids([*history.cards, *(e["id"] for e in prior)])
        uses: dict[str, usage_mod.CardUsage] = {}
        for cid, use in history.cards.items():  # a merged card's evidence is its survivor's
            into = uses.setdefault(merged.get(cid, cid), usage_mod.CardUsage())
            into.queries = sorted(set(into.queries) | set(use.queries))
            into.days = sorted(set(into.days) | set(use.days))
            into.returned += use.returned
        cards = graph.get_cards([*uses, *(merged.get(e["id"], e["id"]) for e in prior)])
        members: list[dict[str, Any]] = []
        replaced, dropped = [], []
        for entry in prior:
            cid = merged.get(entry["id"], entry["id"])
            card = cards.get(cid)
            if card is not None and card.valid_until and (card.origin or "unknown") in origins:
                card = _successor(graph, cid, origins)
                cid = card.id if card is not None else cid
            if not _eligible(card, origins):
                dropped.append({"id": entry["id"], "why": "gone, superseded or no longer injectable"})
                continue
            if cid != entry["id"]:
                replaced.append({"id": entry["id"], "by": cid})
                cards[cid] = card
            if all(m["id"] != cid for m in members):
                members.append({**entry, "id": cid})
    for m in members:  # scored on today's evidence, so the weakest can be told
        ev = evidence_of(uses.get(m["id"]), cards[m["id"]])
        m.update(score=score(ev, cfg, today), evidence=ev.dump())
    held = {m["id"] for m in members}
    candidates, waiting = [], []
    for cid, use in uses.items():
        if cid in held or not _eligible(cards.get(cid), origins):
            continue
        ev = evidence_of(use, cards[cid])
        value = score(ev, cfg, today)
        reason = why_not(ev, value, cfg, today)
        if reason is None:
            candidates.append({"id": cid, "score": value, "promoted_at": stamp, "evidence": ev.dump()})
        elif use.returned >= cfg.min_recalls:
            waiting.append({"id": cid, "score": value, "why": reason})
    candidates.sort(key=lambda e: (-e["score"], e["id"]))
    report: dict[str, Any] = {"prior": len(prior), "replaced": replaced, "dropped": dropped, "promoted": [],
                              "displaced": [], "not_promoted": sorted(waiting, key=lambda e: -e["score"])[:10],
                              "refused": None}
    if core_state.too_many_lost(len(dropped), len(prior), cfg.max_drop):
        report["refused"] = (f"would drop {len(dropped)} of the {len(prior)} cards of the core (more than "
                             f"{cfg.max_drop:.0%}): core unchanged; set core.max_drop to 1 for one run to accept it")
        report["cards"] = prior
        return report
    for cand in candidates:
        if len(members) < cfg.max_cards:
            members.append(cand)
            report["promoted"].append(cand["id"])
            continue
        weakest = min(members, key=lambda m: (m["score"], m["id"]), default=None)
        lost = len(dropped) + len(report["displaced"]) + 1
        if weakest is None or weakest["score"] >= cand["score"] or core_state.too_many_lost(lost, len(prior), cfg.max_drop):
            break
        members.remove(weakest)
        report["displaced"].append({"id": weakest["id"], "by": cand["id"]})
        members.append(cand)
        report["promoted"].append(cand["id"])
    report["cards"] = sorted(members, key=lambda m: (-m["score"], m["id"]))[: cfg.max_cards]
    return report


def run(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    """The step: plan the round, keep it in state/core.json (unless a dry run or refused), and
    write it back to the workspaces' MEMORY.md (core_writeback.py). The report counts what
    changed and lists the ids."""
    from . import core_writeback

    cfg = memory.config.core
    if cfg.max_cards == 0:
        return {"cards": 0, "note": "off (core.max_cards 0)"}
    report = plan(memory, now=now)
    out = {"cards": len(report["cards"]), **{k: report[k] for k in ("promoted", "replaced", "dropped", "displaced")},
           "refused": report["refused"], "not_promoted": report["not_promoted"]}
    if dry_run:
        return {**out, "dry_run": True}
    state = core_state.load(memory)
    stamp = iso(as_datetime(now))
    if report["refused"]:
        state["refused"] = {"at": stamp, "why": report["refused"]}
    else:
        state = {"updated_at": stamp, "cards": report["cards"]}
    core_state.save(memory, state)
    if cfg.writeback:
        out["memory_md"] = core_writeback.write_back(memory)
    return out
