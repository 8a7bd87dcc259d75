"""The curated core's section of a workspace's `MEMORY.md` (issue 31; docs/workspace.md, "The
curated core in MEMORY.md"). Pure functions on text, shared by the writer
(maintenance/core_writeback.py) and the reader (markdown.parse, so that workspace sync does not
take our own lines back as new owner cards).

    <!-- alaya:core:begin (...) -->
    ## Core memory (alaya)
    - The billing lead at Acme is Alice. <!-- alaya:core card-… sha:1a2b3c4d -->
    <!-- alaya:core:end -->

A line is ours while its text still has the digest its tag carries. A line edited by hand (the
digest no longer matches) or added by hand inside the section is the owner's: sync reads it as
any other entry and the writer keeps it where it is, byte for byte; its card id (if it kept
the tag) is not written again. Only a section with both markers, begin first, is one: with a
marker deleted, nothing is skipped and nothing is written (the writer reports it).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

BEGIN = "<!-- alaya:core:begin"
END = "<!-- alaya:core:end -->"
HEADING = "## Core memory (alaya)"
BEGIN_LINE = (BEGIN + " (the cards alaya's introspect promoted by recall evidence; it rewrites only its own"
              " lines here, an edited or added line is yours; off: alaya config set core.writeback false) -->")
BOOTSTRAP_CHARS = 20_000  # OpenClaw's agents.defaults.bootstrapMaxChars: what of MEMORY.md its bootstrap injects
_TAG = re.compile(r"\s*<!-- alaya:core (card-[A-Za-z0-9_-]+) sha:([0-9a-f]{8}) -->\s*$")


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def line_for(card_id: str, text: str) -> str:
    """One core card as a list item of the section (`text`: one line, made safe by the caller)."""
    text = " ".join(text.replace("<!--", "").replace("-->", "").split())
    return f"- {text} <!-- alaya:core {card_id} sha:{_digest(text)} -->"


def tagged(line: str) -> tuple[str, bool] | None:
    """(card id, still ours) of a line carrying our tag; None for any other line."""
    found = _TAG.search(line)
    if found is None or not line.startswith("- "):
        return None
    return found.group(1), _digest(line[2:found.start()]) == found.group(2)


def bounds(lines: list[str]) -> tuple[int, int] | None:
    """(begin, end) line indexes of the section's markers, or None when it has not both."""
    begin = next((i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)), None)
    if begin is None:
        return None
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].strip() == END), None)
    return None if end is None else (begin, end)


def without_own_lines(lines: list[str]) -> list[str]:
    """The lines with the section's markers, heading and our own unedited lines blanked (line
    numbers kept), for markdown.parse: the owner's lines inside stay."""
    found = bounds(lines)
    if found is None:
        return lines
    begin, end = found
    out = list(lines)
    for i in range(begin, end + 1):
        mark = tagged(lines[i])
        if i in (begin, end) or lines[i].strip() == HEADING or (mark is not None and mark[1]):
            out[i] = ""
    return out


def memory_file(root: Path) -> Path:
    """The workspace's MEMORY.md (or the `memory.md` it has instead)."""
    lower = root / "memory.md"
    return lower if not (root / "MEMORY.md").exists() and lower.exists() else root / "MEMORY.md"


def bootstrapped(workspace: str | None) -> set[str]:
    """The card ids whose own, unedited line sits in the section within the part of the
    workspace's MEMORY.md that OpenClaw's bootstrap injects (its first `BOOTSTRAP_CHARS`
    characters): session-start leaves them out of its core tier so that the session does not
    read them twice. An unreadable or missing file carries nothing."""
    if not workspace:
        return set()
    try:
        with open(memory_file(Path(workspace)), encoding="utf-8", errors="replace") as handle:
            head = handle.read(BOOTSTRAP_CHARS)
    except OSError:
        return set()
    lines = head.splitlines()
    found = bounds(lines)
    if found is None:
        return set()
    marks = (tagged(line) for line in lines[found[0] + 1:found[1]])
    return {m[0] for m in marks if m is not None and m[1]}
