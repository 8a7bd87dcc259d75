"""Sessions in, one at a time: a source (file, stdin bytes, `Session`) parsed into a validated
`Session`, and the `Session` node row L2 keeps for a stored session (`Alaya.ingest`,
`ingest.batch`, recovery)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import redact
from ..errors import InputError
from ..models import Session
from .formats import DEFAULT_MAX_BYTES, parse_session
from .provenance import with_import_defaults

if TYPE_CHECKING:
    from ..memory import Memory


def parse_source(source: Any, *, origin: str | None = None, **options: Any) -> Session:
    """A session from a path, bytes (stdin) or a `Session`; `options` as `parse_session` takes
    them (a `Session` gets the non-empty ids, `agent_id` and `session_id`). Turns that do not
    say where they came from get origins by role, capped by `origin` (ingest/provenance.py)."""
    return with_import_defaults(_parsed(source, **options), origin)


def _parsed(source: Any, **options: Any) -> Session:
    if isinstance(source, Session):
        ids = {k: options.get(k) for k in ("agent_id", "session_id")}
        return source.model_copy(update={k: v for k, v in ids.items() if v})
    if isinstance(source, bytes):
        return parse_session(source, source_name="<stdin>", **options)
    path = Path(source)
    if path.suffix.lower() in (".md", ".markdown"):  # a workspace note is not a session (docs/workspace.md)
        raise InputError(f"{path}: a Markdown note, not a session: sync the OpenClaw workspace it is in with"
                         f" `alaya workspace sync DIR` (MEMORY.md, USER.md, memory/*.md, bank/), or import a folder"
                         f" of notes with `alaya import-memex DIR`")
    try:
        with path.open("rb") as handle:  # never more than the cap into memory
            data = handle.read(DEFAULT_MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a session file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_session(data, source_name=str(path), **options)


def session_row(memory: "Memory", session: Session, path: Path, known: dict[str, Any],
                ingested_at: str) -> dict[str, Any]:
    """The Session node for a stored session (`Alaya.ingest`, `ingest.batch`, recovery):
    turn count and path from L3, distill progress and summary kept from the node it replaces
    (`known`)."""
    return {
        "id": session.id,
        "agent_id": session.agent_id,
        "started_at": session.started_at,
        "ingested_at": ingested_at,
        "path": str(path),
        "title": redact.clean_text(memory, session.title),
        "source_format": session.source_format,
        "turn_count": len(session.turns),
        "distilled_turns": known.get("distilled_turns") or 0,
        "last_card": known.get("last_card"),
        "kind": session.kind,
        "parent": session.parent,
        "channel": redact.clean_text(memory, session.channel),
        # one line about it: distill's (an LLM's, else its first card's title) once there is one
        "summary": known.get("summary") or redact.clean_text(memory, session.title),
    }
