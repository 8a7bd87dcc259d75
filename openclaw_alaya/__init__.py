"""openclaw-alaya: long-term memory for OpenClaw agents.

`from openclaw_alaya import Alaya` — the engine is imported lazily so that `alaya --help`
and the hook commands do not pay for Kuzu and LanceDB before they need them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Alaya", "__version__"]

if TYPE_CHECKING:
    from .engine import Alaya


def __getattr__(name: str) -> Any:
    if name == "Alaya":
        from .engine import Alaya

        return Alaya
    raise AttributeError(name)
