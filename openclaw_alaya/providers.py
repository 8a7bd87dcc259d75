"""Pick the embedder and distiller named in config, from those the plugins register
(DESIGN.md §6; the built-in plugin registers the offline `hash` and `heuristic`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .config import Config
from .errors import ConfigError
from .models import DistillResult, Session

if TYPE_CHECKING:
    from .embedding import Embedder


class Distiller(Protocol):
    name: str

    def distill(self, session: Session, start: int = 0) -> DistillResult: ...


def make_embedder(config: Config) -> "Embedder":
    return _make("register_embedders", "embedding.provider", config.embedding.provider, config)


def make_distiller(config: Config) -> Distiller:
    return _make("register_distillers", "distill.llm_provider", config.distill.llm_provider, config)


def _make(hook: str, key: str, provider: str, config: Config):
    from .plugins import registry

    factories = registry(hook)
    if provider not in factories:
        available = ", ".join(sorted(factories)) or "none"
        raise ConfigError(f"{key}: unknown provider {provider!r} (available: {available})")
    return factories[provider](config)
