"""The data directory's read/write lock (DESIGN.md §2).

Kuzu allows one read-write opener or many read-only ones and fails at once otherwise, so every
process serialises through one `filelock.ReadWriteLock`: readers share, a writer is alone.
A wait that runs out becomes a one-line error naming the directory and the operation.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import ReadWriteLock, Timeout

from .errors import LockTimeoutError
from .fsutil import atomic_write


class StoreLock:
    """Shared/exclusive lock over one data directory, with a note of who holds it for writing."""

    def __init__(self, data_dir: Path, timeout: float) -> None:
        self.data_dir = data_dir
        self.timeout = timeout
        self._path = data_dir / ".lock"
        self._holder_note = data_dir / "state" / "lock-holder.json"
        self._lock = ReadWriteLock(str(self._path), timeout=timeout, is_singleton=True)
        self.write_holds: list[tuple[str, float]] = []  # (operation, seconds held), for benchmarks

    @contextmanager
    def read(self, operation: str) -> Iterator[None]:
        with self._acquire(self._lock.read_lock, operation):
            yield

    @contextmanager
    def write(self, operation: str) -> Iterator[None]:
        with self._acquire(self._lock.write_lock, operation):
            started = time.perf_counter()
            atomic_write(
                self._holder_note,
                json.dumps({"operation": operation, "pid": os.getpid(), "since": time.time()}),
            )
            try:
                yield
            finally:
                self._holder_note.unlink(missing_ok=True)
                self.write_holds.append((operation, time.perf_counter() - started))

    @contextmanager
    def _acquire(self, factory, operation: str) -> Iterator[None]:
        try:
            ctx = factory(timeout=self.timeout)
            ctx.__enter__()
        except Timeout:
            raise LockTimeoutError(
                f"{self.data_dir}: could not get the lock for {operation} within "
                f"{self.timeout:g}s; held by {self._describe_holder()}"
            ) from None
        try:
            yield
        finally:
            ctx.__exit__(None, None, None)

    def _describe_holder(self) -> str:
        """Best effort: the writer's note, else readers (which leave no note)."""
        try:
            note = json.loads(self._holder_note.read_text())
            age = time.time() - float(note["since"])
            return f"{note['operation']} (pid {note['pid']}, {age:.0f}s ago)"
        except (OSError, ValueError, KeyError, TypeError):
            return "readers (recall or status in other alaya processes)"
