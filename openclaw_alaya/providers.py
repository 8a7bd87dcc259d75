"""The providers, embedders and distillers: pick the ones config names from those the plugins of
`memory.hooks` register (the built-in plugin registers the offline `hash` and `heuristic`), hand
them the data directory's `state/`, degrade when an embedder is down (cards kept, listed as
pending), and count the tokens and requests a model-backed one spends."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from .errors import AlayaError, ConfigError
from .models import Distiller
from .plugins import registry
from .store.fsutil import atomic_write

if TYPE_CHECKING:
    import numpy as np

    from .embedding import Embedder
    from .memory import Memory

PENDING_FILE = "pending_embeddings.json"
USAGE_FILE = "llm_usage.json"


def make_embedder(memory: "Memory") -> "Embedder":
    """The embedder `embedding.provider` names, from those `memory.hooks` registers."""
    return _make(memory, "register_embedders", "embedding.provider", memory.config.embedding.provider)


def make_distiller(memory: "Memory") -> Distiller:
    """The distiller `distill.llm_provider` names, from those `memory.hooks` registers."""
    return _make(memory, "register_distillers", "distill.llm_provider", memory.config.distill.llm_provider)


def _make(memory: "Memory", hook: str, key: str, provider: str) -> Any:
    factories = registry(hook, memory.hooks)
    if provider not in factories:
        available = ", ".join(sorted(factories)) or "none"
        raise ConfigError(f"{key}: unknown provider {provider!r} (available: {available})")
    return factories[provider](memory.config)


def bind(memory: "Memory", provider: Any) -> Any:
    """Give a provider that wants it the data directory's `state/` (caches, usage, summary)."""
    if hasattr(provider, "bind"):
        provider.bind(memory.dirs.state)
    return provider


# --- embedding, with degradation ------------------------------------------------------------


def embed_or_pending(embedder: Any, texts: list[str]) -> tuple[np.ndarray, bool]:
    """(vectors, ok): all-zero vectors and ok=False when the embedder cannot answer."""
    import numpy as np

    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), True
    try:
        return embedder.embed(texts), True
    except AlayaError as exc:  # endpoint down, wrong dimension, key refused: keep the cards
        print(f"alaya: warning: embedding failed, {len(texts)} texts left pending: {' '.join(str(exc).split())[:300]}",
              file=sys.stderr)
        return np.zeros((len(texts), embedder.dim), dtype=np.float32), False


def read_pending(memory: "Memory") -> list[str]:
    try:
        data = json.loads((memory.dirs.state / PENDING_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [c for c in data.get("cards", []) if isinstance(c, str)] if isinstance(data, dict) else []


def write_pending(memory: "Memory", ids: list[str]) -> None:
    """Call under the write lock (the list is read-modify-written)."""
    atomic_write(memory.dirs.state / PENDING_FILE, json.dumps({"cards": list(dict.fromkeys(ids))}))


# --- usage accounting -------------------------------------------------------------------------


def record_usage(memory: "Memory", *providers: Any) -> None:
    """Add the providers' token and request counts to `state/llm_usage.json` (a counter; a lost
    race between two processes loses one run's counts, never data)."""
    path = memory.dirs.state / USAGE_FILE
    try:
        totals = json.loads(path.read_text())
    except (OSError, ValueError):
        totals = {}
    changed = False
    for provider in providers:
        client = getattr(provider, "client", None)
        usage = getattr(client, "usage", None)
        if usage is None or not (usage.requests or usage.failures):
            continue
        entry = totals.setdefault(client.what, {})
        counts = {"requests": usage.requests, "failures": usage.failures,
                  "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
        counts.update(getattr(provider, "stats", {}) or {})
        for key, value in counts.items():
            if isinstance(value, (int, float)):
                entry[key] = entry.get(key, 0) + value
        entry["model"] = getattr(provider, "model", None)
        # count each run once: reset the provider's counters
        usage.requests = usage.failures = usage.prompt_tokens = usage.completion_tokens = 0
        if hasattr(provider, "stats"):
            provider.stats = {k: 0 for k in provider.stats}
        changed = True
    if changed:
        try:
            atomic_write(path, json.dumps(totals, indent=1))
        except OSError:
            pass


def read_usage(memory: "Memory") -> dict[str, Any]:
    try:
        data = json.loads((memory.dirs.state / USAGE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
