"""Embedders: the `Embedder` protocol and the offline, stateless `HashEmbedder`.

`HashEmbedder` is signed feature hashing (the "hashing trick") over

- content words (lower-cased, lightly stemmed, stopwords dropped),
- character n-grams of those words (with `<`/`>` boundary marks), which give fuzzy matching
  across inflections and typos ("paint" ~ "painting" ~ "painter"); a word longer than
  `NGRAM_WORD_CHARS` (a pasted hex dump, base64) gives the n-grams of its start only, so one
  token costs a bounded number of features instead of three per character,
- CJK character unigrams and bigrams (no segmenter needed),
- optionally adjacent content-word bigrams,

with sublinear term frequency. Features are hashed with blake2b (stable across processes and
Python versions; Python's `hash()` is salted per process and must never be used). Vectors
are L2-normalised float32; an empty or stopword-only text gives the zero vector.

The `id` names the algorithm version, dimension and (when not default) the settings, so the
index can refuse to mix vectors made by different embedders.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Protocol, runtime_checkable

import numpy as np

from .text import CJK_CHAR, CJK_STOPWORDS, STOPWORDS, TOKEN, cjk_grams, stem

__all__ = ["Embedder", "HashEmbedder", "DEFAULT_HASH_SETTINGS", "NGRAM_WORD_CHARS"]

# Longer words give the n-grams of their first NGRAM_WORD_CHARS characters only (no end mark):
# a 3 MB single-token paste took 34 s and 2.2 GB in n-grams. 64 keeps every real word, hash
# and UUID whole, so the vectors of ordinary text are unchanged.
NGRAM_WORD_CHARS = 64


@runtime_checkable
class Embedder(Protocol):
    """What the index needs from an embedder."""

    id: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return float32 [len(texts), dim], each row L2-normalised (or all zeros)."""
        ...


# Measured on the LoCoMo dev split (bench/locomo.py): dropping stopwords turns the arm from
# harmful to useful; dimension, n-gram range and word bigrams made no real difference.
DEFAULT_HASH_SETTINGS: dict = {
    "ngram_min": 3,
    "ngram_max": 5,
    "word_weight": 1.0,
    "char_weight": 1.0,
    "bigram_weight": 0.0,
    "sublinear_tf": True,
    "drop_stopwords": True,
}


def _hash64(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")


class HashEmbedder:
    """Deterministic signed feature hashing; no model, no network, no state.

    dim: vector size (default 1024).
    ngram_min/ngram_max: character n-gram range over each latin word padded as `<word>`
        (0 disables char n-grams).
    word_weight / char_weight / bigram_weight: L2 mass given to each feature family per word
        (the char n-grams of one word share `char_weight` between them).
    sublinear_tf: weight a repeated word by 1 + ln(tf) instead of tf.
    drop_stopwords: ignore English/Chinese function words (recommended: they carry no topic
        and, without IDF, would dominate short texts).
    """

    VERSION = "v1"

    def __init__(
        self,
        dim: int = 1024,
        *,
        ngram_min: int = DEFAULT_HASH_SETTINGS["ngram_min"],
        ngram_max: int = DEFAULT_HASH_SETTINGS["ngram_max"],
        word_weight: float = DEFAULT_HASH_SETTINGS["word_weight"],
        char_weight: float = DEFAULT_HASH_SETTINGS["char_weight"],
        bigram_weight: float = DEFAULT_HASH_SETTINGS["bigram_weight"],
        sublinear_tf: bool = DEFAULT_HASH_SETTINGS["sublinear_tf"],
        drop_stopwords: bool = DEFAULT_HASH_SETTINGS["drop_stopwords"],
    ) -> None:
        if not isinstance(dim, int) or dim < 16:
            raise ValueError(f"hash embedder dim must be an integer >= 16, got {dim!r}")
        if ngram_max == 0:
            ngram_min = 0  # char n-grams disabled
        if ngram_min < 0 or ngram_max < ngram_min or (ngram_max > 0 and ngram_min < 1):
            raise ValueError(f"bad char n-gram range {ngram_min}..{ngram_max}")
        self.dim = dim
        self.ngram_min = ngram_min
        self.ngram_max = ngram_max
        self.word_weight = float(word_weight)
        self.char_weight = float(char_weight)
        self.bigram_weight = float(bigram_weight)
        self.sublinear_tf = bool(sublinear_tf)
        self.drop_stopwords = bool(drop_stopwords)
        settings = {
            "ngram_min": ngram_min,
            "ngram_max": ngram_max,
            "word_weight": self.word_weight,
            "char_weight": self.char_weight,
            "bigram_weight": self.bigram_weight,
            "sublinear_tf": self.sublinear_tf,
            "drop_stopwords": self.drop_stopwords,
        }
        self.id = f"hash-{self.VERSION}-{dim}"
        if settings != DEFAULT_HASH_SETTINGS:
            tag = hashlib.blake2b(repr(sorted(settings.items())).encode(), digest_size=4).hexdigest()
            self.id += f"-{tag}"
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __repr__(self) -> str:
        return f"HashEmbedder(id={self.id!r})"

    # -- features -------------------------------------------------------------------------

    def _units(self, text: str) -> list[str]:
        """The per-text units whose features are cached: words, CJK grams, word bigrams."""
        units: list[str] = []
        prev: str | None = None
        for tok in TOKEN.findall(text.lower()):
            if CJK_CHAR.match(tok):
                for g in cjk_grams(tok):
                    if not (self.drop_stopwords and g in CJK_STOPWORDS):
                        units.append("z" + g)
                prev = None
                continue
            if self.drop_stopwords and tok in STOPWORDS:
                continue
            w = stem(tok)
            units.append("w" + w)
            if self.bigram_weight > 0 and prev is not None:
                units.append("b" + prev + " " + w)
            prev = w
        return units

    def _features(self, unit: str) -> tuple[np.ndarray, np.ndarray]:
        hit = self._cache.get(unit)
        if hit is not None:
            return hit
        kind, body = unit[0], unit[1:]
        feats: list[tuple[str, float]] = []
        if kind == "w":
            feats.append(("w:" + body, self.word_weight))
            if self.ngram_max > 0 and self.char_weight > 0:
                padded = f"<{body}>" if len(body) <= NGRAM_WORD_CHARS else f"<{body[:NGRAM_WORD_CHARS]}"
                grams = [
                    padded[i : i + n]
                    for n in range(self.ngram_min, self.ngram_max + 1)
                    for i in range(len(padded) - n + 1)
                ]
                # drop the gram equal to the whole padded word: it duplicates the word feature
                grams = [g for g in grams if g != padded]
                if grams:
                    gw = self.char_weight / math.sqrt(len(grams))
                    feats.extend(("c:" + g, gw) for g in grams)
        elif kind == "z":
            feats.append(("z:" + body, self.word_weight))
        else:  # "b": word bigram
            feats.append(("b:" + body, self.bigram_weight))
        idx = np.empty(len(feats), dtype=np.int64)
        val = np.empty(len(feats), dtype=np.float32)
        for j, (f, wt) in enumerate(feats):
            h = _hash64(f)
            idx[j] = h % self.dim
            val[j] = wt if (h >> 63) & 1 else -wt
        out = (idx, val)
        if len(self._cache) > 500_000:
            self._cache.clear()
        self._cache[unit] = out
        return out

    # -- API ------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        flat_idx: list[np.ndarray] = []
        flat_val: list[np.ndarray] = []
        for row, text in enumerate(texts):
            if not text:
                continue
            counts = Counter(self._units(text))
            base = row * self.dim
            for unit, tf in counts.items():
                idx, val = self._features(unit)
                scale = (1.0 + math.log(tf)) if self.sublinear_tf else float(tf)
                flat_idx.append(idx + base)
                flat_val.append(val * scale if scale != 1.0 else val)
        if not flat_idx:
            return np.zeros((n, self.dim), dtype=np.float32)
        mat = np.bincount(
            np.concatenate(flat_idx), weights=np.concatenate(flat_val), minlength=n * self.dim
        ).reshape(n, self.dim)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        np.divide(mat, norms, out=mat, where=norms > 0)
        return mat.astype(np.float32)
