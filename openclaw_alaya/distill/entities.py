"""Entity and keyword extraction for the heuristic distiller.

Entities: capitalised (multi-word) names, known technology names, file paths, URL hosts,
version numbers, identifiers (snake_case, `code`), and in Chinese text quoted terms and the
ASCII words inside it. A capitalised word that starts a sentence counts only when the session
also writes it capitalised mid-sentence (or it is a known name), so "Painting is fun" does not
make "Painting" an entity while "Caroline" does.
"""

from __future__ import annotations

import re

from .cues import FILLER_WORDS, NOT_NAMES, STOPWORDS, TECH_AMBIGUOUS, TECH_CANON

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_CLASS = "\u3400-\u9fff\uf900-\ufaff"

_URL_RE = re.compile(r"\bhttps?://([A-Za-z0-9.-]+)(?::\d+)?[^\s<>()\"'，。]*", re.I)
_PATH_RE = re.compile(
    r"(?<![\w/:.])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+/?|(?<![\w/])(?:[\w.@+-]+/){1,}[\w.@+-]+\.[A-Za-z0-9]{1,6}\b"
)
_FILE_RE = re.compile(
    r"(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|js|mjs|ts|tsx|jsx|json|jsonl|yaml|yml|toml|md|txt|conf|cfg|ini|sh|sql|log|csv|rs|go|java|c|h|cpp|hpp|html|css|lock|env|kuzu|db|sqlite|parquet|lance|service|xml|ipynb|rb|php)\b"
)
_VERSION_RE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|(?<![\w.])v\d+(?:\.\d+)+\b")
_NAMED_VERSION_RE = re.compile(r"\b([A-Z][\w+#-]*|[a-z][\w+#-]*)[ -]v?(\d+(?:\.\d+)+)\b")
_CODE_RE = re.compile(r"`([^`\n]{2,60})`")
# Hyphenated identifiers: "eu-central-1", "bge-m3", "billing-api".
_HYPHEN_ID_RE = re.compile(
    r"(?<![\w.-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:[a-z]*\d[a-z0-9]*|api|service|server|db|worker|bot|cli|sdk|app|svc|proxy|gateway|cluster|prod|staging)(?:-[a-z0-9]+)*(?![\w-])"
)
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


def extract_entities(text: str, known_names: dict[str, None] | set[str]) -> list[str]:
    """Entities in order of first appearance, deduplicated case-insensitively."""
    found: list[tuple[int, str]] = []
    covered: list[tuple[int, int]] = []

    def add(pos: int, value: str, end: int | None = None) -> None:
        value = value.strip(" .,;:!?'\"\u2019()[]")
        if len(value) < 2 or len(value) > 80:
            return
        found.append((pos, value))
        if end is not None:
            covered.append((pos, end))

    def is_covered(a: int, b: int) -> bool:
        return any(s <= a and b <= e for s, e in covered)

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
    for m in _NAMED_VERSION_RE.finditer(text):
        name = m.group(1)
        if name.lower() in TECH_CANON or name[0].isupper():
            if _norm(name) not in STOPWORDS and _norm(name) not in NOT_NAMES:
                canon = TECH_CANON.get(name.lower(), name)
                add(m.start(), f"{canon} {m.group(2)}", m.end())
    for m in _VERSION_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
            add(m.start(), m.group(0), m.end())
    for m in _HYPHEN_ID_RE.finditer(text):
        if not is_covered(m.start(), m.end()):
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
    multi = [o.lower() for o in out if " " in o]
    if multi:
        out = [o for o in out if " " in o or not any(re.search(rf"(?<!\w){re.escape(o.lower())}(?!\w)", mm) for mm in multi)]
    return out


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
