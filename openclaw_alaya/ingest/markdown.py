"""An OpenClaw workspace file (`MEMORY.md`, `USER.md`, `memory/YYYY-MM-DD.md`, `bank/**.md`) as
entries with their line ranges (docs/workspace.md).

An entry is a list item (with its indented continuation lines and nested items) or a paragraph;
headings are not entries, they name the section an entry is in. In a `## Retain` section a list
item `- W @Entity: text` is a Retain line: W (world fact), B (experience, first person),
O(c=0.95) (opinion with its confidence), S (observation or summary), any number of
`@entities`, and an optional date or date range in the text. OpenClaw's trailing annotations
`<!-- importance: 9 -->`, `<!-- trigger: a, b -->` and `<!-- project: … -->` are read off any
entry. A Retain line that does not parse (`c=1.7`, no text, an `@` with no name) stays an
ordinary entry, with a warning: nothing is lost.

Pure functions on text: no files, no store.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .openclaw_templates import is_scaffolding

KINDS = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^( {0,3})[-*+]\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ANNOTATION = re.compile(r"<!--\s*(importance|trigger|triggers|project)\s*:\s*(.*?)\s*-->", re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# OpenClaw's USER.md directive metadata: a superseded directive is no longer the user's wish
_STATUS = re.compile(r"<!--[^>]*\bstatus\s*:\s*(active|superseded)\b[^>]*-->", re.I)
_RETAIN = re.compile(r"^(?P<kind>[WBOS])(?:\((?P<params>[^)]*)\))?(?=\s|:|$)\s*:?\s*(?P<rest>.*)$", re.S)
_ENTITY = re.compile(r"(?<![\w@])@([^\s@:,;()\[\]{}<>\"'`，。；：！？、]*)")
_LEAD_ENTITIES = re.compile(r"^\s*(?:@[^\s@:,;，：]+[\s,，]*)+[:：]?\s*")
_DATE = r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})|(\d{4})年(\d{1,2})月(\d{1,2})日"
_RANGE = re.compile(rf"(?:{_DATE})(?:\s*(?:to|until|through|till|–|—|-|~|～|\.\.|至|到)\s*(?:{_DATE}))?")
NOTE_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


@dataclass
class Entry:
    start: int  # first line, 1-based
    end: int  # last line
    text: str  # the lines as written (annotations included)
    section: str = ""  # the heading it is under
    kind: str | None = None  # a Retain line's: world | experience | opinion | observation
    body: str = ""  # what it says: annotations and a Retain line's marks taken out
    entities: list[str] = field(default_factory=list)
    confidence: float | None = None
    occurred: str | None = None  # a date or range its text gives: `2025-11-01` or `2025-11-01/2025-11-05`
    importance: float | None = None  # 0..1 (the annotation's 1..10 / 10)
    triggers: list[str] = field(default_factory=list)
    project: str | None = None

    @property
    def digest(self) -> str:
        """The entry's identity at birth (docs/workspace.md, "Card ids")."""
        return hashlib.sha1(" ".join(self.text.split()).encode()).hexdigest()[:16]

    @property
    def lines(self) -> str:
        return f"L{self.start}-L{self.end}"


def parse(text: str) -> tuple[list[Entry], list[tuple[int, str]]]:
    """(entries, warnings as (line, message)) of one workspace file: not the scaffolding
    OpenClaw seeds a workspace with (`openclaw_templates.py`), not a superseded directive."""
    lines = text.split("\n")
    entries: list[Entry] = []
    warnings: list[tuple[int, str]] = []
    section, level, retain = "", 0, False
    current: list[int] = []  # line numbers (1-based) of the entry being read
    is_item = False
    fence = False

    superseded = False  # OpenClaw's `<!-- observed: … | status: superseded -->` before a directive

    def close() -> None:
        nonlocal current, superseded
        if current:
            text = "\n".join(lines[current[0] - 1:current[-1]])
            status = _STATUS.search(text)
            entry = _entry(lines, current, section, retain and is_item, warnings)
            if entry is None and status:
                superseded = status.group(1).lower() == "superseded"
            elif entry is not None:
                if not (superseded or status and status.group(1).lower() == "superseded" or is_scaffolding(entry)):
                    entries.append(entry)
                superseded = False
        current = []

    for no, line in enumerate(lines, 1):
        if fence:
            current.append(no)
            if _FENCE.match(line):
                fence = False
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            depth, name = len(heading.group(1)), heading.group(2).strip()
            if name.lower().strip(":") == "retain":
                retain, level = True, depth
            elif retain and depth <= level:
                retain = False
            section = name
            continue
        if not line.strip():
            close()
            continue
        item = _ITEM.match(line)
        if item and (not current or not is_item or len(item.group(1)) == 0):
            close()
            is_item = True
        elif not current:
            is_item = False
        current.append(no)
        if _FENCE.match(line):
            fence = True
    close()
    return entries, warnings


def _entry(lines: list[str], numbers: list[int], section: str, retain: bool,
           warnings: list[tuple[int, str]]) -> Entry | None:
    start, end = numbers[0], numbers[-1]
    text = "\n".join(lines[start - 1:end])
    entry = Entry(start=start, end=end, text=text, section=section)
    for name, value in _ANNOTATION.findall(text):
        name = name.lower()
        if name == "importance":
            try:
                entry.importance = min(max(float(value), 1.0), 10.0) / 10
            except ValueError:
                warnings.append((start, f"importance {value[:20]!r} is not a number from 1 to 10: ignored"))
        elif name.startswith("trigger"):
            entry.triggers += [t.strip().lower() for t in re.split(r"[,;，；]", value) if t.strip()]
        else:
            entry.project = value.strip() or None
    body = " ".join(_COMMENT.sub(" ", text).split()) if "\n" not in text.strip() else _COMMENT.sub("", text).strip()
    body = re.sub(r"^\s*[-*+]\s+", "", body)
    if not body:
        return None
    entry.body = body
    if retain:
        _retain(entry, warnings)
    when = dates_in(entry.body)
    entry.occurred = when
    return entry


def _retain(entry: Entry, warnings: list[tuple[int, str]]) -> None:
    found = _RETAIN.match(entry.body)
    if not found:
        return  # a plain item in the Retain section: an ordinary entry
    letter, params, rest = found.group("kind"), found.group("params"), found.group("rest").strip()
    where = entry.start
    confidence = None
    if params is not None:
        c = re.fullmatch(r"\s*c\s*=\s*([0-9.]+)\s*", params)
        if not c:
            warnings.append((where, f"Retain line: {params[:30]!r} is not c=<confidence>: kept as a plain note"))
            return
        try:
            confidence = float(c.group(1))
        except ValueError:
            confidence = -1.0
        if not 0.0 <= confidence <= 1.0:
            warnings.append((where, f"Retain line: confidence c={c.group(1)[:10]} is outside 0..1: kept as a plain note"))
            return
    names = _ENTITY.findall(rest)
    if any(not n.strip(".-_") for n in names):
        warnings.append((where, "Retain line: an @ with no name: kept as a plain note"))
        return
    text = _LEAD_ENTITIES.sub("", rest).strip()
    text = _ENTITY.sub(lambda m: m.group(1), text).strip()
    if not text:
        warnings.append((where, f"Retain line {letter} has no text: kept as a plain note"))
        return
    entry.kind = KINDS[letter]
    entry.confidence = confidence if letter == "O" else None
    entry.entities = list(dict.fromkeys(n.strip(".-_") for n in names))
    entry.body = text


def dates_in(text: str) -> str | None:
    """The first date or date range the text gives, ISO: `2025-11-01` or `2025-11-01/2025-11-05`."""
    for found in _RANGE.finditer(text):
        groups = found.groups()
        start = _iso(groups[0:6])
        if start is None:
            continue
        end = _iso(groups[6:12])
        return f"{start}/{end}" if end and end > start else start
    return None


def _iso(groups: tuple) -> str | None:
    y, m, d = (groups[0], groups[1], groups[2]) if groups[0] else (groups[3], groups[4], groups[5])
    if not y:
        return None
    try:
        y, m, d = int(y), int(m), int(d)
    except (TypeError, ValueError):
        return None
    if not (1 <= m <= 12 and 1 <= d <= 31 and 1900 <= y <= 2200):
        return None
    return f"{y:04d}-{m:02d}-{d:02d}"


def note_date(path: str) -> str | None:
    """A daily note's date from its name (`memory/2025-11-27.md`, `memory/2025-11-27-slug.md`)."""
    found = NOTE_DATE.search(path.rsplit("/", 1)[-1])
    if not found:
        return None
    return _iso((found.group(1), found.group(2), found.group(3), None, None, None))


def title_of(body: str, limit: int = 80) -> str:
    line = " ".join(body.split())
    line = re.sub(r"[*_`]+", "", line)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
