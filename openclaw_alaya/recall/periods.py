"""Periods of time for recall and `alaya summary`: what `--since`/`--until` accept, the time
phrases a query may carry ("what did we decide last week?", 上周我们决定了什么) and the dates it
names ("on 8 May 2023", "around Nov 27", "since May 2023", 2023年5月, 5月8日前后), the day, week
or month around a moment, and the moment a card belongs to.

A date said without a year is the latest one not after `now` (people mostly ask about the past).

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

from .. import clock
from ..distill.dates import MONTH_ALT, MONTH_CAP, MONTH_NUM, add_months, parse_when
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
_READABLE = ("a date (2026-11-02, 8 May 2026, Nov 2026, 2026年11月2日), an ISO time, a span back from now "
             "(7d, 2w, 3m, 1y), today, yesterday, this week, last week, this month, last month, 今天, 昨天, "
             "本周, 上周, 本月 or 上个月")

# Dates a query names, each with the unit it spans. English month names in any case but "May"
# ("may" is a verb), and a month named alone only after a preposition ("in June").
_MONTH = MONTH_ALT.replace("may", "(?-i:May)")
_YEAR = r"(?P<y>(?:19|20)\d{2})"
_DAY = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
_PRE = "(?:" + "|".join(rf"(?<=\b{w}\s)" for w in ("in", "during", "since", "before", "after", "until", "till",
                                                       "by", "from", "around")) + ")"
_CN_MONTH = r"(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])"
_DATES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?(?P<m>{_MONTH})\b\.?(?:,?\s+{_YEAR}\b)?", re.I), "day"),
    (re.compile(rf"\b(?P<m>{_MONTH})\b\.?\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?", re.I), "day"),
    (re.compile(rf"\b(?P<m>{_MONTH})\b\.?,?\s+{_YEAR}\b", re.I), "month"),
    (re.compile(rf"{_PRE}(?P<m>(?-i:{MONTH_CAP}))\b", re.I), "month"),
    (re.compile(rf"{_PRE}{_YEAR}\b", re.I), "year"),
    (re.compile(r"\b(?P<y>\d{4})[-/](?P<m>\d{1,2})[-/](?P<d>\d{1,2})\b"), "day"),
    (re.compile(r"(?:(?P<y>\d{4})\s*年\s*)?(?<!\d)(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"), "day"),
    (re.compile(rf"(?:(?P<y>\d{{4}})\s*年\s*)?(?<![\d十]){_CN_MONTH}\s*月份?"), "month"),
    (re.compile(r"(?P<y>\d{4})\s*年"), "year"),
]
_CN_NUMBER = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
              "十": 10, "十一": 11, "十二": 12}
# how a word next to a period changes it (English before it, Chinese after it but 从, 大约):
# "since X" runs on from X's start ("after X" from its end), "before X" up to its start ("until
# X" to its end), "around X" reaches a few days either side
_OPEN_END = {"since": "start", "from": "start", "从": "start", "以来": "start", "起": "start",
             "after": "end", "之后": "end", "以后": "end"}
_OPEN_START = {"before": "start", "之前": "start", "以前": "start", "until": "end", "till": "end", "by": "end"}
_AROUND_WORDS = {"around", "about", "circa", "near", "左右", "前后", "附近", "大约", "大概"}
_AROUND = timedelta(days=3)  # "around Nov 27": three days either side
_WORD_BEFORE = re.compile(r"(?:\b([A-Za-z]+)|(从|大约|大概))\s*$")
_NEAR = 40  # longer than any word _WORD_BEFORE looks for, with the spaces after it
_WORD_AFTER = re.compile(r"\s*(左右|前后|附近|以来|之后|以后|之前|以前|起)")


def _phrase_period(phrase: str, now: datetime) -> Period:
    unit, shift = _PHRASES[" ".join(phrase.lower().split())]
    return containing(unit, now, shift)


def _date_period(match: re.Match[str], unit: str, now: datetime) -> Period | None:
    """The day, month or year a date match names; None for one that is no date (31 February)."""
    found = match.groupdict()
    year = int(found["y"]) if found.get("y") else None
    day = int(found["d"]) if found.get("d") else None
    if unit == "year":
        start = datetime(year, 1, 1, tzinfo=now.tzinfo)
        return Period(start, start.replace(year=year + 1))
    name = found["m"]
    month = int(name) if name.isdigit() else MONTH_NUM.get(name.lower()) or _CN_NUMBER[name]
    if not 1 <= month <= 12 or day == 0:
        return None
    year = year or _latest_year(month, day, now.date())
    if year is None or (day is not None and day > monthrange(year, month)[1]):
        return None
    return containing(unit, datetime(year, month, day or 1, tzinfo=now.tzinfo))


def _latest_year(month: int, day: int | None, today: date) -> int | None:
    """The latest year in which that month (and day) is not after `today`."""
    for year in range(today.year, today.year - 8, -1):
        if day is None and (year, month) <= (today.year, today.month):
            return year
        if day is not None and day <= monthrange(year, month)[1] and date(year, month, day) <= today:
            return year
    return None


def _modified(period: Period, text: str, start: int, end: int) -> Period:
    """The period as the word next to it (in `text`, either side of `start:end`) changes it:
    "since X" from X on, "before X" up to X, "around X" with a few days either side. The word
    before is looked for in the `_NEAR` characters before the match, not in the whole text
    before it: that was a scan of the text per date, quadratic in a text of dates (issue 30
    class 9)."""
    near = _WORD_AFTER.match(text, end)
    if near:
        word = near.group(1)
    else:
        near = _WORD_BEFORE.search(text, max(0, start - _NEAR), start)
        word = (near.group(1) or near.group(2)).lower() if near else ""
    if word in _OPEN_END:
        return Period(period.start if _OPEN_END[word] == "start" else period.end, None)
    if word in _OPEN_START:
        return Period(None, period.start if _OPEN_START[word] == "start" else period.end)
    if word in _AROUND_WORDS:
        return Period(period.start - _AROUND, period.end + _AROUND)
    return period


def _found(text: str, now: datetime) -> list[tuple[re.Match[str], Period, bool]]:
    """Each time phrase and date in `text`, left to right, with the period it names and whether
    it is a phrase relative to now (the longest wins where they overlap)."""
    matches = [(m, _phrase_period(m.group(0), now), True) for m in _PHRASE_RE.finditer(text)]
    for pattern, unit in _DATES:
        matches += [(m, p, False) for m in pattern.finditer(text) if (p := _date_period(m, unit, now))]
    matches.sort(key=lambda f: (f[0].start(), -f[0].end()))
    kept: list[tuple[re.Match[str], Period, bool]] = []
    for match, period, relative in matches:
        if kept and match.start() < kept[-1][0].end():
            continue
        kept.append((match, _modified(period, text, match.start(), match.end()), relative))
    return kept


def find_phrase(text: str, now: datetime) -> tuple[Period, str] | None:
    """The period the time phrases and dates in a query name (spanning all of them when there
    are several; a side only one of them leaves open stays bounded by the others) and the query
    without its phrases relative to now, for full-text and vector search (as it was when nothing
    else is left to search for): "last week" is no word a card contains, "8 May 2023" may be.
    None when it names no period."""
    found = _found(text, now)
    if not found:
        return None
    starts = [p.start for _, p, _ in found if p.start is not None]
    ends = [p.end for _, p, _ in found if p.end is not None]
    pieces, pos = [], 0
    for match, _, relative in found:
        if relative:
            pieces += [text[pos:match.start()], " "]
            pos = match.end()
    rest = " ".join(("".join(pieces) + text[pos:]).split())
    return Period(min(starts, default=None), max(ends, default=None)), rest or text


def period_of(value: str, now: datetime, what: str) -> Period:
    """What one `--since`/`--until`/`--at` value names: a date its day (or month, year), a
    phrase its day, week or month, a time or a span back from now (`7d`) that instant. `what`
    names the option in the one-line error a value that is none of these gets."""
    text = value.strip()
    found = _found(text, now)
    if len(found) == 1 and found[0][0].span() == (0, len(text)):
        return found[0][1]
    try:
        span = _SPAN_RE.fullmatch(text)
        if span:
            moment = _back(now, int(span.group(1)), span.group(2).lower())
            return Period(moment, moment)
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


def aware(moment: datetime | None) -> datetime:
    """`now` as a caller gives it: the memory's clock when None (clock.py), UTC when it names no zone."""
    if moment is None:
        return clock.now()
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
