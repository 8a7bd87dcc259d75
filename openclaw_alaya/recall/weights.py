"""The weighted final score (issue 31): a recalled card's relevance weighed by time, importance,
use and tag hierarchy.

    score = relevance × (1 + Σ wᵢ·sᵢ) / (1 + Σ wᵢ)

`relevance` is what recall fused before (full-text, vector and entity lists, session context,
graph walk); each signal sᵢ is 0..1 and each weight wᵢ is in `recall.weights` (config.py,
RankWeights):
- recency: how recent the card's date is (`valid_from`, else when it was stored), by the design
  document's steps (today, this week, this month, this year, older) or a smooth decay;
- importance: the card's own, 0..1;
- access: its recalls, those on the card and those in the access log not yet folded
  (usage_now.py), log-scaled, averaged with how recent the last one was;
- tag: the best hierarchical match of its tags to the tags the recall asks about (tags.py).

The factor is at most 1, so it only lowers a score (what `_final_order` relies on to read cards
lazily), and at least 1 / (1 + Σ w): a bounded boost, so an old card that answers the question
clearly keeps its place over a new, often recalled one that barely does.
"""

from __future__ import annotations

import math
from datetime import datetime

from ..config import RankWeights
from ..models import Card
from . import tags as tag_hierarchy
from .periods import first_moment
from .usage_now import NONE, Unfolded

_DAY = 86400.0
# the design document's time steps (today 30, this week 20, this month 10, this year 5, older 0)
_STEPS = ((1, 30), (7, 20), (31, 10), (366, 5))


def steps(age_days: float) -> float:
    """The stepped recency of an age in days, 0..1."""
    return next((points / 30 for days, points in _STEPS if age_days < days), 0.0)


class Weigher:
    """The factor each card's score is multiplied by in one recall."""

    def __init__(self, weights: RankWeights, now: datetime, usage: Unfolded = NONE,
                 asked_tags: list[tuple[str, ...]] | None = None) -> None:
        self.w = weights
        self.now = now
        self.usage = usage
        self.asked = asked_tags or []
        self.total = 1 + weights.recency + weights.importance + weights.access + (weights.tag if self.asked else 0)

    def factor(self, card: Card) -> float:
        w = self.w
        gain = w.recency * self.recency(card) + w.importance * min(1.0, max(0.0, card.importance))
        gain += w.access * self.access(card)
        if self.asked:
            gain += w.tag * tag_hierarchy.grade(card.tags, self.asked)
        return (1 + gain) / self.total

    def _age_days(self, moment: datetime | None) -> float | None:
        return None if moment is None else max(0.0, (self.now - moment).total_seconds() / _DAY)

    def recency(self, card: Card) -> float:
        age = self._age_days(first_moment([card.valid_from, card.created_at], self.now.tzinfo))
        if age is None:
            return 0.0
        if self.w.recency_shape == "decay":
            return 0.5 ** (age / self.w.recency_half_life_days)
        return steps(age)

    def access(self, card: Card) -> float:
        count = card.access_count + self.usage.count(card.id)
        if not count:
            return 0.0
        frequency = min(1.0, math.log1p(count) / math.log1p(self.w.access_saturation))
        last = first_moment([card.last_accessed], self.now.tzinfo)
        unfolded = self.usage.last.get(card.id)
        if unfolded is not None:
            at = datetime.fromtimestamp(unfolded, self.now.tzinfo)
            last = at if last is None else max(last, at)
        age = self._age_days(last)
        return (frequency + (steps(age) if age is not None else 0.0)) / 2
