"""A write-lock hold is one unit against Ctrl-C (docs/architecture.md, "Crash safety").

A hold writes L3, commits L2 and then writes L1; a KeyboardInterrupt raised between the L2
commit and the L1 write left cards that recall could not find (issue 30, class 13) and, with
the index short of them, a re-run that resolved new cards against fewer stored ones and so
diverged from an uninterrupted run. So SIGINT, SIGTERM and SIGHUP that arrive during the
outermost hold are held back and delivered, with the handler that was in place, once the hold
has ended: the command stops at the next unit boundary, exactly as it would have stopped had
the signal come a moment later. A kill -9 cannot be held back: the journal and crash
recovery (store/journal.py, ingest/recovery.py) cover that.

Only the main thread can set signal handlers; a hold in another thread (the daemon's) runs as
before, since signals are delivered to the main thread anyway.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

DEFERRED = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold back `DEFERRED` signals for the duration of the block, then re-deliver them (each
    once, in arrival order) to the handlers that were there before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {sig: signal.signal(sig, lambda number, _frame: arrived.append(number)) for sig in DEFERRED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        for sig in dict.fromkeys(arrived):
            signal.raise_signal(sig)
