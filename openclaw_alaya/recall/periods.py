"""Time in memory: the moment a card belongs to, by which the time buckets (`recall/buckets.py`)
file it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, tzinfo

from ..distill.dates import parse_when


def first_moment(values: Iterable[str | None], zone: tzinfo) -> datetime | None:
    """The first of `values` that reads as a time (read in `zone` when it names none). Given a
    card's `CardTimes`, that is when the card happened: its `valid_from` when set, else the start
    of the session it came from, else when it was stored; recall's ranges and the time buckets
    both date cards so."""
    for value in values:
        moment = parse_when(value)
        if moment is not None:
            return moment if moment.tzinfo else moment.replace(tzinfo=zone)
    return None
