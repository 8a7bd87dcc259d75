"""A read of a graph whose checkpoint was cut off, on a disk that cannot take the write that
finishes it (issue 30 class 7: a full disk during a capture's commit).

Kuzu leaves `graph.kuzu.shadow` when a checkpoint fails part way, and a read-only open refuses
such a file; finishing it in place is a write (the next write hold does it, store/journal.py).
Until there is room, a read copies the graph, its WAL and its shadow file into the system's
temporary folder, lets Kuzu replay them there with a read-write open, and reads that copy:
what was committed is served, and the data directory is not written to."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import UnwritableError
from .graph import GraphStore

_warned: set[Path] = set()
_BESIDE = ("", ".wal", ".shadow", ".schema")  # the graph and the files Kuzu and its schema mark keep beside it


@contextmanager
def recovered_copy(graph: Path) -> Iterator[Path]:
    """The path of a private, replayed copy of `graph`, removed when the block ends."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="alaya-read-"))
    except OSError as exc:
        raise _refused(graph, exc) from None
    try:
        try:
            for suffix in _BESIDE:
                source = graph.with_name(graph.name + suffix)
                if source.exists():
                    shutil.copyfile(source, folder / source.name)
            copy = folder / graph.name
            with GraphStore(copy, read_only=False) as store:
                store.upgrade()  # the read-write open replays the shadow pages and the WAL
        except OSError as exc:
            raise _refused(graph, exc) from None
        if graph not in _warned:  # once per process, not per read hold
            _warned.add(graph)
            print(f"alaya: warning: {graph.parent}: a write was cut off by a full or read-only disk; reading what it "
                  "committed from a copy until there is room (the next write finishes it)", file=sys.stderr)
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _refused(graph: Path, exc: OSError) -> UnwritableError:
    return UnwritableError(f"{graph.parent}: a write was cut off by a full or read-only disk and the graph cannot be "
                           f"read until it is finished ({exc.strerror or exc}); free some space, then run any command")
