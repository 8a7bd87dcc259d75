"""Dates for the heuristic distiller: parse a session or turn date, render it like
``8 May 2023``, and resolve relative expressions ("yesterday", "last week", 昨天, 上周...)
against it, so that a card says *when* even when the speaker did not.

Everything here is pure and deterministic; regexes are compiled once at import.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]
MONTH_NUM = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}
MONTH_NUM.update({m.lower()[:3]: i + 1 for i, m in enumerate(MONTHS)})
MONTH_NUM["sept"] = 9
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# short weekday names ("last Tues", "this Fri"): their note spells the day out ("last Tues =
# Tuesday, 18 July 2023"), so the card says the day in the words a question uses; "Sat" and
# "Sun" only capitalised ("the last sun of summer" names no day)
_WEEKDAY_SHORT = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
                  "sat": 5, "sun": 6}
_CAPITALISED_ONLY = {"sat", "sun"}

MONTH_ALT = "|".join(sorted(MONTH_NUM, key=len, reverse=True))

# "1:56 pm on 8 May, 2023" (LoCoMo), "8 May 2023", "May 8, 2023", "2023-05-08", "2023/5/8", "2023年5月8日"
_TIME_RE = re.compile(r"\b(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\s*([ap]\.?m\.?)?", re.I)
_DMY_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTH_ALT})\.?,?\s+(\d{{4}})\b", re.I)
_MDY_RE = re.compile(rf"\b({MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_YMD_RE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_CN_YMD_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")


def parse_when(value: str | None) -> datetime | None:
    """Best-effort parse of a timestamp / session date. Returns a naive or aware datetime,
    or None when nothing date-like is found. A date without a time gets midnight and is
    flagged by ``has_time`` (see `iso_of`)."""
    if not value:
        return None
    text = value.strip()
    iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        return datetime.fromisoformat(iso)
    except ValueError:
        pass
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", text):  # unix seconds
        try:
            return datetime.utcfromtimestamp(float(text))
        except (OverflowError, OSError, ValueError):
            return None
    d = None
    for rx, order in ((_DMY_RE, "dmy"), (_MDY_RE, "mdy"), (_YMD_RE, "ymd"), (_CN_YMD_RE, "ymd")):
        m = rx.search(text)
        if not m:
            continue
        try:
            if order == "dmy":
                d = date(int(m.group(3)), MONTH_NUM[m.group(2).lower()], int(m.group(1)))
            elif order == "mdy":
                d = date(int(m.group(3)), MONTH_NUM[m.group(1).lower()], int(m.group(2)))
            else:
                d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            d = None
            continue
        rest = text[: m.start()] + " " + text[m.end():]
        break
    if d is None:
        return None
    hour = minute = second = 0
    tm = _TIME_RE.search(rest)
    if tm:
        hour, minute = int(tm.group(1)), int(tm.group(2))
        second = int(tm.group(3) or 0)
        ampm = (tm.group(4) or "").lower().replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60):
            hour = minute = second = 0
    return datetime(d.year, d.month, d.day, hour, minute, second)


def iso_of(dt: datetime | None) -> str | None:
    """ISO 8601 text for `valid_from`: the date alone when no time of day is known."""
    if dt is None:
        return None
    if dt.tzinfo is None and (dt.hour, dt.minute, dt.second, dt.microsecond) == (0, 0, 0, 0):
        return dt.date().isoformat()
    return dt.isoformat()


def render_date(d: date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def render_month(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def render_cn(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    n = year * 12 + (month - 1) + delta
    return n // 12, n % 12 + 1


_NUM_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2,
}
_CN_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_CN_NUMW = r"(?:\d{1,2}|[一两二三四五六七八九十])"
_NUMW = r"(?:\d{1,2}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_WD = "|".join(WEEKDAYS)
_WD_SHORT = "|".join(f"(?-i:{w.capitalize()})" if w in _CAPITALISED_ONLY else w
                     for w in sorted(_WEEKDAY_SHORT, key=len, reverse=True))
MONTH_CAP = "|".join(sorted({k.capitalize() for k in MONTH_NUM}, key=len, reverse=True))
_EN_REL_RE = re.compile(
    r"\b(?:"
    r"(?P<dby>the day before yesterday)"
    r"|(?P<yday>yesterday|last night)"
    r"|(?P<dat>the day after tomorrow)"
    r"|(?P<tmrw>tomorrow)"
    rf"|(?P<ago_n>{_NUMW})\s+(?P<ago_u>days?|weeks?|months?|years?)\s+ago"
    rf"|(?P<rel>last|next|this|past)\s+(?P<unit>week(?:end)?|month|year|{_WD}|{_WD_SHORT})"
    rf"|(?P<mrel>last|next|this)\s+(?P<mon>(?-i:{MONTH_CAP}))"
    rf"|(?P<rel2>earlier|later)\s+this\s+(?P<unit2>week|month|year)"
    r")\b",
    re.I,
)
# How long something has gone on ("for seven years", "5 years now", "been two months"), which
# says since when: only in the present perfect or with "now"/"already", since "for two years"
# alone may lie ahead ("we're moving there for two years")
_PERFECT = r"(?:have|has|had|'ve|’ve|'s|’s)\b[^.!?\n]{0,60}?"
_EN_SINCE_RE = re.compile(
    rf"(?:\b{_PERFECT}(?:\bbeen\s+|\bfor\s+)(?:(?:the\s+)?(?:past|last)\s+)?(?P<pf_n>{_NUMW})\s+(?P<pf_u>years?|months?)\b"
    rf"|\b(?P<now_n>{_NUMW})\s+(?P<now_u>years?|months?)\s+(?:now|already|and counting)\b)",
    re.I,
)
_CN_SINCE_RE = re.compile(rf"(?P<n>{_CN_NUMW})\s*(?P<u>年|个月)了")
_CN_REL_RE = re.compile(
    r"(?P<cdby>大前天|前天)|(?P<cyday>昨天|昨晚|昨日)|(?P<cdat>大后天|后天)|(?P<ctmrw>明天|明日)"
    rf"|(?P<cago_n>{_CN_NUMW})\s*(?P<cago_u>天|个?星期|周|个月|年)前"
    r"|(?P<cweek>上|下|这|本)(?:个)?(?:星期|周|礼拜)(?P<cwd>[一二三四五六日天末])?"
    r"|(?P<cmonth>上|下|这|本)个?月"
    r"|(?P<cyear>前年|去年|今年|明年|后年)"
)


def _count(word: str) -> int:
    """A count in digits, English words ("seven", "a couple of") or a Chinese numeral; 0 when unknown."""
    word = word.lower()
    return int(word) if word.isdigit() else _NUM_WORDS.get(word, _CN_NUM.get(word, 0))


def _back(when: date, n: int, unit: str) -> str:
    """The year ("2018") or month ("June 2023") `n` years or months before `when`."""
    return str(when.year - n) if unit == "year" else render_month(*add_months(when.year, when.month, -n))


def _cn_back(when: date, n: int, unit: str) -> str:
    """As `_back`, in Chinese: "2020年" for 年, "2023年6月" for 个月."""
    if unit == "年":
        return f"{when.year - n}年"
    year, month = add_months(when.year, when.month, -n)
    return f"{year}年{month}月"


def resolve_relative(text: str, when: date | None) -> list[str]:
    """Annotations like ``yesterday = 7 May 2023`` for every relative date expression in
    `text`, resolved against `when`. Deduplicated, in order of appearance."""
    if when is None:
        return []
    out: list[str] = []
    seen: set[str] = set()

    def add(phrase: str, value: str) -> None:
        note = f"{phrase} = {value}"
        key = note.lower()
        if key not in seen:
            seen.add(key)
            out.append(note)

    for m in _EN_REL_RE.finditer(text):
        phrase = m.group(0)
        if m.group("dby"):
            add(phrase, render_date(when - timedelta(days=2)))
        elif m.group("yday"):
            add(phrase, render_date(when - timedelta(days=1)))
        elif m.group("dat"):
            add(phrase, render_date(when + timedelta(days=2)))
        elif m.group("tmrw"):
            add(phrase, render_date(when + timedelta(days=1)))
        elif m.group("ago_n"):
            n = _count(m.group("ago_n"))
            unit = m.group("ago_u").lower().rstrip("s")
            if n <= 0:
                continue
            if unit == "day":
                add(phrase, render_date(when - timedelta(days=n)))
            elif unit == "week":
                add(phrase, "~" + render_date(when - timedelta(days=7 * n)))
            else:
                add(phrase, _back(when, n, unit))
        elif m.group("rel"):
            rel, unit = m.group("rel").lower(), m.group("unit").lower()
            if rel == "past":
                rel = "last"
            short = _WEEKDAY_SHORT.get(unit)
            if unit in WEEKDAYS or short is not None:
                wd = WEEKDAYS.index(unit) if short is None else short
                if rel == "last":
                    delta = -((when.weekday() - wd) % 7 or 7)
                elif rel == "next":
                    delta = (wd - when.weekday()) % 7 or 7
                else:  # "this Friday": the coming one (or today)
                    delta = (wd - when.weekday()) % 7
                day = render_date(when + timedelta(days=delta))
                add(phrase, day if short is None else f"{WEEKDAYS[wd].capitalize()}, {day}")
            elif unit in ("week", "weekend"):
                if rel == "last":
                    add(phrase, f"the {unit} before {render_date(when)}")
                elif rel == "next":
                    add(phrase, f"the {unit} after {render_date(when)}")
                else:
                    add(phrase, f"the {unit} of {render_date(when)}")
            elif unit == "month":
                delta = {"last": -1, "next": 1, "this": 0}[rel]
                add(phrase, render_month(*add_months(when.year, when.month, delta)))
            else:  # year
                add(phrase, str(when.year + {"last": -1, "next": 1, "this": 0}[rel]))
        elif m.group("mrel"):
            rel, mon = m.group("mrel").lower(), MONTH_NUM[m.group("mon").lower()]
            if rel == "last":
                year = when.year if mon < when.month else when.year - 1
            elif rel == "next":
                year = when.year if mon > when.month else when.year + 1
            else:
                year = when.year
            add(phrase, render_month(year, mon))
        elif m.group("rel2"):
            unit = m.group("unit2").lower()
            if unit == "week":
                add(phrase, f"the week of {render_date(when)}")
            elif unit == "month":
                add(phrase, render_month(when.year, when.month))
            else:
                add(phrase, str(when.year))
    for m in _EN_SINCE_RE.finditer(text):
        perfect = m.group("pf_n") is not None
        nw = m.group("pf_n") if perfect else m.group("now_n")
        n = _count(nw)
        if n <= 0:
            continue
        unit = (m.group("pf_u") if perfect else m.group("now_u")).lower().rstrip("s")
        phrase = text[m.start("pf_n"):m.end()] if perfect else m.group(0)  # "seven years", not "I've been … for"
        # a number in words also in digits: "how long … 7 years?" finds "seven years now"
        digits = f"{n} {unit}s, " if n > 1 and not nw.isdigit() else ""
        add(phrase, f"{digits}since {_back(when, n, unit)}")
    if _HAS_CJK.search(text):
        for m in _CN_SINCE_RE.finditer(text):
            n = _count(m.group("n"))
            if n > 0:
                add(m.group(0), _cn_back(when, n, m.group("u")) + "起")
        for m in _CN_REL_RE.finditer(text):
            phrase = m.group(0)
            if m.group("cdby"):
                add(phrase, render_cn(when - timedelta(days=3 if phrase == "大前天" else 2)))
            elif m.group("cyday"):
                add(phrase, render_cn(when - timedelta(days=1)))
            elif m.group("cdat"):
                add(phrase, render_cn(when + timedelta(days=3 if phrase == "大后天" else 2)))
            elif m.group("ctmrw"):
                add(phrase, render_cn(when + timedelta(days=1)))
            elif m.group("cago_n"):
                n = _count(m.group("cago_n"))
                unit = m.group("cago_u")
                if unit == "天":
                    add(phrase, render_cn(when - timedelta(days=n)))
                elif unit in ("周", "星期", "个星期"):
                    add(phrase, "约" + render_cn(when - timedelta(days=7 * n)))
                else:
                    add(phrase, _cn_back(when, n, unit))
            elif m.group("cweek"):
                rel, wdc = m.group("cweek"), m.group("cwd")
                sign = {"上": -1, "下": 1, "这": 0, "本": 0}[rel]
                if wdc and wdc != "末":
                    wd = _CN_WEEKDAY[wdc]
                    monday = when - timedelta(days=when.weekday())
                    add(phrase, render_cn(monday + timedelta(days=7 * sign + wd)))
                else:
                    what = "周末" if wdc == "末" else "一周"
                    if sign < 0:
                        add(phrase, f"{render_cn(when)}之前的{what}")
                    elif sign > 0:
                        add(phrase, f"{render_cn(when)}之后的{what}")
                    else:
                        add(phrase, f"{render_cn(when)}所在{what}")
            elif m.group("cmonth"):
                sign = {"上": -1, "下": 1, "这": 0, "本": 0}[m.group("cmonth")]
                y, mo = add_months(when.year, when.month, sign)
                add(phrase, f"{y}年{mo}月")
            elif m.group("cyear"):
                delta = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}[phrase]
                add(phrase, f"{when.year + delta}年")
    return out


_HAS_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Absolute dates and years inside text: a cue for the "fact" type. Month names must be
# capitalised here ("May" the month, not "may" the verb).
ABS_DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTH_CAP})\b|(?:{MONTH_CAP})\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|(?:in|since|by|of|from|until|last|next|this)\s+(?:{MONTH_CAP})\b|(?:19|20)\d{{2}}\b|\d{{4}}-\d{{2}}-\d{{2}})"
    r"|\d{4}\s*年|\d{1,2}\s*月\s*\d{1,2}\s*[日号]",
)
