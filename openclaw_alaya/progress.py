"""Progress for long work: a self-overwriting line on a terminal, nothing when piped
(docs/architecture.md, "Commands")."""

from __future__ import annotations

import sys
import time

_MIN_INTERVAL_S = 0.2
_last_shown = 0.0


def progress(message: str, done: int, total: int) -> None:
    """Show `message` on stderr if it is a terminal; throttled, and cleared when done == total."""
    global _last_shown
    if total <= 1 or not sys.stderr.isatty():
        return
    now = time.monotonic()
    if done < total and now - _last_shown < _MIN_INTERVAL_S:
        return
    _last_shown = now
    end = "\n" if done >= total else ""
    sys.stderr.write(f"\r\033[K{message}{end}")
    sys.stderr.flush()
