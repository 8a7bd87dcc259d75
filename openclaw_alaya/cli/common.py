"""Where the CLI gets its `Alaya` from: a fresh one per command, or, inside `alaya serve`,
one kept between requests (imports, embedder and LanceDB handles stay warm; Kuzu and the lock
are still opened and taken per operation, engine.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine import Alaya

_provider: Callable[[Any], "Alaya"] | None = None  # set by serve.py


def memory(data_dir: str | Path | None) -> "Alaya":
    if _provider is not None:
        return _provider(data_dir)
    from ..engine import Alaya

    return Alaya(data_dir)


def set_provider(provider: Callable[[Any], "Alaya"] | None) -> None:
    global _provider
    _provider = provider
