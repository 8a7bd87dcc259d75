"""The card graph's curation operations: entities, and the matching behind forget and purge."""

from __future__ import annotations

from typing import Protocol


class CurationGraph(Protocol):
    """Named operations curate/, recall/listing, recall/buckets and ingest/ need of L2."""
