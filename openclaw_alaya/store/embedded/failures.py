"""What Kuzu's and LanceDB's own exceptions mean, in the engine's terms (issue 30 classes 7
and 11): both report a full disk and a damaged file as a RuntimeError or ValueError with text,
which the CLI could only call an "internal error". Here that text becomes an OSError the CLI
reports in one line (a full, over-quota or read-only disk: `errors.UNWRITABLE`) or a
`DamagedStoreError` naming the file and `alaya rebuild`, which derives the graph and the index
again from raw/ (L3)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from ...errors import DamagedStoreError

# the operating system's words, as Kuzu (strerror) and Rust ("os error N") put them
_DISK = [(errno.ENOSPC, ("no space left on device", "os error 28")),
         (errno.EDQUOT, ("disk quota exceeded", "os error 122")),
         (errno.EROFS, ("read-only file system", "os error 30"))]
_LANCE_PATH = re.compile(r"(?:Not found|path|file)[:=]?\s*/?([^\s,]+\.(?:lance|manifest|txn|idx))", re.I)
_LANCE_TABLE = re.compile(r"Table '([^']+)' was not found")


def disk_error(exc: BaseException, where: Path) -> OSError | None:
    """`exc` as the OSError of a full, over-quota or read-only disk, if that is what it says."""
    if isinstance(exc, OSError):
        return None
    text = str(exc).lower()
    for number, words in _DISK:
        if any(w in text for w in words):
            return OSError(number, os.strerror(number), str(where))
    return None


def lance_damage(exc: BaseException, lancedb: Path) -> DamagedStoreError | None:
    """A LanceDB read or open that failed on a damaged, truncated or missing file, naming it."""
    text = " ".join(str(exc).split())
    table = _LANCE_TABLE.search(text)
    if isinstance(exc, ValueError) and table:
        return damaged(lancedb / f"{table.group(1)}.lance", "its table is missing")
    if not (isinstance(exc, (RuntimeError, OSError)) and "lance error" in text.lower()):
        return None
    found = _LANCE_PATH.search(text)
    file = Path("/" + found.group(1).lstrip("/")) if found else lancedb
    reason = "a file it needs is missing" if "not found" in text.lower() else "a file cannot be read"
    return damaged(file, reason)


def damaged(file: Path, reason: str) -> DamagedStoreError:
    return DamagedStoreError(f"{file} is damaged ({reason}); run `alaya rebuild` to derive the graph and the index "
                             "again from raw/")


def translated(exc: BaseException, root: Path) -> BaseException | None:
    """`exc` in the engine's terms (a disk error or a damaged store), or None: leave it as it is."""
    if isinstance(exc, DamagedStoreError):
        return None
    return disk_error(exc, root) or lance_damage(exc, root / "lancedb")
