"""Forget (docs/architecture.md, "Cards, relations, temperature"; issue 31: forgetting removes
noise, not knowledge). What the owner stated — a card of origin `owner` or `manual` (facts,
preferences, decisions, `alaya remember`, Retain lines), or one stored before origins were
recorded, which may be either — is never forgotten by age alone. A card leaves L2 and L1 only
when it is not depended on (no incoming DEPENDS_ON, CAUSED_BY or CAUSES edge), recalled at most
`introspect.forget_max_access` times, and old (created, and last recalled, at least
`introspect.forget_min_age_days` ago), for one of these reasons, checked in this order:

- `filler`: the model's filler (any origin): fewer than `introspect.forget_filler_words` words
  that carry meaning once speaker heads and filler words ("thanks", "ok", "hi") are left out;
- `superseded`: not owner-stated, its fact was superseded (`valid_until`) that long ago, and it
  is nobody's history: an owner's superseded fact stays, and so does any superseded card on a
  live card's chain (reached from a still-valid card over `CONTRADICTS` through superseded
  cards only, as recall/history.py walks it for "what was it before?"). An older value of a
  setting that is still current is what that question needs, whichever turns its card cites (a
  question/answer card is of origin `agent` even when the answer is the owner's); a chain whose
  current card is gone is nobody's history and may go;
- `unused`: not owner-stated, COLD, and of importance at most `introspect.forget_max_importance`.

(Duplicates are consolidate's: a merged card is gone already, its usage summed into the kept one.)

A card on a live card's chain is spared by every reason as a depended-on
card is (`spared`).

L3 keeps everything: the session files and the card's context file stay, and the forget is
recorded in `raw/curation.jsonl` as {"op": "forget", "card", "ts", "reason"} so that `alaya
rebuild` does not bring the card back and metrics can count forgets by reason. `alaya
introspect --dry-run` lists each card it would forget with its reason and until when it could
be restored.

A forget can be undone until purged: a copy of each card is saved first, under the same write
hold (curate/restore.py, state/forgotten/), `alaya restore CARD` puts it back, and a card once
restored is never forgotten by age again. `purge_copies` (run by the same step) deletes the
copies older than `introspect.forget_purge_after_days`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from ..curate import restore
from ..distill.cues import FILLER_WORDS
from ..models import OWNER_STATED
from ..store import forgotten, generation
from ..store.raw import CURATION_LOG
from ..text import content_words
from .common import as_datetime, iso, parse_time

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph
    from ..store.ports.upkeep import CardRow

_HEAD = re.compile(r"^[^:\n]{1,60}:\s", re.M)  # "User (3 May 2026): " before each turn's text


def meaning_words(content: str) -> int:
    """How many words of `content` carry meaning: speaker heads, stop words and filler left out."""
    return sum(1 for w in content_words(_HEAD.sub("", content or "")) if w not in FILLER_WORDS)


def _days_since(moment: str | None, now: Any) -> float | None:
    when = parse_time(moment)
    return None if when is None else (now - when).total_seconds() / 86400


def reason(row: "CardRow", protected: set[str], now: Any, config: Any) -> str | None:
    """Why this card may be forgotten now (the module docstring's rules), or None."""
    if row.id in protected or row.access_count > config.forget_max_access:
        return None
    age, seen = _days_since(row.created_at, now), _days_since(row.last_accessed, now)
    if age is None or age < config.forget_min_age_days or (seen is not None and seen < config.forget_min_age_days):
        return None
    if meaning_words(row.content) < config.forget_filler_words:
        return "filler"
    if row.origin in OWNER_STATED:
        return None
    ended = _days_since(row.valid_until, now)
    if ended is not None and ended >= config.forget_min_age_days:
        return "superseded"
    if row.tier == "COLD" and row.importance <= config.forget_max_importance:
        return "unused"
    return None


def history_of_live(graph: "CardGraph", rows: list["CardRow"]) -> set[str]:
    """Those of `rows` that are superseded cards on a live card's chain (the module docstring).
    The walk goes over `CONTRADICTS` through superseded cards only, one read per step of the
    longest chain, and looks up only the cards it reaches that `rows` does not hold."""
    superseded = {r.id: bool(r.valid_until) for r in rows}  # False: still valid
    linked: dict[str, set[str]] = defaultdict(set)
    frontier, walked = {i for i, old in superseded.items() if old}, set()
    while frontier:
        walked |= frontier
        for src, _rel, dst, _weight in graph.neighbours(sorted(frontier), ["CONTRADICTS"]):
            linked[src].add(dst)
            linked[dst].add(src)
        reached = {o for card in frontier for o in linked[card]}
        if unknown := sorted(reached - superseded.keys()):
            superseded.update({r.id: bool(r.valid_until) for r in graph.card_rows(unknown)})
        frontier = {o for o in reached if superseded.get(o) and o not in walked}
    kept: set[str] = set()
    frontier = {o for card in walked for o in linked[card] if superseded.get(o) is False}  # the live ends
    while frontier:
        frontier = {o for card in frontier for o in linked[card] if superseded.get(o) and o not in kept}
        kept |= frontier
    return kept & {r.id for r in rows if r.valid_until}


def spared(graph: "CardGraph", rows: list["CardRow"]) -> set[str]:
    """Those of `rows` no reason may forget: depended on, or a live card's history."""
    return graph.depended_on() | history_of_live(graph, rows)


def eligible(rows: list["CardRow"], protected: set[str], now: Any, config: Any) -> dict[str, str]:
    """card id → reason, for the cards that may be forgotten now."""
    return {row.id: why for row in rows if (why := reason(row, protected, now, config)) is not None}


def report_of(rows: list["CardRow"], chosen: dict[str, str], moment: Any, config: Any) -> dict[str, Any]:
    """The step's report: each card it would forget (the first 50) with its reason, title, and
    until when `alaya restore` can bring it back."""
    titles = {r.id: r.title for r in rows}
    until = restore.until(iso(moment), config.forget_purge_after_days)
    return {"cold": sum(1 for r in rows if r.tier == "COLD"), "eligible": len(chosen), "forgotten": 0,
            "reasons": dict(sorted(Counter(chosen.values()).items())),
            "restorable_days": config.forget_purge_after_days,
            "cards": [{"card": c, "reason": why, "title": titles.get(c, ""), "restorable_until": until}
                      for c, why in list(chosen.items())[:50]]}


def records(forgotten: dict[str, str], stamp: str) -> list[dict[str, Any]]:
    """The curation log's lines for these forgets (metrics counts them by `reason`)."""
    return [{"op": "forget", "card": c, "ts": stamp, "reason": why} for c, why in forgotten.items()]


def forget(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    moment = as_datetime(now)
    config = memory.config.introspect
    kept = restore.restored(memory)
    with memory.reading("introspect forget (reading cards)") as graph:
        rows = graph.card_rows()
        protected = spared(graph, rows) | kept
    chosen = eligible(rows, protected, moment, config)
    report = report_of(rows, chosen, moment, config)
    if dry_run or not chosen:
        return {**report, "copies_purged": purge_copies(memory, now=moment, dry_run=dry_run)}
    with memory.writing("introspect forget") as graph:
        with graph:
            # re-check under the lock: a card recalled, warmed up, restored or newly depended on stays
            now_rows = graph.card_rows(list(chosen))
            now_chosen = eligible(now_rows, spared(graph, now_rows) | restore.restored(memory), moment, config)
            forgotten.save(memory.dirs.state, restore.copies_of(graph, now_chosen, iso(moment)))  # before L2 changes
            memory.raw.append_log(CURATION_LOG, records(now_chosen, iso(moment)))
            graph.remove_cards(list(now_chosen))
        memory.index.delete_cards(list(now_chosen))
    generation.bump(memory.dirs.state, now_chosen)  # a cached injected block must not show them (issue 33)
    report["forgotten"] = len(now_chosen)
    return {**report, "copies_purged": purge_copies(memory, now=moment)}


def purge_copies(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> int:
    """The step's last part (batched or not): the saved copies past the purge window deleted;
    how many."""
    return len(restore.purge_expired(memory, as_datetime(now), dry_run=dry_run))
