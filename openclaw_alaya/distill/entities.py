"""Entity and keyword extraction for the heuristic distiller.

Entities: capitalised (multi-word) names, known technology names, file paths, URL hosts,
version numbers, identifiers (snake_case, `code`), and in Chinese text quoted terms and the
ASCII words inside it. A capitalised word that starts a sentence counts only when the session
also writes it capitalised mid-sentence (or it is a known name), so "Painting is fun" does not
make "Painting" an entity while "Caroline" does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .cues import FILLER_WORDS, NOT_NAMES, STOPWORDS, TECH_AMBIGUOUS, TECH_CANON

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_CLASS = "\u3400-\u9fff\uf900-\ufaff"

_URL_RE = re.compile(r"\bhttps?://([A-Za-z0-9.-]+)(?::\d+)?[^\s<>()\"'，。]*", re.I)
# Linear on any input (issue 30 class 9): a segment given back is never followed by `/` (the
# character after a run of segment characters is never one), so each try fails at once; no
# possessive quantifier, which Python 3.10 does not have (requires-python); a relative path starts
# only where a run of segment characters starts, not at each `-` or `.` inside one (a start inside
# a run that failed from the run's start fails too: there were as many tries as characters).
_PATH_RE = re.compile(
    r"(?<![\w/:.])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+/?"
    r"|(?<![\w.@+/-])(?:[\w.@+-]+/)+[\w.@+-]+\.[A-Za-z0-9]{1,6}\b"
)
_FILE_RE = re.compile(
    r"(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|js|mjs|ts|tsx|jsx|json|jsonl|yaml|yml|toml|md|txt|conf|cfg|ini|sh|sql|log|csv|rs|go|java|c|h|cpp|hpp|html|css|lock|env|kuzu|db|sqlite|parquet|lance|service|xml|ipynb|rb|php)\b"
)
_VERSION_RE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|(?<![\w.])v\d+(?:\.\d+)+\b")
# "Python 3.12", "node-18.2": a name run, then a version after a space or the run's last `-`.
# Found run by run (`named_versions`), not by one pattern: `\b[A-Za-z][\w+#-]*[ -]v?\d…` backtracked
# through every `-` of a run from every start inside it, quadratic in the run (issue 30 class 9).
_NAME_RUN_RE = re.compile(r"(?<!\w)[A-Za-z][\w+#-]*")
_VERSION_AT_RE = re.compile(r"v?(\d+(?:\.\d+)+)\b")
_CODE_RE = re.compile(r"`([^`\n]{2,60})`")
# Hyphenated identifiers: "eu-central-1", "bge-m3", "billing-api".
# A whole run of lower-case letters, digits and hyphens, of which a part after the first holds a
# digit or names a kind of service. The run is found by a pattern and its parts checked one by one:
# one pattern with a starred part on each side of the marked one tried every split of a run that
# ends in `-`, quadratic in its parts (issue 30 class 9).
_HYPHEN_RUN_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
_HYPHEN_MARK_RE = re.compile(r"[a-z]*\d[a-z0-9]*|api|service|server|db|worker|bot|cli|sdk|app|svc|proxy|gateway|cluster|prod|staging")
_SNAKE_RE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_QUOTED_RE = re.compile(r"[「『“《\"]([^」』”》\"\n]{1,24})[」』”》\"]")
# Word tokens (ASCII words with inner apostrophes, dots, hyphens, pluses).
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019+#-]*(?:\.[A-Za-z0-9]+)*")
_CAP_WORD = r"[A-Z][A-Za-z0-9'\u2019&+-]*(?:\.[A-Za-z0-9]+)*"
_CAP_SEQ_RE = re.compile(
    rf"(?<![\w'\u2019.-])(?:{_CAP_WORD})(?:[ \t]+(?:(?:of|the|de|van|von|da)[ \t]+)?{_CAP_WORD})*"
)
_SENT_END_CHARS = frozenset(".!?。！？;；:\n\"“(…-")


def _at_sentence_start(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in _SENT_END_CHARS
_ACRONYM_RE = re.compile(r"^[A-Z][A-Z0-9_]{1,}s?$")
_CAMEL_RE = re.compile(r"^[A-Za-z]+[a-z][A-Z][A-Za-z0-9]*$|^[a-z]+[A-Z][A-Za-z0-9]*$")
_ASCII_IN_CJK_RE = re.compile(r"[A-Za-z][A-Za-z0-9._+#-]*[A-Za-z0-9+#]|[A-Za-z]{2,}")
_NON_ENTITY_ACRONYMS = frozenset({"OK", "LOL", "OMG", "BTW", "FYI", "TBH", "IMO", "IMHO", "AM", "PM", "TV", "ASAP", "IDK", "BRB", "TTYL", "LMAO", "I"})
_TECH_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+#-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
_TECH_MULTI = {k: v for k, v in TECH_CANON.items() if " " in k}

# Words (for keywords): ASCII words and, for CJK, nothing here (see keywords()).
KEYWORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_'\u2019+#-]*[A-Za-z0-9+#]")


def _norm(tok: str) -> str:
    return tok.replace("\u2019", "'").lower()


def mid_sentence_caps(text: str, into: dict[str, None]) -> None:
    """Collect capitalised words written mid-sentence (evidence that they are names)."""
    for m in _CAP_SEQ_RE.finditer(text):
        if not _at_sentence_start(text, m.start()):
            for w in m.group(0).split():
                if w[0].isupper() and _norm(w) not in STOPWORDS:
                    into[w.rstrip(".'\u2019")] = None


def _terse_name(text: str, end: int, word: str) -> bool:
    """A capitalised word opening a terse reply ("Lisbon.", "Frankfurt, eu-central-1.")."""
    if word.endswith("ly") or _norm(word) in FILLER_WORDS:
        return False
    nxt = text[end:end + 1]
    if nxt not in ("", ",", ".", "!", "?", ";", ")"):
        return False
    head = text[:end]
    return len(head.split()) <= 1 and len(text.split()) <= 5


def _strip_common(words: list[str]) -> list[str]:
    lo, hi = 0, len(words)
    while lo < hi and (_norm(words[lo]) in STOPWORDS or _norm(words[lo]) in NOT_NAMES or words[lo].lower() in {"of", "the", "and", "&", "de", "van", "von", "da"}):
        lo += 1
    while hi > lo and (_norm(words[hi - 1]) in STOPWORDS or _norm(words[hi - 1]) in NOT_NAMES or words[hi - 1].lower() in {"of", "the", "and", "&", "de", "van", "von", "da"}):
        hi -= 1
    return words[lo:hi]


def named_versions(text: str) -> Iterator[tuple[int, int, str, str]]:
    r"""(start, end, name, version) of each "Name 1.2" / "name-1.2" in `text`, left to right, as
    `\b([A-Za-z][\w+#-]*)[ -]v?(\d+(?:\.\d+)+)\b` would find them, in linear time: a name is a
    run's start up to a space after the run or the run's last `-` (the longest name first); a
    start later in the same run could only end at the same places, so none is tried."""
    pos = 0
    while (run := _NAME_RUN_RE.search(text, pos)) is not None:
        start, end = run.span()
        if text.startswith(" ", end) and (found := _VERSION_AT_RE.match(text, end + 1)):
            name_end = end
        else:
            name_end = text.rfind("-", start + 1, end)
            found = _VERSION_AT_RE.match(text, name_end + 1) if name_end > 0 else None
        if found is None:
            pos = end
            continue
        yield start, found.end(), text[start:name_end], found.group(1)
        pos = found.end()


def extract_entities(text: str, known_names: dict[str, None] | set[str]) -> list[str]:
    """Entities in order of first appearance, deduplicated case-insensitively."""
    found: list[tuple[int, str]] = []
    covered = _Spans(len(text))
    is_covered = covered.holds

    def add(pos: int, value: str, end: int | None = None) -> None:
        value = value.strip(" .,;:!?'\"\u2019()[]")
        if len(value) < 2 or len(value) > 80:
            return
        found.append((pos, value))
        if end is not None:
            covered.add(pos, end)

    for m in _URL_RE.finditer(text):
        add(m.start(), m.group(1).lower(), m.end())
    for m in _PATH_RE.finditer(text):
        if not is_covered(m.start(), m.end()) and ("/" in m.group(0)) and len(m.group(0)) > 2:
            add(m.start(), m.group(0), m.end())
    for m in _FILE_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
            add(m.start(), m.group(0), m.end())
    for m in _CODE_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
            add(m.start(), m.group(1), m.end())
    for start, end, name, version in named_versions(text):
        if name.lower() in TECH_CANON or name[0].isupper():
            if _norm(name) not in STOPWORDS and _norm(name) not in NOT_NAMES:
                canon = TECH_CANON.get(name.lower(), name)
                add(start, f"{canon} {version}", end)
    for m in _VERSION_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
            add(m.start(), m.group(0), m.end())
    for m in _HYPHEN_RUN_RE.finditer(text):
        if any(_HYPHEN_MARK_RE.fullmatch(part) for part in m.group(0).split("-")[1:]) and not is_covered(m.start(), m.end()):
            add(m.start(), m.group(0), m.end())
    for m in _SNAKE_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
            add(m.start(), m.group(0), m.end())
    for m in _TECH_TOKEN_RE.finditer(text):
        tok = m.group(0)
        canon = TECH_CANON.get(tok.lower())
        if canon is None and tok.endswith("."):
            tok = tok.rstrip(".")
            canon = TECH_CANON.get(tok.lower())
        if canon is None or is_covered(m.start(), m.end()):
            continue
        if canon.lower() in TECH_AMBIGUOUS and tok != canon:
            continue
        add(m.start(), canon)
    if _TECH_MULTI:
        low = text.lower()
        for k, canon in _TECH_MULTI.items():
            at = low.find(k)
            if at >= 0:
                add(at, canon)
    for m in _CAP_SEQ_RE.finditer(text):
        if is_covered(m.start(), m.end()):
            continue
        words = m.group(0).split()
        at_start = _at_sentence_start(text, m.start())
        kept = _strip_common(words)
        if not kept:
            continue
        value = " ".join(kept)
        first_is_first = kept[0] is words[0]
        if len(kept) == 1:
            w = kept[0].rstrip(".'\u2019")
            if w.endswith("'s") or w.endswith("\u2019s"):
                w = w[:-2]
            if len(w) < 2 or _norm(w) in NOT_NAMES or _norm(w) in STOPWORDS:
                continue
            if w.upper() == w and not any(c.isdigit() for c in w):
                if w in _NON_ENTITY_ACRONYMS:
                    continue
            elif (
                at_start and first_is_first and w not in known_names and w.lower() not in TECH_CANON
                and not _CAMEL_RE.match(w) and not _terse_name(text, m.end(), w)
            ):
                continue
            value = w
        add(m.start(), value)
    if CJK_RE.search(text):
        for m in _QUOTED_RE.finditer(text):
            add(m.start(), m.group(1))
        for m in _ASCII_IN_CJK_RE.finditer(text):
            tok = m.group(0)
            if is_covered(m.start(), m.end()) or _norm(tok) in STOPWORDS or len(tok) < 2:
                continue
            add(m.start(), TECH_CANON.get(tok.lower(), tok))
    found.sort(key=lambda x: x[0])
    out: list[str] = []
    seen: set[str] = set()
    for _, v in found:
        k = v.lower()
        if k not in seen:
            seen.add(k)
            out.append(v)
    # Drop single words already part of a longer entity ("York" when "New York" is there).
    inside = {piece for o in out if " " in o for piece in _bounded_pieces(o.lower())}
    return [o for o in out if " " in o or o.lower() not in inside] if inside else out


class _Spans:
    """The spans of a text that entities took, asked whether one of them holds a given span: a
    running maximum of ends over starts (a Fenwick tree), so each question costs log n. A scan
    of all spans per question was quadratic in a text of many paths (issue 30 class 9)."""

    def __init__(self, size: int) -> None:
        self._reach = [0] * (size + 2)

    def add(self, start: int, end: int) -> None:
        i = start + 1
        while i < len(self._reach):
            self._reach[i] = max(self._reach[i], end)
            i += i & -i

    def holds(self, start: int, end: int) -> bool:
        i, reach = start + 1, 0
        while i > 0:
            reach = max(reach, self._reach[i])
            i -= i & -i
        return reach >= end


def _bounded_pieces(text: str) -> Iterator[str]:
    r"""Each piece of `text` without a space that `(?<!\w)piece(?!\w)` finds in it: a set of
    them answers "is this single word part of a longer entity" for all words at once, where a
    search per word and longer entity was quadratic in the entities (issue 30 class 9)."""
    for chunk in text.split(" "):
        edges = [i for i, ch in enumerate(chunk) if not (ch.isalnum() or ch == "_")]
        for start in [0, *(i + 1 for i in edges)]:
            for end in [*edges, len(chunk)]:
                if end > start:
                    yield chunk[start:end]


def keywords(text: str, limit: int = 8) -> list[str]:
    """Content words by frequency then first appearance: lowercase, no stopwords."""
    counts: dict[str, int] = {}
    for m in KEYWORD_RE.finditer(text):
        w = _norm(m.group(0)).strip("-+#'")
        if w.endswith("'s"):
            w = w[:-2]
        if len(w) < 3 or w in STOPWORDS or "'" in w:
            continue
        counts[w] = counts.get(w, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep first appearance
    return [w for w, _ in ranked[:limit]]
