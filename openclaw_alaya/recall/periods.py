"""Periods of time for recall and `alaya summary`: what `--since`/`--until` accept, the time
phrases a query may carry ("what did we decide last week?", 上周我们决定了什么), the day, week
or month around a moment, and the moment a card belongs to.

Weeks run Monday to Sunday (ISO), as the time buckets' do (`recall/buckets.py`). Boundaries are
midnights in the zone of `now`, and a time that names no zone is read in that zone. `now` is
always passed in (UTC unless a caller fixes it: tests, `ALAYA_NOW`), so that an answer can be
reproduced.
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..distill.dates import add_months, parse_when
from ..errors import InputError


@dataclass(frozen=True)
class Period:
    """From `start` (included) to `end` (excluded); None leaves that side open."""

    start: datetime | None
    end: datetime | None

    def __contains__(self, moment: datetime | None) -> bool:
        return moment is not None and (self.start is None or moment >= self.start) and (
            self.end is None or moment < self.end)


def containing(unit: str, moment: datetime, shift: int = 0) -> Period:
    """The day, week or month `moment` falls in, moved `shift` of them (-1: the one before)."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        start = day + timedelta(days=shift)
        return Period(start, start + timedelta(days=1))
    if unit == "week":
        start = day - timedelta(days=day.weekday()) + timedelta(weeks=shift)
        return Period(start, start + timedelta(weeks=1))
    year, month = add_months(day.year, day.month, shift)
    start = day.replace(year=year, month=month, day=1)
    year, month = add_months(year, month, 1)
    return Period(start, start.replace(year=year, month=month))


# phrase -> (unit, shift): the period it names around `now`; English ones in any case
_PHRASES: dict[str, tuple[str, int]] = {
    "today": ("day", 0), "yesterday": ("day", -1),
    "this week": ("week", 0), "last week": ("week", -1),
    "this month": ("month", 0), "last month": ("month", -1),
    "今天": ("day", 0), "今日": ("day", 0), "昨天": ("day", -1), "昨日": ("day", -1),
    "本周": ("week", 0), "这周": ("week", 0), "这个星期": ("week", 0), "本星期": ("week", 0),
    "上周": ("week", -1), "上星期": ("week", -1), "上个星期": ("week", -1),
    "本月": ("month", 0), "这个月": ("month", 0), "上个月": ("month", -1), "上月": ("month", -1),
}
_PHRASE_RE = re.compile(
    r"(?<![A-Za-z])(?:"
    + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(_PHRASES, key=len, reverse=True))
    + r")(?![A-Za-z])",
    re.I,
)
_SPAN_RE = re.compile(r"(\d{1,5})\s*([dwmy])", re.I)
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_READABLE = ("a date (2026-11-02), an ISO time, a span back from now (7d, 2w, 3m, 1y), today, yesterday, "
             "this week, last week, this month, last month, 今天, 昨天, 本周, 上周, 本月 or 上个月")


def _phrase_period(phrase: str, now: datetime) -> Period:
    unit, shift = _PHRASES[" ".join(phrase.lower().split())]
    return containing(unit, now, shift)


def find_phrase(text: str, now: datetime) -> tuple[Period, str] | None:
    """The period the time phrases in a query name (spanning all of them when there are
    several) and the query without them, for full-text and vector search (as it was when
    nothing else is left to search for); None when it names no period."""
    found = [_phrase_period(m.group(0), now) for m in _PHRASE_RE.finditer(text)]
    if not found:
        return None
    rest = " ".join(_PHRASE_RE.sub(" ", text).split())
    return Period(min(p.start for p in found), max(p.end for p in found)), rest or text


def period_of(value: str, now: datetime, what: str) -> Period:
    """What one `--since`/`--until`/`--at` value names: a date its day, a phrase its day, week
    or month, a time or a span back from now (`7d`) that instant. `what` names the option in
    the one-line error a value that is none of these gets."""
    text = value.strip()
    if " ".join(text.lower().split()) in _PHRASES:
        return _phrase_period(text, now)
    try:
        span = _SPAN_RE.fullmatch(text)
        if span:
            moment = _back(now, int(span.group(1)), span.group(2).lower())
            return Period(moment, moment)
        if _DATE_RE.fullmatch(text):
            day = date.fromisoformat(text)
            return containing("day", datetime(day.year, day.month, day.day, tzinfo=now.tzinfo))
        moment = _iso(text, now.tzinfo)
    except (ValueError, OverflowError):
        moment = None
    if moment is None:
        raise InputError(f"{what}: cannot read {value!r} as a time; use {_READABLE}")
    return Period(moment, moment)


def window(since: str | None, until: str | None, now: datetime) -> Period | None:
    """The range `--since`/`--until` keep: from the start of what `since` names to the end of
    what `until` names (`--until 2026-11-29` keeps that day); None when neither is given."""
    if not (since or until):
        return None
    start = period_of(since, now, "since").start if since else None
    end = period_of(until, now, "until").end if until else None
    if start is not None and end is not None and start >= end:
        raise InputError(f"since {since!r} is not before until {until!r}: nothing can be in between")
    return Period(start, end)


def instant(value: str, what: str) -> datetime:
    """An ISO date or time as a moment, UTC when it names no zone: how `now` is fixed
    (`ALAYA_NOW`)."""
    try:
        moment = _iso(value.strip(), timezone.utc)
    except ValueError:
        moment = None
    if moment is None:
        raise InputError(f"{what}: cannot read {value!r} as an ISO date or time (e.g. 2026-11-30T09:00:00+00:00)")
    return moment


def aware(moment: datetime | None) -> datetime:
    """`now` as a caller gives it: the current time when None, UTC when it names no zone."""
    if moment is None:
        return datetime.now(timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def first_moment(values: Iterable[str | None], zone: tzinfo) -> datetime | None:
    """The first of `values` that reads as a time (read in `zone` when it names none). Given a
    card's `CardTimes`, that is when the card happened: its `valid_from` when set, else the start
    of the session it came from, else when it was stored; recall's ranges and the time buckets
    both date cards so."""
    for value in values:
        moment = parse_when(value)
        if moment is not None:
            return moment if moment.tzinfo else moment.replace(tzinfo=zone)
    return None


def _iso(text: str, zone: tzinfo | None) -> datetime | None:
    """An ISO 8601 date or time (a trailing Z too, which Python 3.10 does not read)."""
    if not text or not text[0].isdigit():
        return None
    moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def _back(now: datetime, count: int, unit: str) -> datetime:
    """`count` days, weeks, months or years before `now` (a month back from 31 March is the
    last day of February)."""
    if unit in ("d", "w"):
        return now - timedelta(days=count * (7 if unit == "w" else 1))
    year, month = add_months(now.year, now.month, -count * (12 if unit == "y" else 1))
    return now.replace(year=year, month=month, day=min(now.day, monthrange(year, month)[1]))
