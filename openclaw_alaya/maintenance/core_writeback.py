"""The curated core written into each known workspace's `MEMORY.md` (issue 31), as a marked
section (ingest/core_section.py) that alaya owns, so OpenClaw's own bootstrap, which injects
MEMORY.md into every session, carries it too. `core.writeback` (default on) turns it off.

Per workspace (maintenance/workspace.py's `known_workspaces`): the core cards of its agent's
scopes (and `shared`), valid, of an injectable origin, that do not read as an order
(safety/instructions.py), and not already in the file: a card the owner's own MEMORY.md or
USER.md lines gave, or whose text the file has outside the section, is not written twice.

- Outside the section nothing is touched, byte for byte; the section is appended at the end the
  first time (MEMORY.md is created when the workspace has none).
- Inside it, the owner's lines (added, or ours edited) stay where they are; our lines are
  replaced by the current core; a card whose line the owner edited is not written again.
- The gate: a rewrite dropping more than `core.max_drop` of the section's prior lines of ours
  (and more than one) is refused and reported; the file is left as it is.
- Optimistic concurrency (handwritten.py): read, build, write a temporary file, read again right
  before the rename; a file edited meanwhile keeps the edit ("changed meanwhile"), and the next
  run tries again from it.
- A section with one marker missing is the owner's business: not written, reported.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bridge import core_state
from ..bridge.inject import clean, injectable
from ..bridge.summary import scopes_for
from ..ingest import core_section
from ..ingest.core_section import memory_file
from ..ingest.workspace_state import CURATED
from ..safety.instructions import looks_like_instruction
from .handwritten import read_text, replace_if_unchanged
from .workspace import known_workspaces, session_id_for

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Card

LINE_CHARS = 300  # a card's line in MEMORY.md, at most (OpenClaw keeps 160 tokens of a promoted snippet)


def _own_cards(cards: list["Card"], agent: str) -> set[str]:
    """Cards the workspace's curated files gave (their lines are in the file already)."""
    sessions = {session_id_for(agent, rel) for rel in CURATED}
    return {c.id for c in cards if any(s.session_id in sessions for s in c.sources)}


def section_lines(cards: list["Card"], outside: str, taken: set[str], own: set[str]) -> list[str]:
    """Our lines for these cards, best first: not the owner's, not taken over by an edit, not
    already in the file's text outside the section, not reading as an order."""
    said = " ".join(outside.split()).casefold()
    lines = []
    for card in cards:
        text = clean(card.content or card.title, LINE_CHARS)
        if not text or card.id in taken or card.id in own or text.casefold() in said or looks_like_instruction(text):
            continue
        lines.append(core_section.line_for(card.id, text))
    return lines


def rewrite(before: str | None, ours: list[str], max_drop: float) -> tuple[str | None, str | None, dict[str, int]]:
    """(new text or None, why not, counts) for a file whose text is `before` (None: no file)."""
    lines = (before or "").split("\n")
    found = core_section.bounds(lines)
    if found is None and before is not None and (core_section.BEGIN in before or core_section.END in before):
        return None, "the core section has lost a marker: left alone (restore it, or delete the section)", {}
    if found is None:
        if not ours:
            return None, None, {}
        head = (before or "").rstrip("\n")
        block = [core_section.BEGIN_LINE, core_section.HEADING, *ours, core_section.END]
        return ("\n".join(([head, ""] if head else []) + block) + "\n",
                None, {"written": len(ours), "dropped": 0, "kept": 0})
    begin, end = found
    inner = lines[begin + 1:end]
    prior = [m[0] for line in inner if (m := core_section.tagged(line)) and m[1]]
    new_ids = {core_section.tagged(line)[0] for line in ours}
    lost = len([cid for cid in prior if cid not in new_ids])
    if core_state.too_many_lost(lost, len(prior), max_drop):
        return None, (f"the rewrite would drop {lost} of the section's {len(prior)} lines (more than "
                      f"{max_drop:.0%}): left as it is"), {}
    body = [line for line in inner if not ((m := core_section.tagged(line)) and m[1])]  # the owner's stay in place
    kept = len([line for line in body if line.strip() and line.strip() != core_section.HEADING])
    at = next((i + 1 for i, line in enumerate(body) if line.strip() == core_section.HEADING), None)
    body = [*body[:at], *ours, *body[at:]] if at is not None else [core_section.HEADING, *ours, *body]
    text = "\n".join([*lines[:begin + 1], *body, *lines[end:]])
    return text, None, {"written": len(ours), "dropped": lost, "kept": kept}


def write_one(memory: "Memory", folder: str, agent: str, cards: dict[str, "Card"], order: list[str]) -> dict[str, Any]:
    root = Path(folder)
    path = memory_file(root)
    scopes = set(scopes_for(agent))
    mine = [cards[i] for i in order if i in cards and cards[i].scope in scopes]
    before = read_text(path)
    lines = (before or "").split("\n")
    found = core_section.bounds(lines)
    outside, taken = before or "", set()
    if found is not None:
        begin, end = found
        outside = "\n".join(lines[:begin] + lines[end + 1:])
        taken = {m[0] for line in lines[begin + 1:end] if (m := core_section.tagged(line)) and not m[1]}
    ours = section_lines(mine, outside, taken, _own_cards(mine, agent))
    text, why, counts = rewrite(before, ours, memory.config.core.max_drop)
    report: dict[str, Any] = {"workspace": str(root), "file": path.name, **counts}
    if why:
        return {**report, "status": "kept", "why": why}
    if text is None or text == before:
        return {**report, "status": "unchanged"}
    lost = replace_if_unchanged(path, before, text)
    if lost:
        return {**report, "status": "kept",
                "why": f"{lost} meanwhile (between the core write-back's read and its rename): that version is kept; tried again next run"}
    return {**report, "status": "written"}


def write_back(memory: "Memory") -> list[dict[str, Any]]:
    """The core into every known workspace that exists; a report per workspace."""
    order = core_state.ids(memory)
    folders = [(f, a) for f, a in known_workspaces(memory) if Path(f).is_dir()]
    if not folders:
        return []
    origins = injectable(memory)
    with memory.reading("introspect core (MEMORY.md)") as graph:
        found = graph.get_cards(order) if order else {}
    cards = {i: c for i, c in found.items() if not c.valid_until and (c.origin or "unknown") in origins}
    reports = []
    for folder, agent in folders:
        try:
            reports.append(write_one(memory, folder, agent, cards, order))
        except OSError as exc:
            reports.append({"workspace": folder, "status": "error", "why": f"not written ({exc.strerror or type(exc).__name__})"})
    for r in reports:
        if r.get("why"):
            print(f"alaya: core: {r['workspace']}/{r.get('file', 'MEMORY.md')}: {r['why']}", file=sys.stderr)
    return reports
