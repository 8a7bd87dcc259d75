"""The data directory's read/write lock (docs/architecture.md, "The lock protocol").

Kuzu allows one read-write opener or many read-only ones and fails at once otherwise, so every
process serialises through one `filelock.ReadWriteLock`: readers share, a writer is alone.
A wait that runs out becomes a one-line error naming the directory and the operation. The
embedded backend's coordinator (store/ports/coordinator.py).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import ReadWriteLock, Timeout

from ..errors import UNWRITABLE, AlayaError, LockTimeoutError
from . import journal
from .critical import deferred_signals
from .fsutil import atomic_write

# A write hold needs this much free space (Kuzu's commit and checkpoint, LanceDB's files);
# ALAYA_MIN_FREE_BYTES sets another amount (0: no check).
MIN_FREE_BYTES = int(os.environ.get("ALAYA_MIN_FREE_BYTES", 2 << 20))

# Lock holds per lock file in this process: only the outermost acquisition recovers and
# journals (a nested read inside a write must not try to take the write lock).
_held: dict[Path, int] = {}


class StoreLock:
    """Shared/exclusive lock over one data directory, with a note of who holds it for writing."""

    def __init__(self, data_dir: Path, timeout: float, recover: Callable[[], object] | None = None,
                 generation: Callable[[], Any] | None = None) -> None:
        self.data_dir = data_dir
        self._generation = generation  # the graph's generation (store/embedded/graph.py, `version`)
        self.timeout = timeout
        self._recover = recover  # ingest.recovery.recover for this directory: finishes dead writes
        self._path = data_dir / ".lock"
        self._holder_note = data_dir / "state" / "lock-holder.json"
        self._lock: ReadWriteLock | None = None  # opened on first use (it creates `.lock`)
        self.write_holds: list[tuple[str, float]] = []  # (operation, seconds held), for benchmarks

    @contextmanager
    def read(self, operation: str, *, timeout: float | None = None) -> Iterator[None]:
        """The shared lock; `timeout` instead of the configured one (0: only if free now). A
        read writes nothing: what a dead writer left waits for the next write hold (the reader
        refuses a store it cannot read as it is, store/embedded/backend.py)."""
        try:
            lock = self._rw()
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise
            yield  # a read-only medium: no process can write here, so there is nothing to exclude
            return
        with self._acquire(lock.read_lock, operation, timeout):
            yield

    @contextmanager
    def write(self, operation: str) -> Iterator[None]:
        """The exclusive lock. The outermost hold finishes a dead writer's work first
        (`recover`), journals itself and leaves a note of its holder; a hold nested in it (crash
        recovery opening the graph) is a plain re-entry. The outermost hold is one unit against
        Ctrl-C (store/critical.py), and a hold that fails part way (a full disk, a store error)
        leaves its record as a dead one would, so that the next write hold mends the layers it
        may have left apart; a user error (`AlayaError`) is raised before anything changes."""
        if _held.get(self._path):
            with self._acquire(self._rw().write_lock, operation):
                yield
            return
        with deferred_signals(), self._acquire(self._rw().write_lock, operation):
            self._require_room()
            started = time.perf_counter()
            atomic_write(
                self._holder_note,
                json.dumps({"operation": operation, "pid": os.getpid(), "since": time.time()}),
            )
            record = None
            failed = False
            try:
                if self._recover is not None:
                    self._recover()  # finish what a killed writer left (store/journal.py)
                    record = journal.Journal.of(self.data_dir).begin(operation)
                yield
            except AlayaError:
                raise
            except BaseException:
                failed = True
                raise
            finally:
                if not failed:
                    journal.Journal.of(self.data_dir).end(record)
                self._holder_note.unlink(missing_ok=True)
                self.write_holds.append((operation, time.perf_counter() - started))

    def _require_room(self) -> None:
        """Refuse a write hold on a disk with less than `MIN_FREE_BYTES` free, before it changes
        anything: Kuzu aborts the process (or leaves a checkpoint cut off) when the disk fills
        inside a commit, so a nearly full disk is refused in one line instead (issue 30 class 7)."""
        try:
            st = os.statvfs(self.data_dir)
        except OSError:
            return  # no such directory yet (init makes it): the write says what is wrong
        if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (under {MIN_FREE_BYTES >> 20} MB free)",
                          str(self.data_dir))

    def holding(self) -> bool:
        """This process holds the lock already (a read or write hold is open)."""
        return bool(_held.get(self._path))

    def needs_recovery(self) -> bool:
        """A dead writer left work that the next write hold finishes."""
        return journal.needs_recovery(self.data_dir)

    def record_purge(self, doc: dict[str, Any]) -> str:
        return journal.Journal.of(self.data_dir).intend(doc)

    def pending_purges(self) -> list[tuple[str, dict[str, Any]]]:
        return journal.Journal.of(self.data_dir).intents()

    def purge_done(self, name: str) -> None:
        journal.Journal.of(self.data_dir).fulfilled(name)

    def generation(self) -> Any:
        """Changes whenever a writer may have changed the graph (None: no counter given)."""
        return self._generation() if self._generation is not None else None

    def _rw(self) -> ReadWriteLock:
        if self._lock is None:
            self._lock = ReadWriteLock(str(self._path), timeout=self.timeout, is_singleton=True)
        return self._lock

    @contextmanager
    def _acquire(self, factory, operation: str, timeout: float | None = None) -> Iterator[None]:
        timeout = self.timeout if timeout is None else timeout
        old_umask = os.umask(0o077)  # whatever the stores create in here is owner-only
        try:
            ctx = factory(timeout=timeout)
            ctx.__enter__()
        except Timeout:
            os.umask(old_umask)
            raise LockTimeoutError(
                f"{self.data_dir}: could not get the lock for {operation} within "
                f"{timeout:g}s; held by {self._describe_holder()}"
            ) from None
        _held[self._path] = _held.get(self._path, 0) + 1
        try:
            yield
        finally:
            _held[self._path] -= 1
            ctx.__exit__(None, None, None)
            os.umask(old_umask)

    def _describe_holder(self) -> str:
        """Best effort: the writer's note when its process is alive, else who it may be (readers
        leave no note; a writer between taking the lock and writing its note neither)."""
        try:
            note = json.loads(self._holder_note.read_text())
            age = time.time() - float(note["since"])
            _alive(int(note["pid"]))  # a note a killed writer left says nothing of now
            return f"{note['operation']} (pid {note['pid']}, {age:.0f}s ago)"
        except (OSError, ValueError, KeyError, TypeError):
            return "another alaya process (readers such as recall or status leave no note)"


def _alive(pid: int) -> None:
    """Raises ProcessLookupError when no process `pid` exists (another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass
