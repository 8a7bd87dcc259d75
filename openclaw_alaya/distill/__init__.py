"""Distillers: turn session turns into card drafts and links.

`heuristic` (offline, deterministic) is the default; see `heuristic.py`.
"""

from __future__ import annotations

from .heuristic import HeuristicDistiller

__all__ = ["HeuristicDistiller"]
