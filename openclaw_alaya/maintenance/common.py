"""Helpers shared by the maintenance modules: clocks (the graph reads they share are upkeep
operations, store/ports/upkeep.py)."""

from __future__ import annotations

from datetime import datetime, timezone

from .. import clock


def utcnow() -> datetime:
    """The memory's clock (clock.py: `ALAYA_NOW` moves it)."""
    return clock.now()


def as_datetime(value: datetime | float | str | None) -> datetime:
    """`now` as given by a caller: a datetime, a POSIX timestamp, an ISO string, or None."""
    if value is None:
        return utcnow()
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc)
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError(f"not a time: {value!r}")
    return parsed


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
