"""Scratch space on PostgreSQL (issue 34; store/ports/scratch.py), as far as it is built. A
write hold is one transaction, so nothing is ever left half-installed (`roll_forward` has
nothing to finish, `clear_leftovers` nothing to throw away), and introspect applies its batch
in the database under the write hold rather than to a private copy (`graph_draft` gives
none: the port's "apply in place"). New stores built aside (rebuild, reembed) and a copy of
the whole store (backup) are not built yet: a one-line error."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, NoReturn

from ...errors import AlayaError


class PostgresScratch:
    """What a database needs of scratch space: nothing to recover, no draft copies."""

    def staged(self, kind: str, *, graph: bool) -> NoReturn:
        not_built(f"{kind} (building new stores aside)")

    @contextmanager
    def graph_draft(self, hold: AbstractContextManager[Any]) -> Iterator[None]:
        yield None

    def roll_forward(self) -> bool:
        return False

    def clear_leftovers(self) -> None:
        return None

    def copy_store(self, dest: Path, *, leave_out: Path) -> NoReturn:
        not_built("backup (a copy of the whole store)")


def not_built(what: str) -> NoReturn:
    """The one-line error for what the postgres backend does not do yet."""
    raise AlayaError(f"storage.backend postgres: {what} is not built on PostgreSQL yet (issue 34); "
                     "use storage.backend embedded")
