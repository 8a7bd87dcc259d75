"""What the postgres index searches by words (issue 34): one tokenizer for the stored words and
the query, fed to PostgreSQL's `simple` configuration (no stemming, no language guess), so that
Chinese and English are searched alike: a run of CJK characters becomes its overlapping bigrams
(单字 for a run of one), other text its lower-cased words. Whether trigrams (pg_trgm) rank CJK
better than bigrams is measured with LoCoMo later (issue 34's "same answers")."""

from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")
MAX_TOKENS = 4096  # a tsvector holds at most 1 MB; a card's text is far shorter


def tokens(text: str) -> list[str]:
    """Lower-cased words and CJK bigrams, in order."""
    out: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if _IS_CJK.match(run):
            out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        else:
            out.append(run)
    return out[:MAX_TOKENS]


def document(text: str) -> str:
    """The text as `to_tsvector('simple', …)` should read it."""
    return " ".join(tokens(text))


def query(text: str) -> str | None:
    """A `to_tsquery('simple', …)` matching any of the text's tokens; None when it has none.
    Tokens are word characters only, so quoting each is enough."""
    found = list(dict.fromkeys(tokens(text)))
    return " | ".join(f"'{t}'" for t in found) or None
