"""The `openai` embedder: any OpenAI-compatible `/embeddings` endpoint (SiliconFlow
`BAAI/bge-m3`, OpenAI `text-embedding-3-*`, Ollama, vLLM…).

- texts are sent in batches of `embedding.batch_size`, up to `embedding.max_concurrency`
  batches in flight;
- every vector is cached by a hash of (model, dimensions, text): in memory, and in
  `state/embeddings.sqlite` once bound to a data directory, so unchanged text is never
  embedded twice (re-distilling, rebuild, reembed after an interruption);
- an answer with the wrong number of vectors or the wrong dimension is refused with a message
  that names the config key and `alaya reembed`;
- vectors are L2-normalised float32 like the hash embedder's.

`id` is `openai:<model>:<dimensions>`: the index records it, and a different model or size is
refused until `alaya reembed` rebuilds L1.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .client import LLMResponseError, OpenAIClient

QUERY_TIMEOUT = 2.0  # a single text (a recall query) must not hold a hook up: short, one retry


class OpenAIEmbedder:
    def __init__(self, config: Any, *, transport: Any = None) -> None:
        cfg = config.embedding
        self.model = cfg.model
        self.dim = int(cfg.dimensions)
        self.id = f"openai:{cfg.model}:{self.dim}"
        self.batch_size = int(cfg.batch_size)
        self.max_concurrency = int(cfg.max_concurrency)
        self.client = OpenAIClient(
            cfg.base_url, api_key_env=cfg.api_key_env, timeout=cfg.timeout_seconds,
            max_retries=cfg.max_retries, max_concurrency=cfg.max_concurrency, transport=transport,
            what="embedding",
        )
        # OpenAI's text-embedding-3 models can shorten vectors; most other servers reject the field
        self.send_dimensions = cfg.model.startswith("text-embedding-3")
        self._memo: dict[str, np.ndarray] = {}
        self._db: sqlite3.Connection | None = None
        self._db_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(id={self.id!r})"

    def bind(self, state_dir: Path) -> None:
        """Keep the cache and the endpoint-down marker in this data directory's `state/`."""
        self.client.bind(state_dir)
        try:
            state_dir.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(state_dir / "embeddings.sqlite"), timeout=10, check_same_thread=False)
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")
            db.commit()
            self._db = db
        except sqlite3.Error:
            self._db = None  # a cache: without it, texts are simply embedded again

    # --- API ------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        missing: dict[str, str] = {}
        found = self._lookup([k for k, t in zip(keys, texts) if t.strip()])
        for i, (key, text) in enumerate(zip(keys, texts)):
            if not text.strip():
                continue  # nothing to embed: the zero vector, as the hash embedder gives
            if key in found:
                out[i] = found[key]
            else:
                missing.setdefault(key, text)
        if missing:
            fresh = self._embed_remote(list(missing.values()))
            new = dict(zip(missing, fresh))
            self._remember(new)
            for i, key in enumerate(keys):
                if key in new:
                    out[i] = new[key]
        return out

    # --- remote -----------------------------------------------------------------------------

    def _embed_remote(self, texts: list[str]) -> list[np.ndarray]:
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        single = len(texts) == 1
        if len(batches) == 1 or self.max_concurrency == 1:
            results = [self._request(b, quick=single) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batches))) as pool:
                results = list(pool.map(self._request, batches))
        return [vec for batch in results for vec in batch]

    def _request(self, batch: list[str], quick: bool = False) -> list[np.ndarray]:
        payload: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.send_dimensions:
            payload["dimensions"] = self.dim
        if quick:
            body = self.client.post("embeddings", payload,
                                    timeout=min(QUERY_TIMEOUT, self.client.timeout), retries=1)
        else:
            body = self.client.post("embeddings", payload)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != len(batch):
            got = len(data) if isinstance(data, list) else "no"
            raise LLMResponseError(f"embedding: {self.client.base_url} returned {got} vectors for {len(batch)} texts")
        rows = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
        vectors = []
        for row in rows:
            vec = np.asarray(row.get("embedding") if isinstance(row, dict) else None, dtype=np.float32)
            if vec.ndim != 1 or vec.shape[0] != self.dim:
                got = vec.shape[0] if vec.ndim == 1 else "?"
                raise LLMResponseError(
                    f"embedding: model {self.model} returned {got}-dimensional vectors but "
                    f"embedding.dimensions is {self.dim}; set embedding.dimensions to {got} in config.json "
                    "and run `alaya reembed` to rebuild the index with it"
                )
            norm = float(np.linalg.norm(vec))
            vectors.append(vec / norm if norm > 0 else vec)
        return vectors

    # --- cache ------------------------------------------------------------------------------

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.id}\x00{text}".encode("utf-8")).hexdigest()

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found = {k: self._memo[k] for k in keys if k in self._memo}
        rest = [k for k in keys if k not in found]
        if rest and self._db is not None:
            with self._db_lock:
                try:
                    for i in range(0, len(rest), 500):
                        chunk = rest[i : i + 500]
                        marks = ",".join("?" * len(chunk))
                        for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                            vec = np.frombuffer(blob, dtype=np.float32)
                            if vec.shape[0] == self.dim:
                                found[key] = vec
                                self._memo[key] = vec
                except sqlite3.Error:
                    pass
        return found

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        if len(self._memo) > 200_000:
            self._memo.clear()
        self._memo.update(vectors)
        if self._db is not None and vectors:
            with self._db_lock:
                try:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                        [(k, v.astype(np.float32).tobytes()) for k, v in vectors.items()],
                    )
                    self._db.commit()
                except sqlite3.Error:
                    pass
