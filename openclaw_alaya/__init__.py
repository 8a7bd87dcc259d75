"""openclaw-alaya: long-term memory for OpenClaw agents.

`from openclaw_alaya import Alaya` — the engine is imported lazily so that `alaya --help`
and the hook commands do not pay for Kuzu and LanceDB before they need them.

The package top is where the built-in plugins are named (docs/architecture.md, "Plugins and
hooks"): the process's plugin manager registers them first, so `Alaya(dir)`, handed no manager,
still gets the offline providers, redaction and the session-start sections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import plugins as _plugins

__version__ = "0.1.0"
__all__ = ["Alaya", "__version__", "builtin_plugins"]

if TYPE_CHECKING:
    from .engine import Alaya


def builtin_plugins() -> list[tuple[str, object]]:
    """The built-in plugins as (name, module), in registration order: the default behaviour,
    then redaction (before third-party plugins, so their store filters see redacted text).
    `plugins.build(builtin_plugins())` makes a manager of one's own for `Alaya(..., hooks=)`."""
    from . import default_plugin, redaction_plugin

    return [("default", default_plugin), ("redaction", redaction_plugin)]


_plugins.set_builtins(builtin_plugins)


def __getattr__(name: str) -> Any:
    if name == "Alaya":
        from .engine import Alaya

        return Alaya
    raise AttributeError(name)
