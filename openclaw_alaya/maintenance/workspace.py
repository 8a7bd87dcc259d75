"""`alaya workspace sync [DIR]`: an OpenClaw agent workspace's Markdown memory (`MEMORY.md`,
`USER.md`, `memory/**/*.md`, `bank/**/*.md`) becomes cards, incrementally (docs/workspace.md).

- L3: each file is a session (`source_format: "workspace"`, kind `import`, id
  `ws-<name>-<hash of agent and path>`, title its path in the workspace); each version of the
  file that a sync saw is one turn `v1`, `v2`, … holding the whole text, so `rebuild` needs no
  workspace.
- Entries (ingest/markdown.py) keep an identity from version to version: the versions are
  lined up entry by entry (difflib), an entry that is equal or edited in place keeps its key,
  a new one is keyed by the digest of its text. Card id = `card_id(session, "ws:" + key)`: an
  edited line updates its card in place, a re-sync is a no-op, and replaying the versions
  (rebuild) gives the same ids. A card cites `v<N>:L<start>-L<end>` with the file's path.
- A deleted line's card is superseded (`valid_until`), not deleted; an entry that only moved
  gets its new line range without being distilled again.
- Unchanged files cost a stat (`state/workspace.json` keeps size, mtime and digest per file);
  the write lock is taken only when something changed, and only to apply (distilling and
  embedding happen before it).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from .. import redact
from ..distill.plan import card_id
from ..errors import InputError
from ..ingest import markdown
from ..ingest.markdown import Entry
from ..ingest.workspace_state import CURATED, load_state as _load_state, save_state as _save_state
from ..models import Card, Session, SourceRef, Turn, index_row, index_text, line_turn, now_iso, trust_class
from ..store import tombstones

if TYPE_CHECKING:
    from ..safety.echo import Echoes
    from ..memory import Memory

FORMAT = "workspace"
TOP_FILES = CURATED
FOLDERS = ("memory", "bank")
TRIGGER_TAG = "trigger:"
PROJECT_TAG = "project:"
_SLUG = re.compile(r"[^A-Za-z0-9]+")
_SIMILAR = 0.5  # an entry replaced by one this similar is the same entry, edited
_TYPES = {"world": "fact", "experience": "fact", "opinion": "preference", "observation": "concept"}


def session_id_for(agent_id: str, rel: str) -> str:
    slug = _SLUG.sub("-", rel.rsplit(".", 1)[0]).strip("-")[-48:].strip("-") or "file"
    digest = hashlib.sha1(f"{agent_id}\x00{rel}".encode()).hexdigest()[:10]
    return f"ws-{slug}-{digest}"


def origin_for(rel: str) -> str:
    """MEMORY.md and USER.md are the owner's curated memory; the rest the agent writes."""
    return "owner" if rel in CURATED else "agent"


# --- entries and their keys, version after version -------------------------------------------


@dataclass
class Keyed:
    key: str
    entry: Entry


@dataclass
class History:
    live: list[Keyed] = field(default_factory=list)  # the entries of the last version
    version: str | None = None  # its turn id
    dead: dict[str, tuple[Keyed, str, str]] = field(default_factory=dict)  # key → (last entry, its version, removed at)
    warnings: list[tuple[int, str]] = field(default_factory=list)  # the last version's
    cited: dict[str, str] = field(default_factory=dict)  # key → the version its card cites (where it last changed or moved)


def align(before: list[Keyed], entries: list[Entry]) -> list[Keyed]:
    """Key the new version's entries: equal ones and ones edited in place keep their keys."""
    a = [k.entry.digest for k in before]
    b = [e.digest for e in entries]
    keys: list[str | None] = [None] * len(entries)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                keys[j1 + k] = before[i1 + k].key
        elif tag == "replace":
            for k in range(min(i2 - i1, j2 - j1)):
                old, new = before[i1 + k].entry.body, entries[j1 + k].body
                if difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() >= _SIMILAR:
                    keys[j1 + k] = before[i1 + k].key
    used = {k for k in keys if k}
    out = []
    for entry, key in zip(entries, keys):
        if key is None:
            key, n = entry.digest, 2
            while key in used:
                key, n = f"{entry.digest}-{n}", n + 1
            used.add(key)
        out.append(Keyed(key, entry))
    return out


def history(session: Session | None) -> History:
    """The file's versions replayed in order: what is live now, and what was removed when."""
    found = History()
    if session is None:
        return found
    for turn in session.turns:
        entries, warnings = markdown.parse(turn.content)
        keyed = align(found.live, entries)
        old = {k.key: k.entry for k in found.live}
        for k in keyed:
            prior = old.get(k.key)
            if prior is None or prior.text != k.entry.text or prior.lines != k.entry.lines:
                found.cited[k.key] = turn.id
        now = {k.key for k in keyed}
        for gone in found.live:
            if gone.key not in now:
                found.dead[gone.key] = (gone, found.cited.get(gone.key) or found.version or turn.id,
                                         turn.timestamp or now_iso())
        for k in keyed:
            found.dead.pop(k.key, None)
        found.live, found.version, found.warnings = keyed, turn.id, warnings
    return found


# --- cards -----------------------------------------------------------------------------------


def cards_for(session: Session, items: list[tuple[Keyed, str]], distiller: Any, stamp: str) -> list[Card]:
    """The cards of these entries (each with the version it is cited in). A Retain line is a
    typed card as written; any other entry is shaped by the distiller (title, type, tags,
    entities, importance) and keeps its text as written."""
    rel = session.title or session.id
    date = markdown.note_date(rel)
    plain = [(k, v) for k, v in items if k.entry.kind is None]
    drafts: dict[str, Any] = {}
    if plain and distiller is not None:
        view = Session(id=session.id, agent_id=session.agent_id, started_at=session.started_at, title=rel,
                       source_format="markdown", kind="import",
                       turns=[Turn(id=f"{v}:{k.entry.lines}", role="user", content=k.entry.body,
                                   timestamp=session.started_at) for k, v in plain])
        try:
            result = distiller.distill(view, 0)
        except Exception as exc:  # noqa: BLE001 - a distiller that fails: the entries become plain cards
            print(f"alaya: warning: {rel}: distiller failed ({type(exc).__name__}); entries kept as written",
                  file=sys.stderr)
        else:
            for draft in result.cards:
                if draft.turn_ids:
                    drafts.setdefault(draft.turn_ids[0], draft)
    origin = next((t.origin for t in reversed(session.turns) if t.origin), None) or origin_for(rel)
    cards = []
    for keyed, version in items:
        entry = keyed.entry
        ref = f"{version}:{entry.lines}"
        draft = drafts.get(ref)
        occurred = entry.occurred or date
        tags = ["workspace"]
        if draft is not None:
            tags += [t for t in draft.tags if t not in tags]
        tags += [TRIGGER_TAG + t for t in entry.triggers]
        if entry.project:
            tags.append(PROJECT_TAG + entry.project)
        if entry.kind:
            title, kind_type, entities = markdown.title_of(entry.body), _TYPES[entry.kind], entry.entities
            importance = 0.6
        else:
            title = draft.title if draft is not None else markdown.title_of(entry.body)
            kind_type = draft.type if draft is not None else "concept"
            entities = draft.entities if draft is not None else []
            importance = draft.importance if draft is not None else 0.5
        if entry.importance is not None:
            importance = entry.importance
        cards.append(Card(
            id=card_id(session.id, "ws:" + keyed.key), title=title, content=entry.body, type=kind_type,
            tags=list(dict.fromkeys(tags)), entities=list(dict.fromkeys(entities)), importance=importance,
            scope=session.agent_id, sources=[SourceRef(session_id=session.id, turn_ids=[ref], path=rel)],
            created_at=stamp, updated_at=stamp, valid_from=(occurred or "").split("/")[0] or None,
            origin=origin, session_kind="import", kind=entry.kind, confidence=entry.confidence, occurred=occurred,
        ))
    return cards


def moved(card: Card, session: Session, keyed: Keyed, version: str) -> Card:
    """A stored card whose entry only changed lines: its new citation."""
    rel = session.title or session.id
    return card.model_copy(update={"sources": [SourceRef(session_id=session.id, turn_ids=[f"{version}:{keyed.entry.lines}"],
                                                         path=rel)]})


def _following_content(memory: "Memory", plans: list["FilePlan"]) -> list["FilePlan"]:
    """The plans with each trusted card that repeats a stranger's card `untrusted`
    (ingest/provenance.py `stored_echoes`): an agent that writes what a stranger said in a
    group chat into its daily note passes on the stranger's words, not its own."""
    from ..ingest.provenance import stored_echoes

    scopes = sorted({c.scope for p in plans for c in p.cards})
    if not scopes:
        return plans
    with memory.reading("workspace sync (provenance)") as graph:
        echoes = stored_echoes(graph, [*scopes, "shared"], now_iso())
    return [replace(p, cards=following(echoes, p.cards)) for p in plans] if echoes else plans


def following(echoes: "Echoes", cards: list[Card]) -> list[Card]:
    """`cards` with each trusted one whose text repeats one of `echoes` (a stranger's cards)
    `untrusted`: what sync does, and rebuild again after the conversations' cards are back."""
    return [c.model_copy(update={"origin": "untrusted"})
            if trust_class(c.origin) == "injectable" and echoes.repeated_in(f"{c.title}\n{c.content}") else c
            for c in cards]


def session_row(session: Session, path: str, stamp: str) -> dict[str, Any]:
    return {"id": session.id, "agent_id": session.agent_id, "started_at": session.started_at, "ingested_at": stamp,
            "path": path, "title": session.title, "source_format": FORMAT, "turn_count": len(session.turns),
            "distilled_turns": len(session.turns), "last_card": None, "kind": "import", "parent": None}


def derive_all(session: Session, distiller: Any, stamp: str) -> tuple[list[Card], list[tuple[str, str]]]:
    """Every card a stored file gives (rebuild): the live entries' cards, and the removed
    entries' cards with their `valid_until`. Returns (cards, (card id, removed at))."""
    found = history(session)
    items = [(k, found.cited.get(k.key, found.version)) for k in found.live]
    items += [(k, version) for k, version, _ in found.dead.values()]
    cards = cards_for(session, items, distiller, stamp)
    ends = {card_id(session.id, "ws:" + key): at for key, (_k, _v, at) in found.dead.items()}
    cards = [c.model_copy(update={"valid_until": ends[c.id]}) if c.id in ends else c for c in cards]
    return cards, list(ends.items())


def contexts_for(session: Session, cards: list[Card]) -> list[tuple[str, str, list[Turn]]]:
    out = []
    for card in cards:
        for source in card.sources:
            turns = [t for t in (line_turn(session, i) for i in source.turn_ids) if t is not None]
            if turns:
                out.append((card.id, session.id, turns))
    return out


# --- the sync ----------------------------------------------------------------------------------


@dataclass
class FilePlan:
    rel: str
    session: Session  # as stored after this sync (the new version appended)
    base: int  # versions stored when planned: applied only if still so
    new_turn: Turn
    cards: list[Card]  # new or changed
    moves: list[tuple[Keyed, str]]  # entries that only changed lines
    removed: list[str]  # card ids of deleted entries
    triggers: dict[str, list[str]]
    stat: list[Any]


def read_file(path: Path, limit: int) -> str:
    """The file's text; InputError with the reason when it cannot be synced."""
    size = path.stat().st_size
    if size > limit:
        raise InputError(f"{size / 1e6:.1f} MB, over workspace.max_file_bytes ({limit / 1e6:.1f} MB): skipped")
    data = path.read_bytes()
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte {exc.start}): skipped; save it as UTF-8 and sync again") from None


def find_files(root: Path) -> tuple[dict[str, os.stat_result], list[str]]:
    """rel path → stat of the workspace's memory files, and what was refused (symlinks that
    leave the workspace). Hidden files and folders are left out."""
    found: dict[str, os.stat_result] = {}
    problems: list[str] = []
    real_root = root.resolve()

    def consider(path: Path, rel: str) -> None:
        try:
            st = path.lstat()
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(real_root):
                    problems.append(f"{rel}: a symlink to {target}, outside the workspace: skipped")
                    return
                st = target.stat()
            if not os.path.isfile(path):
                return
        except OSError:
            return
        found[rel] = st

    for name in TOP_FILES:
        path = root / name
        if name == "memory.md" and "MEMORY.md" in found:
            continue
        if os.path.lexists(path):
            consider(path, name)
    for folder in FOLDERS:
        base = root / folder
        if not base.is_dir() or base.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(".md") and not name.startswith("."):
                    path = Path(dirpath) / name
                    consider(path, path.relative_to(root).as_posix())
    return found, problems


def workspace_key(root: Path, agent_id: str) -> str:
    return f"{agent_id}\x00{root}"


def sync(memory: "Memory", folder: str | Path, *, agent_id: str = "shared", now: datetime | None = None) -> dict[str, Any]:
    """Sync one workspace (docstring above). The report: files seen, unchanged, stored, cards
    added or changed, moved, superseded, and per-file problems (`errors`), which never stop
    the other files."""
    memory.dirs.require()
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(f"{root}: not a folder (the OpenClaw agent workspace, e.g. ~/.openclaw/workspace)")
    root = root.resolve()
    state = _load_state(memory)
    key = workspace_key(root, agent_id)
    known: dict[str, Any] = (state.get("workspaces", {}).get(key) or {}).get("files", {})
    files, errors = find_files(root)
    report: dict[str, Any] = {"workspace": str(root), "agent": agent_id, "files": len(files), "unchanged": 0,
                              "stored": 0, "cards": 0, "moved": 0, "superseded": 0, "generated": 0, "errors": errors,
                              "warnings": []}
    changed: dict[str, str] = {}  # rel → text
    stats: dict[str, list[Any]] = {}
    generated: set[str] = set()  # pages reflect wrote (docs/workspace.md, "Reflect"): left out
    dropped: list[str] = []  # generated pages deleted since: forgotten by the state
    for rel, st in files.items():
        entry = known.get(rel)
        stat = [st.st_size, st.st_mtime_ns]
        if entry and entry.get("stat") == stat:
            report["unchanged"] += 1
            continue
        try:
            text = read_file(root / rel, memory.config.workspace.max_file_bytes)
        except InputError as exc:
            errors.append(f"{rel}: {exc}")
            continue
        except OSError as exc:
            errors.append(f"{rel}: not read ({exc.strerror or type(exc).__name__}): kept as stored")
            continue
        digest = hashlib.sha1(text.encode()).hexdigest()
        stats[rel] = [*stat, digest]
        if markdown.is_generated(text):  # a page reflect wrote from the cards: not memory of its own
            generated.add(rel)
            report["generated"] += 1
            continue
        if entry and entry.get("sha") == digest:
            report["unchanged"] += 1
            continue
        changed[rel] = text
    if root.is_dir():
        for rel in known:
            if rel not in files and not os.path.lexists(root / rel):
                if (known[rel] or {}).get("generated"):
                    dropped.append(rel)
                else:
                    changed[rel] = ""  # deleted: every entry's card is superseded
    else:
        errors.append(f"{root}: the workspace disappeared during the sync: files not read yet keep their cards")
    if not changed:
        if stats or dropped:
            _remember(memory, state, key, known, stats, {}, dropped, generated)
        return report
    plans = _plan(memory, root, agent_id, changed, stats, report, now)
    if plans:
        _apply(memory, plans, report)
    _remember(memory, state, key, known, stats, {p.rel: p.triggers for p in plans},
              [p.rel for p in plans if p.new_turn.content == "" and p.rel not in files] + dropped, generated)
    return report


def _plan(memory: "Memory", root: Path, agent_id: str, changed: dict[str, str], stats: dict[str, list[Any]],
          report: dict[str, Any], now: datetime | None) -> list[FilePlan]:
    """Outside the lock: each changed file's new version, its cards distilled and what they change."""
    from ..providers import make_distiller

    distiller = make_distiller(memory)
    stamp = (now or clock.now()).isoformat(timespec="seconds")
    gone = tombstones.forgotten(memory.raw, "card")
    plans = []
    for rel, text in sorted(changed.items()):
        sid = session_id_for(agent_id, rel)
        stored = memory.raw.load(sid)
        base = len(stored.turns) if stored else 0
        if stored and stored.turns and stored.turns[-1].content == text:
            continue  # L3 has it (a state file lost or restored)
        if stored is None and not text:
            continue
        st = stats.get(rel)
        date = markdown.note_date(rel)
        started = date or datetime.fromtimestamp((st[1] / 1e9) if st else 0, timezone.utc).isoformat(timespec="seconds")
        turn = Turn(id=f"v{base + 1}", role="user", name=rel, content=text, timestamp=stamp, origin=origin_for(rel),
                    kind="import")
        incoming = redact.for_ingest(memory, Session(id=sid, agent_id=agent_id, started_at=started, title=rel,
                                                     source_format=FORMAT, turns=[turn], kind="import"))
        new_turn = incoming.turns[0]
        session = (stored.model_copy(update={"turns": [*stored.turns, new_turn]}, deep=True) if stored
                   else incoming)
        derived = redact.for_derived(memory, session)
        before = history(redact.for_derived(memory, stored) if stored else None)
        entries, warnings = markdown.parse(derived.turns[-1].content)
        report["warnings"] += [f"{rel}:{line}: {message}" for line, message in warnings]
        keyed = align(before.live, entries)
        old = {k.key: k for k in before.live}
        version = new_turn.id
        fresh, moves = [], []
        for k in keyed:
            prior = old.get(k.key)
            if prior is None or prior.entry.text != k.entry.text:
                fresh.append((k, version))
            elif prior.entry.lines != k.entry.lines:
                moves.append((k, version))
        now_keys = {k.key for k in keyed}
        removed = [card_id(sid, "ws:" + k.key) for k in before.live if k.key not in now_keys]
        cards = [c for c in cards_for(derived, fresh, distiller, stamp) if c.id not in gone]
        triggers = {card_id(sid, "ws:" + k.key): k.entry.triggers for k in keyed if k.entry.triggers}
        plans.append(FilePlan(rel, session, base, new_turn, cards, moves, removed, triggers, st or []))
    return plans


def _apply(memory: "Memory", plans: list[FilePlan], report: dict[str, Any]) -> None:
    plans = _following_content(memory, plans)
    cards = [c for p in plans for c in p.cards]
    vectors = memory.embedder.embed([index_text(c) for c in cards]) if cards else None
    stamp = now_iso()
    with memory.writing("workspace sync") as graph:
        applied = []
        for plan in plans:
            stored = memory.raw.load(plan.session.id)
            if (len(stored.turns) if stored else 0) != plan.base:
                report["errors"].append(f"{plan.rel}: synced by another process meanwhile: left to it")
                continue
            applied.append(plan)
        paths = memory.raw.write_many([p.session for p in applied]) if applied else []
        keep = {c.id for p in applied for c in p.cards}
        contexts = [item for p in applied for item in contexts_for(redact.for_derived(memory, p.session), p.cards)]
        memory.raw.write_contexts(contexts)
        moved_cards: list[Card] = []
        with graph:
            for plan, path in zip(applied, paths):
                graph.upsert_session(session_row(plan.session, str(path), stamp))
            kept = [c for c in cards if c.id in keep]
            graph.upsert_cards(kept)
            graph.link_to_sessions([{"card": c.id, "session": c.sources[0].session_id, "turns": c.sources[0].turn_ids}
                                    for c in kept])
            for plan in applied:
                stored = graph.get_cards([card_id(plan.session.id, "ws:" + k.key) for k, _ in plan.moves])
                for k, version in plan.moves:
                    card = stored.get(card_id(plan.session.id, "ws:" + k.key))
                    if card is not None:
                        moved_cards.append(moved(card, plan.session, k, version))
                for cid in plan.removed:
                    graph.supersede(cid, stamp, stamp)
            graph.update_provenance(moved_cards)
        redact.record_new_turns(memory, [p.new_turn for p in applied])
        if kept:
            rows_at = [i for i, c in enumerate(cards) if c.id in keep]
            memory.index.upsert_cards([index_row(cards[i]) for i in rows_at], vectors[rows_at])
    report["stored"] += len(applied)
    report["cards"] += len(kept)
    report["moved"] += len(moved_cards)
    report["superseded"] += sum(len(p.removed) for p in applied)


def _remember(memory: "Memory", state: dict[str, Any], key: str, known: dict[str, Any], stats: dict[str, list[Any]],
              triggers: dict[str, dict[str, list[str]]], deleted: list[str], generated: set[str] = frozenset()) -> None:
    files = dict(known)
    for rel, (size, mtime, sha) in stats.items():
        entry = dict(files.get(rel) or {})
        entry.update({"stat": [size, mtime], "sha": sha})
        if rel in generated:
            entry["generated"] = True
        else:
            entry.pop("generated", None)
        if rel in triggers:
            entry["triggers"] = triggers[rel]
        files[rel] = entry
    for rel in deleted:
        files.pop(rel, None)
    state.setdefault("workspaces", {})[key] = {"files": files}
    _save_state(memory, state)


def scope_for(memory: "Memory", folder: str | Path, agent_id: str) -> str:
    """The scope a session start syncs `folder` in: the event's agent, unless the folder was
    synced as `shared` (`alaya workspace sync DIR` without --agent, the documented first step)
    and never as this agent: shared cards are every agent's already, so a second copy in the
    agent's scope would show each entry twice."""
    try:
        root = Path(folder).expanduser().resolve()
    except (OSError, RuntimeError):
        return agent_id
    synced = _load_state(memory).get("workspaces") or {}
    if workspace_key(root, "shared") in synced and workspace_key(root, agent_id) not in synced:
        return "shared"
    return agent_id


def sync_quietly(memory: "Memory", folder: str | Path, agent_id: str) -> dict[str, Any] | None:
    """Session start's and introspect's sync: problems are warnings on stderr, never a failure."""
    try:
        report = sync(memory, folder, agent_id=agent_id)
    except Exception as exc:  # noqa: BLE001 - memory must not stop a session from starting
        print(f"alaya: warning: workspace sync of {folder}: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return None
    for problem in report["errors"]:
        print(f"alaya: warning: workspace {problem}", file=sys.stderr)
    return report


def known_workspaces(memory: "Memory") -> list[tuple[str, str]]:
    """(folder, agent) of every workspace synced before, and `workspace.dir` (agent `shared`
    unless a sync by the hook recorded one)."""
    found = []
    for ws_key in (_load_state(memory).get("workspaces") or {}):
        agent, _, folder = ws_key.partition("\x00")
        found.append((folder, agent))
    configured = memory.config.workspace.dir
    if configured:
        path = str(Path(configured).expanduser().resolve())
        if not any(f == path for f, _ in found):
            found.append((path, "shared"))
    return found
