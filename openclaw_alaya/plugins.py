"""The plugin manager: the built-in plugin, then entry points of group `openclaw_alaya`, then
the modules named in `$ALAYA_PLUGINS` (comma-separated; handy for tests and local plugins)."""

from __future__ import annotations

import importlib
import os
from typing import Any

import pluggy

from . import hookspecs
from .errors import ConfigError

_manager: pluggy.PluginManager | None = None


def get_plugin_manager() -> pluggy.PluginManager:
    """One manager per process, built on first use."""
    global _manager
    if _manager is None:
        _manager = _build()
    return _manager


def _build() -> pluggy.PluginManager:
    from . import default_plugin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(default_plugin, name="default")
    from . import redaction_plugin

    pm.register(redaction_plugin, name="redaction")
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


def registry(hook_name: str, manager: pluggy.PluginManager | None = None) -> dict[str, Any]:
    """name -> factory from a `register_*` hook of `manager` (default: the process's);
    later plugins override earlier ones."""
    found: dict[str, Any] = {}

    def register(name: str, factory: Any) -> None:
        found[name] = factory

    # get_hookimpls() is in registration order (pluggy calls them in reverse): later ones win.
    impls = getattr((manager or get_plugin_manager()).hook, hook_name).get_hookimpls()
    for impl in impls:
        impl.function(register)
    return found


def describe() -> list[dict[str, Any]]:
    """Loaded plugins with their hooks, built-in first (for `alaya plugins`)."""
    pm = get_plugin_manager()
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    rows = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        callers = pm.get_hookcallers(plugin) or []
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
