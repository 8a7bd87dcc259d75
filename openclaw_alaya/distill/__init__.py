"""Distillers: turn session turns into card drafts and links.

`heuristic` (offline, deterministic) is the default; see `heuristic.py`. It is imported on
first use: recall needs only `dates` from this package, and a cold `alaya recall` would pay
for the heuristic distiller's patterns otherwise.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HeuristicDistiller"]


def __getattr__(name: str) -> Any:  # PEP 562
    if name == "HeuristicDistiller":
        from .heuristic import HeuristicDistiller

        return HeuristicDistiller
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
