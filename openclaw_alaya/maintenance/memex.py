"""`alaya import-memex DIR`: a folder of Markdown notes (Obsidian, Foam, a Zettelkasten…)
becomes cards, and their `[[wikilinks]]` become `RELATES_TO` links.

Each note is first stored in L3 as a session (`source_format: "memex"`, id `memex-<name>-<hash
of its path>`, one turn holding the file as it was, the turn's `name` its path in DIR), so
`verify` finds its source and `rebuild` re-derives the card. A changed note is stored as a new
revision of that turn and its card is updated in place (the card id is fixed per note).

Front matter (between `---` lines at the top) may give `title`, `type`, `tags` (a list or a
comma-separated string) and `importance`; without it the title is the first `# heading`, else
the file name. `[[Target]]`, `[[Target|shown text]]` and `[[Target#heading]]` resolve against
note titles and file names (case-insensitive), within the import and earlier imports.

Notes go through the store filters like any ingested session (`redact.for_ingest`: secrets are
redacted before L3, or only before L2/L1 when `redaction.redact_raw` is off).

A folder of notes is anyone's files, so reading one is bounded (issue 30 class 8): a note that is
a symbolic link, or inside a linked folder, is not followed (it may lead anywhere outside the
folder); one larger than MAX_NOTE_BYTES, not a regular file, or whose front matter is refused
(front_matter.py: aliases, deep nesting, size) is skipped. Each skipped note gets one warning
line naming it, and the rest of the import goes on.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from .. import redact
from ..distill.plan import card_id
from ..errors import InputError
from ..ingest.repair import warn
from ..models import (
    Card,
    Link,
    Session,
    SourceRef,
    Turn,
    index_row,
    index_text,
    relation_description,
)
from .common import iso
from .front_matter import FrontMatterRefused
from .front_matter import load as load_front_matter

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import UpkeepGraph

FORMAT = "memex"
RELATION = "RELATES_TO"
# No `[` or line break inside a link: with them, each `[[` of a note full of them scanned the rest
# of the note for a `]]`, quadratic in the note (issue 30 class 9).
_WIKILINK = re.compile(r"\[\[([^\[\]\|#\n]+)(?:#[^\[\]\|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SLUG = re.compile(r"[^A-Za-z0-9]+")
MAX_NOTE_BYTES = 1024 * 1024


class NoteSkipped(InputError):
    """Why one note of the folder is left out of the import."""


def parse_note(text: str, fallback_title: str) -> dict[str, Any]:
    """Title, type, tags, importance, body and wikilinks of a note; `refused` says why its front
    matter was not read (front_matter.py), else None: the import skips such a note, a rebuild
    of one stored before gives it a card without what its front matter said."""
    meta: dict[str, Any] = {}
    refused = None
    body = text
    if text.startswith("---"):
        lines = text.split("\n")
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                try:
                    meta = load_front_matter("\n".join(lines[1:end]))
                except FrontMatterRefused as exc:
                    refused = str(exc)
                body = "\n".join(lines[end + 1:])
                break
    tags = meta.get("tags") or []
    if not isinstance(tags, (list, str)):
        tags = [tags]
    if isinstance(tags, str):
        tags = [t.strip() for t in re.split(r"[,\s]+", tags.strip("[]")) if t.strip()]
    heading = _HEADING.search(body)
    title = str(meta.get("title") or (heading.group(1) if heading else fallback_title)).strip()
    try:
        importance = min(1.0, max(0.0, float(meta.get("importance", 0.5))))
    except (TypeError, ValueError):
        importance = 0.5
    return {
        "title": title[:200] or fallback_title,
        "type": str(meta.get("type") or "concept").strip().lower() or "concept",
        "tags": [str(t).strip().lstrip("#").strip("'\"") for t in tags if str(t).strip()],
        "importance": importance,
        "body": body.strip(),
        "links": list(dict.fromkeys(m.strip() for m in _WIKILINK.findall(body) if m.strip())),
        "refused": refused,
    }


def note_files(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The `.md` files under `root` (no hidden files or folders), and the linked notes and
    folders left out, each with why: no link is followed."""
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for folder, dirs, names in os.walk(root):  # a linked folder is listed, never entered
        here = Path(folder)
        for name in sorted(dirs):
            if name.startswith(".") or (here / name).is_symlink():
                dirs.remove(name)
                if not name.startswith("."):
                    skipped.append((here / name, "a symbolic link to a folder, not followed"))
        for name in names:
            if name.endswith(".md") and not name.startswith("."):
                if (here / name).is_symlink():
                    skipped.append((here / name, "a symbolic link, not followed"))
                else:
                    files.append(here / name)
    return sorted(files), skipped


def read_note(path: Path) -> tuple[str, float]:
    """(text, mtime) of a note, opened without following a link; NoteSkipped for what is not
    a regular file or is larger than MAX_NOTE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise NoteSkipped(f"cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NoteSkipped("not a regular file")
        data = handle.read(MAX_NOTE_BYTES + 1)
    if len(data) > MAX_NOTE_BYTES:
        raise NoteSkipped(f"larger than {MAX_NOTE_BYTES // (1024 * 1024)} MB")
    return data.decode("utf-8", errors="replace"), st.st_mtime


def session_for(path: Path, root: Path, agent_id: str) -> Session:
    """The note as an L3 session; NoteSkipped when it is not imported (see the module docstring)."""
    rel = path.relative_to(root).as_posix()
    text, mtime_s = read_note(path)
    slug = _SLUG.sub("-", path.stem).strip("-")[:60] or "note"
    digest = hashlib.sha1(rel.encode()).hexdigest()[:8]
    mtime = datetime.fromtimestamp(mtime_s, timezone.utc)
    meta = parse_note(text, path.stem)
    if meta["refused"]:
        raise NoteSkipped(meta["refused"])
    return Session(
        id=f"memex-{slug}-{digest}", agent_id=agent_id, started_at=iso(mtime), title=meta["title"],
        source_format=FORMAT, turns=[Turn(id="note", role="user", name=rel, content=text)],
    )


def card_for(session: Session, stamp: str) -> Card:
    """The note's card: from the latest revision of its one turn."""
    turn = session.turns[-1]
    fallback = Path(turn.name or session.id).stem
    meta = parse_note(turn.content, fallback)
    return Card(
        id=card_id(session.id, "memex"), title=meta["title"], content=meta["body"] or meta["title"],
        type=meta["type"], tags=meta["tags"], importance=meta["importance"], scope=session.agent_id,
        sources=[SourceRef(session_id=session.id, turn_ids=[turn.id])], created_at=stamp, updated_at=stamp,
        valid_from=session.started_at, origin=turn.origin or "owner", session_kind="import",
    )


def names_of(session: Session, card: Card) -> set[str]:
    name = Path(session.turns[-1].name or "").stem
    return {n.lower() for n in (card.title, name) if n}


def links_for(notes: list[tuple[Session, Card]], known: dict[str, str], stamp: str) -> tuple[list[Link], int]:
    """RELATES_TO links for the wikilinks of `notes`; `known` maps lower-case names of earlier
    notes to card ids. Returns the links and how many wikilinks resolved to nothing."""
    names = dict(known)
    for session, card in notes:
        for name in names_of(session, card):
            names[name] = card.id
    links, unresolved = [], 0
    for session, card in notes:
        meta = parse_note(session.turns[-1].content, card.title)
        for target in meta["links"]:
            dst = names.get(target.lower()) or names.get(Path(target).stem.lower())
            if dst is None:
                unresolved += 1
            elif dst != card.id:
                links.append(Link(src=card.id, dst=dst, rel=RELATION, weight=1.0, created_at=stamp))
    return links, unresolved


def known_notes(graph: "UpkeepGraph") -> dict[str, str]:
    rows = graph.cards_from_source_format(FORMAT)
    return {str(t).lower(): cid for cid, title, stitle in rows for t in (title, stitle) if t}


def import_memex(memory: "Memory", folder: str | Path, *, agent_id: str = "shared") -> dict[str, Any]:
    memory.dirs.require()
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(f"{root}: not a folder")
    files, skipped = note_files(root)
    stamp = iso(clock.now())
    # Outside the lock: parse, run the store filters (secret redaction…) as `Alaya.ingest` does,
    # merge with what L3 has, build cards and vectors from the filtered text.
    sessions = []
    new_turns = []
    for path in files:
        try:
            incoming = redact.for_ingest(memory, session_for(path, root, agent_id))
        except NoteSkipped as exc:
            skipped.append((path, str(exc)))
            continue
        merged, new = memory.raw.merge(incoming)
        sessions.append((merged, bool(new)))
        new_turns += new
    # what L2/L1 may see (L3 keeps the original when `redaction.redact_raw` is off)
    for path, why in skipped:
        warn(f"{path.relative_to(root).as_posix()}: {why}; skipped")
    derived = [redact.for_derived(memory, s) for s, _ in sessions]
    notes = [(s, card_for(s, stamp)) for s in derived]
    with memory.reading("import-memex (known notes)") as graph:
        known = known_notes(graph)
    links, unresolved = links_for(notes, known, stamp)
    vectors = memory.embedder.embed([index_text(c) for _, c in notes]) if notes else None
    rel_vector = memory.embedder.embed([relation_description(RELATION)])
    with memory.writing(f"import-memex {root}") as graph:
        for (session, changed), clean in zip(sessions, derived):
            if changed:
                memory.raw.write(session)
            memory.raw.write_context(card_id(session.id, "memex"), session.id, [clean.turns[-1]])
        with graph:
            for clean in derived:
                graph.upsert_session(_session_row(clean, str(memory.raw.find(clean.id)), stamp))
            apply_notes(graph, notes, links)
        redact.record_new_turns(memory, new_turns)
        if notes:
            memory.index.upsert_cards([index_row(c) for _, c in notes], vectors)
            memory.index.upsert_relations([{"name": RELATION, "description": relation_description(RELATION)}], rel_vector)
    return {"files": len(files), "skipped": len(skipped), "stored": sum(1 for _, changed in sessions if changed), "cards": len(notes),
            "links": len(links), "unresolved_links": unresolved}


def _session_row(session: Session, path: str, stamp: str) -> dict[str, Any]:
    return {"id": session.id, "agent_id": session.agent_id, "started_at": session.started_at, "ingested_at": stamp,
            "path": path, "title": session.title, "source_format": FORMAT, "turn_count": len(session.turns),
            "distilled_turns": len(session.turns), "last_card": card_id(session.id, "memex"), "kind": "import"}


def apply_notes(graph: Any, notes: list[tuple[Session, Card]], links: list[Link]) -> None:
    graph.upsert_cards([c for _, c in notes])
    graph.link_to_sessions([{"card": c.id, "session": s.id, "turns": c.sources[0].turn_ids} for s, c in notes])
    graph.add_links(links)
