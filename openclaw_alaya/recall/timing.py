"""Time as a recall signal (issue 18): which cards a recall's period keeps or ranks lower, and
which cards answer a question asking *when*.

- `since`/`until` keep only the cards dated inside that range, as entries and along the walk;
- a time phrase or date in the query ("last week", 上周, "around Nov 27", 2023年5月) is no word
  to search for when it is relative to now, and the cards dated outside its period score
  `recall.outside_period` of what they would, without being dropped: people say "last week"
  loosely;
- a question asking when something happened ("when did …", 什么时候) is answered by the card
  that says when: among the best hits, a card whose content states a date other than its own
  day (a date in its text, a relative one the distiller resolved: "[yesterday = 7 May 2023]")
  scores 1 + `recall.dated_boost` times as much. A bounded boost, never a filter: every card of
  a conversation carries its session's day, and the card about the event may state none.

A card is dated by `periods.first_moment`: its `valid_from`, else its session's start.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection
from datetime import date, datetime
from typing import Protocol, TypeVar

from ..config import RecallConfig
from ..distill.dates import ABS_DATE_RE, render_cn, render_date, resolve_relative
from ..store.ports.graph import GraphReads
from .periods import Period, aware, find_phrase, first_moment

# "When did …", "when is …" and a question that opens with "when"; not "who helps her when she …"
_ASKS_WHEN = re.compile(
    r"(?:^|[.?!]\s*)when\b|\bwhen\s+(?:did|do|does|was|were|is|are|will|would|has|have|had)\b"
    r"|\b(?:what|which)\s+(?:date|day|month|year)\b|\bhow\s+long\s+ago\b"
    r"|什么时候|何时|哪天|哪一天|几号|哪年|哪一年|哪个月|几月份|多久以前",
    re.I,
)

# a "when" question reads the content of the best `_DATED_REACH` × `top_k` hits: on LoCoMo a
# dated card further down never reached the budget, and reading all candidates doubled recall
_DATED_REACH = 2


class Scored(Protocol):
    score: float


H = TypeVar("H", bound=Scored)


def asks_when(question: str) -> bool:
    """Whether the question asks for the date something happened."""
    return _ASKS_WHEN.search(question) is not None


def states_date(content: str, day: date | None) -> bool:
    """Whether `content` says when, beyond `day`, the day its card is dated by: a card the
    distiller heads with its session's day says no more than the session does."""
    if day is not None:
        for own in (render_date(day), render_cn(day), day.isoformat()):
            content = content.replace(own, " ")
    return ABS_DATE_RE.search(content) is not None or bool(day and resolve_relative(content, day))


class TimeSignal:
    """The period one recall is about, read from its range or its query, and whether it asks
    when: what `keep` filters and `rank` rescores."""

    def __init__(self, text: str, since: datetime | None, until: datetime | None, now: datetime | None,
                 graph: GraphReads, config: RecallConfig) -> None:
        now = aware(now)
        found = find_phrase(text, now) if text else None
        self.text = found[1] if found else text  # "last week" is no word to search for
        self.strict = since is not None or until is not None
        if self.strict:  # an explicit range wins over the query's phrase
            self.period: Period | None = Period(since, until)
        else:
            self.period = found[0] if found else None
        self.asks_when = asks_when(text)
        self.zone = now.tzinfo
        self.graph = graph
        self.config = config
        self.moments: dict[str, datetime | None] = {}

    def keep(self, hits: dict[str, H]) -> dict[str, H]:
        """The hits inside a strict range (all of them otherwise)."""
        if not self.strict:
            return hits
        inside = self._inside(hits)
        return {cid: hit for cid, hit in hits.items() if cid in inside}

    def rank(self, hits: dict[str, H]) -> None:
        """Rescore the hits: lower outside a phrase's period, higher for stating a date when the
        question asks when."""
        if self.period is not None and not self.strict:
            inside = self._inside(hits)
            for cid, hit in hits.items():
                if cid not in inside:
                    hit.score *= self.config.outside_period
        if self.asks_when and self.config.dated_boost:
            best = heapq.nlargest(_DATED_REACH * self.config.top_k, hits, key=lambda cid: hits[cid].score)
            self._dates(best)
            for cid, card in self.graph.get_cards(best).items():
                moment = self.moments[cid]
                if states_date(card.content, moment.date() if moment else None):
                    hits[cid].score *= 1 + self.config.dated_boost

    def _dates(self, ids: Collection[str]) -> None:
        """Date the cards not dated yet."""
        missing = [cid for cid in ids if cid not in self.moments]
        if missing:
            times = self.graph.card_times(missing)
            self.moments.update((cid, first_moment(times[cid], self.zone) if cid in times else None) for cid in missing)

    def _inside(self, ids: Collection[str]) -> set[str]:
        self._dates(ids)
        return {cid for cid in ids if self.moments[cid] in self.period}
