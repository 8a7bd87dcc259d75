"""Text utilities shared by the offline embedder, the heuristic distiller and recall.

Everything here is deterministic, dependency-free and CJK-aware:

- `tokenize(text)`: lower-cased latin/digit words with light suffix stemming; runs of CJK
  characters (Han, kana) become character unigrams plus bigrams, so a query for 数据库 shares
  the bigrams 数据/据库 with a sentence containing 图数据库 without a segmenter. Hangul is
  space-separated and is kept as words.
- `STOPWORDS`: English + Chinese function words (also question words: what/when/who...).
- `content_words(text)`: tokens minus stopwords (and minus lone CJK unigrams when the run
  has bigrams), the words that carry meaning; used for queries and for the "answer words" metric.
- `estimate_tokens(text)`: a cheap LLM-token estimate for budgets: about one token per four
  latin characters and one per CJK character.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

__all__ = [
    "STOPWORDS",
    "CJK_STOPWORDS",
    "QUESTION_WORDS",
    "is_cjk",
    "stem",
    "tokenize",
    "words",
    "content_words",
    "estimate_tokens",
]

# Han (incl. extension A and compatibility), Hiragana, Katakana. Hangul is left out on
# purpose: Korean is written with spaces, so words work better than character n-grams.
_CJK_RANGES = (
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified
    "\uf900-\ufaff"  # compatibility ideographs
)
CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
# A word: letters/digits (any script but CJK) with inner apostrophes, dots or hyphens kept
# out; "LGBTQ+" -> "lgbtq", "don't" -> "don", "t" (the apostrophe splits, "t" is a stopword).
TOKEN = re.compile(f"[{_CJK_RANGES}]+|[^\\W_{_CJK_RANGES}]+", re.UNICODE)

_EN_STOP = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn d did didn do does doesn doing don down
during each else even ever few for from further get gets got had hadn has hasn have haven having
he her here hers herself him himself his how however i if in into is isn it its itself just
ll m ma me might more most much must mustn my myself no nor not now o of off oh ok okay on once
only or other ought our ours ourselves out over own re really s same shall shan she should
shouldn so some such t than that the their theirs them themselves then there these they this
those through to too under until up upon us ve very was wasn we were weren what whatever when
whenever where which while who whom whose why will with won would wouldn y yeah yes yet you your
yours yourself yourselves hey hi hello thanks thank wow
""".split()
# Question words are stopwords already; kept separately so query processing can see them.
QUESTION_WORDS = frozenset(
    "what when where which who whom whose why how 什么 哪里 哪儿 哪个 哪些 谁 何时 什么时候 为什么 怎么 怎样 如何 多少 几".split()
)
CJK_STOPWORDS = frozenset(
    """
的 了 是 在 我 你 他 她 它 们 这 那 有 和 与 及 就 都 也 还 又 把 被 给 对 从 到 向 以 而 之 其 吗 呢 吧 啊 呀
嗯 哦 么 个 一 不 没 很 会 能 要 上 下 中 里 着 过 得 地 所 为 于 等 让 并 或 且
我们 你们 他们 她们 它们 这个 那个 这些 那些 这里 那里 什么 怎么 为什么 如何 哪里 哪个 谁 一个 没有 不是
就是 还是 可以 因为 所以 但是 而且 如果 已经 自己 时候 现在 然后 这样 那样 一些 一下
""".split()
)
STOPWORDS = frozenset(_EN_STOP) | CJK_STOPWORDS


def is_cjk(ch: str) -> bool:
    return bool(CJK_CHAR.match(ch))


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Light, conservative English suffix stripping (an S-stemmer plus -ing/-ed/-ly).

    It only needs to be consistent between documents and queries, not linguistically right:
    "groups"->"group", "running"->"run", "painted"->"paint", "studies"->"study".
    Words with digits or non-ascii letters are returned unchanged.
    """
    w = word
    if len(w) <= 3 or not w.isascii() or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is", "'s")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]  # running -> run
    elif len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        w = w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]  # planned -> plan
        elif w.endswith("i"):
            w = w[:-1] + "y"  # studied -> study
    elif len(w) > 5 and w.endswith("ly"):
        w = w[:-2]
    return w


def cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    out = list(run)
    out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def words(text: str) -> list[str]:
    """Lower-cased surface words (no stemming, no CJK splitting): the raw token stream."""
    return TOKEN.findall(text.lower()) if text else []


def tokenize(text: str, *, stemming: bool = True, drop_stopwords: bool = False) -> list[str]:
    """Split text into index/search tokens.

    Latin/digit words are lower-cased and lightly stemmed; each run of CJK characters gives
    its character unigrams followed by its character bigrams.
    """
    if not text:
        return []
    out: list[str] = []
    for tok in TOKEN.findall(text.lower()):
        if CJK_CHAR.match(tok):
            grams = cjk_grams(tok)
            if drop_stopwords:
                grams = [g for g in grams if g not in CJK_STOPWORDS]
            out.extend(grams)
        else:
            if drop_stopwords and tok in STOPWORDS:
                continue
            out.append(stem(tok) if stemming else tok)
    return out


def content_words(text: str, *, stemming: bool = False) -> list[str]:
    """The meaning-carrying words of `text`, in order, duplicates kept.

    Latin words minus stopwords (not stemmed unless asked); CJK runs give their bigrams
    (minus stopwords), or the character itself for a one-character run that is not a
    stopword.
    """
    if not text:
        return []
    out: list[str] = []
    for tok in TOKEN.findall(text.lower()):
        if CJK_CHAR.match(tok):
            if len(tok) == 1:
                if tok not in CJK_STOPWORDS:
                    out.append(tok)
            else:
                out.extend(
                    g for g in (tok[i : i + 2] for i in range(len(tok) - 1)) if g not in CJK_STOPWORDS
                )
        elif tok not in STOPWORDS:
            out.append(stem(tok) if stemming else tok)
    return out


def one_line(text: str, limit: int) -> str:
    """`text` on one line (runs of whitespace become one space), cut to `limit` characters with
    an ellipsis: how a card or a turn is shown in a listing."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def counted(n: int, noun: str) -> str:
    """"1 card", "2 cards": a count as a person writes it (`noun` singular, plural by "s")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def estimate_tokens(text: str) -> int:
    """Rough LLM-token count for budgets: non-CJK characters / 4, plus 1 per CJK character."""
    if not text:
        return 0
    cjk = len(CJK_CHAR.findall(text))
    other = len(text) - cjk
    return cjk + math.ceil(other / 4)
