"""Backend choice in one place: `storage.backend` in config names a backend registered through
the `register_stores` hook (the built-in `embedded`), as providers.py picks embedders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import Config
    from .datadir import DataDir
    from .ports.backend import Backend


def open_backend(name: str, factories: dict[str, Any], dirs: "DataDir", config: "Config", **wiring: Any) -> "Backend":
    """The backend `name` for this data directory, from the registered factories; `wiring`: what
    the engine hands every backend (hookspecs.py, `register_stores`)."""
    factory = factories.get(name)
    if factory is None:
        known = ", ".join(sorted(factories)) or "none"
        raise ConfigError(f"storage.backend: no backend {name!r} (registered: {known})")
    return factory(dirs, config, **wiring)
