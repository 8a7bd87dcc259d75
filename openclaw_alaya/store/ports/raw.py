"""L3, the raw sessions: what the engine, distill, maintenance and the bridge use of a backend's
session store (the embedded one: store/raw.py, `RawStore`, files under `raw/`). The truth the
other layers are derived from, so a rebuild replays it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...models import Session, Turn


class RawSessions(Protocol):
    """Sessions, the turns each card came from (contexts) and the append-only logs."""

    root: Path
    contexts_dir: Path

    # --- sessions ---------------------------------------------------------------------------

    def find(self, session_id: str) -> Path | None:
        """Where the session is stored, or None."""
        ...

    def find_many(self, session_ids: list[str]) -> dict[str, Path | None]:
        """`find` for many sessions."""
        ...

    def load(self, session_id: str) -> "Session | None":
        """The stored session, or None when it was never ingested."""
        ...

    def load_file(self, path: Path) -> "Session | None":
        """The session stored at `path` (one of `session_files()`), or None when it is gone."""
        ...

    def merge(self, incoming: "Session") -> "tuple[Session, list[Turn]]":
        """`incoming` combined with the stored version, and the turns that are new."""
        ...

    def write(self, session: "Session") -> Path:
        """Store the session durably; where it is kept."""
        ...

    def write_many(self, sessions: "list[Session]") -> list[Path]:
        """`write` for many sessions, synced once."""
        ...

    def iter_sessions(self) -> "Iterator[Session]":
        """Every stored session."""
        ...

    def session_ids(self) -> list[str]:
        """Ids of every stored session."""
        ...

    def session_files(self) -> list[Path]:
        """Where every stored session is kept."""
        ...

    def remove_session(self, session_id: str) -> bool:
        """Delete a session (`forget --purge-raw`); False if there was none."""
        ...

    def blank_turns(self, session_id: str, turn_ids: list[str]) -> int:
        """Replace these turns' text (`--purge-raw`), keeping their place; how many."""
        ...

    # --- card contexts ----------------------------------------------------------------------

    def write_context(self, card_id: str, session_id: str, turns: "list[Turn]") -> Path:
        """Record the turns a card was distilled from in one session."""
        ...

    def write_contexts(self, items: "list[tuple[str, str, list[Turn]]]") -> None:
        """`write_context` for many (card id, session id, turns), synced once."""
        ...

    def load_context(self, card_id: str) -> "dict[str, list[Turn]] | None":
        """Session id → the card's source turns there; None if none were recorded."""
        ...

    def remove_context(self, card_id: str) -> None:
        """A forgotten card's source turns."""
        ...

    def forget_in_context(self, card_id: str, session_id: str, turn_ids: list[str] | None) -> None:
        """Blank these turns in the card's copy of its source turns, or (None) drop the session's."""
        ...

    # --- logs (links, forgets, redactions: what rebuild replays) ----------------------------

    def log_path(self, name: str) -> Path:
        """Where the log `name` is kept."""
        ...

    def append_log(self, name: str, records: list[dict[str, Any]]) -> None:
        """Append records to the log `name`, one line each."""
        ...

    def append_lines(self, name: str, lines: str) -> None:
        """Append ready lines to the log `name` in one write."""
        ...

    def read_log(self, name: str) -> list[dict[str, Any]]:
        """The records of the log `name`, oldest first."""
        ...
