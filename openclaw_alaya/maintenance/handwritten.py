"""Writing a file a human edits too (a workspace's `bank/` pages, its `MEMORY.md`), with
optimistic concurrency: the caller read the file (`before`, None when it did not exist) and
built the new text from it; here the new text goes to a temporary file beside it and is
fsynced, the file is read again right before the rename, and when it changed meanwhile the
human's version stays (the caller reports it and tries again next run). A file that did not
exist is put in place with `link`, which fails if one appeared meanwhile. Used by reflect.py
and core_writeback.py (issue 31).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def replace_if_unchanged(path: Path, before: str | None, text: str) -> str | None:
    """Put `text` in place of `before`. None when written; "changed" or "created" when the file
    changed (or appeared) between the caller's read and the rename: nothing was written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (path.stat().st_mode & 0o777) if before is not None else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        if read_text(path) != before:  # someone wrote it meanwhile: theirs wins
            return "changed"
        if before is None:
            try:
                os.link(tmp, path)  # fails if it appeared in the meantime
            except FileExistsError:
                return "created"
        else:
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return None
