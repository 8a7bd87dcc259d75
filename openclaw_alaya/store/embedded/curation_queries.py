"""Kuzu's side of the curation port (store/ports/curation.py): the Cypher behind entities,
forget and purge matching, listing and buckets. Mixed into `GraphStore`."""

from __future__ import annotations


class CurationQueries:
    """Curation operations on an open Kuzu connection (`self._rows`, `self.optional`)."""
