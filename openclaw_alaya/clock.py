"""The one clock of memory (issue 31): every "now" that a card, a session, a recall, an access
or a maintenance step is stamped or judged with comes from here, so `ALAYA_NOW` (an ISO date or
time, UTC when it names no zone) moves all of them at once: a year of use can be simulated from
the command line, introspect included. Process mechanics (lock notes, journal records, a model
endpoint's back-off, the daemon's uptime, cron's next run) keep the real clock: they measure
this process, not the memory's life."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from .errors import InputError

ENV = "ALAYA_NOW"


def read_instant(value: str, what: str) -> datetime:
    """An ISO 8601 date or time as a moment (a trailing Z too, which Python 3.10 does not
    read), UTC when it names no zone; one line naming `what` otherwise."""
    text = value.strip()
    try:
        if not text or not text[0].isdigit():
            raise ValueError(text)
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    except ValueError:
        raise InputError(f"{what}: cannot read {value!r} as an ISO date or time (e.g. 2026-11-30T09:00:00+00:00)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def fixed() -> datetime | None:
    """The moment `ALAYA_NOW` fixes, or None when it is unset (the real clock runs)."""
    value = os.environ.get(ENV)
    return read_instant(value, ENV) if value else None


def now() -> datetime:
    """Now, aware: `ALAYA_NOW` when set, else the current UTC time."""
    return fixed() or datetime.now(timezone.utc)


def timestamp() -> float:
    """Now as POSIX seconds (the access log's `ts`)."""
    return now().timestamp()
