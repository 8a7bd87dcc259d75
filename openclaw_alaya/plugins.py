"""The plugin manager (docs/architecture.md, "Plugins and hooks"): the hook specifications, then
the built-in plugins, then entry points of group `openclaw_alaya`, then the modules named in
`$ALAYA_PLUGINS` (comma-separated; handy for tests and local plugins).

This module knows no plugin. The package top (openclaw_alaya/__init__.py) names the built-in ones
(`set_builtins`), and the modules below the engine are handed the manager as `memory.hooks`
instead of importing one: the manager sits low in the layers and nothing imports up to it.
pluggy is imported when a manager is built, so `alaya --help` and the daemon client never pay for it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    import pluggy

Builtins = Callable[[], Iterable[tuple[str, object]]]

_builtins: Builtins = lambda: ()  # none until the package top names them
_manager: "pluggy.PluginManager | None" = None


def set_builtins(load: Builtins) -> None:
    """How the process's manager gets the built-in plugins: `load()` gives (name, plugin) pairs,
    registered first, in order. Called by the package top at import, before any manager is built."""
    global _builtins
    _builtins = load


def get_plugin_manager() -> "pluggy.PluginManager":
    """The process's manager, built on first use: the one an `Alaya` handed none calls."""
    global _manager
    if _manager is None:
        _manager = build(_builtins())
    return _manager


def build(builtins: Iterable[tuple[str, object]] = ()) -> "pluggy.PluginManager":
    """A manager with the hook specifications and `builtins` (name, plugin) registered in order,
    then the entry points, then `$ALAYA_PLUGINS`; later ones override earlier ones."""
    import pluggy

    from . import hookspecs

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name, plugin in builtins:
        pm.register(plugin, name=name)
    pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    for name in filter(None, (part.strip() for part in os.environ.get("ALAYA_PLUGINS", "").split(","))):
        if pm.has_plugin(name):
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"ALAYA_PLUGINS: cannot import plugin {name!r} ({exc})") from None
        pm.register(module, name=name)
    return pm


def registry(hook_name: str, manager: "pluggy.PluginManager") -> dict[str, Any]:
    """name -> factory from a `register_*` hook of `manager`; later plugins override earlier ones."""
    found: dict[str, Any] = {}

    def register(name: str, factory: Any) -> None:
        found[name] = factory

    # get_hookimpls() is in registration order (pluggy calls them in reverse): later ones win.
    for impl in getattr(manager.hook, hook_name).get_hookimpls():
        impl.function(register)
    return found


def describe(manager: "pluggy.PluginManager") -> list[dict[str, Any]]:
    """`manager`'s plugins with their hooks, built-in first (for `alaya plugins`)."""
    dists = {id(plugin): dist for plugin, dist in manager.list_plugin_distinfo()}
    rows = []
    for name, plugin in manager.list_name_plugin():
        if plugin is None:
            continue
        callers = manager.get_hookcallers(plugin) or []
        dist = dists.get(id(plugin))
        rows.append(
            {
                "name": name,
                "module": getattr(plugin, "__name__", type(plugin).__name__),
                "distribution": f"{dist.project_name} {dist.version}" if dist is not None else None,
                "hooks": sorted(caller.name for caller in callers),
            }
        )
    return rows
