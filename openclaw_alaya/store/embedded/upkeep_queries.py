"""Kuzu's side of the upkeep port (store/ports/upkeep.py): the Cypher behind maintenance's
bulk reads and rewrites. Mixed into `GraphStore`."""

from __future__ import annotations


class UpkeepQueries:
    """Upkeep operations on an open Kuzu connection (`self._rows`, `self.optional`)."""
