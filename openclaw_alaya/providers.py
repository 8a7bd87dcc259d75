"""Pick the embedder and distiller named in config. Offline ones are the defaults."""

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
    provider = config.embedding.provider
    if provider == "hash":
        from .embedding import HashEmbedder

        return HashEmbedder(config.embedding.dimensions)
    raise ConfigError(f"embedding.provider: unknown provider {provider!r} (available: hash)")


def make_distiller(config: Config) -> Distiller:
    provider = config.distill.llm_provider
    if provider == "heuristic":
        from .distill import HeuristicDistiller

        return HeuristicDistiller()
    raise ConfigError(f"distill.llm_provider: unknown provider {provider!r} (available: heuristic)")
