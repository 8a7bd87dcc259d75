"""`alaya rebuild`: re-derive L2 (graph) and L1 (index) from L3 (docs/architecture.md, "Data
layout").

1. Outside the lock, a new graph and index are built aside (the scratch port,
   store/ports/scratch.py; what killed rebuilds left is removed first): every session in
   `raw/sessions` distilled from its first turn (notes imported with
   `import-memex` become their cards again, workspace files their versions replayed), then the L3 logs replayed in time order —
   `raw/links.jsonl` (links made with `alaya link`) and `raw/curation.jsonl` (the resolver's
   merges, CONTRADICTS links and supersedes — an old fact's `valid_until` — introspect's
   merges, forgets and SIMILAR_TO links, and what `alaya correct`, `commit` and `entities`
   did, reflect's confidence steps on opinions and its entity summary cards). A forget sets its
   card aside with its edges (curate/restore.py) and a later `restore` record puts it back, so
   a card `alaya restore` brought back stays and one still forgotten stays out. A replayed merge forwards the merged id to the kept card as the merge did
   (consolidate.merge_in_graph), so old ids keep resolving. Sessions and cards forgotten on
   purpose (`raw/tombstones.jsonl`) are not derived.
   Usage (access counts, last access, creation time, temperature and tier) is carried over from the old graph for cards that still exist (not
   from a damaged one: the report says so); COLD cards keep their L1 row (issue 31). Nothing of the old graph
   or index is needed, so a rebuild mends a damaged or missing one.
2. What L3 gained meanwhile (sessions captured during the build, new log records) is caught up
   the same way, from where the build left each session: a few times outside the lock, then
   once more under the write lock, which then installs the new graph and index, as one step a
   crash cannot cut in half. The old ones are thrown away.

The offline distiller is deterministic and card ids are uuid5(session, key), so a rebuild
gives back the same cards and links.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from .. import redact
from ..curate import purge
from ..curate.restore import Copy, copies_of, hand_over, put_back
from ..distill.plan import DistillPlan, apply, prepare
from ..errors import DamagedStoreError
from ..models import (
    CORE_RELATIONS,
    Card,
    expand_link,
    index_row,
    index_text,
    is_custom,
    relation_description,
)
from ..progress import progress
from ..store import tombstones
from ..store.raw import CURATION_LOG, LINKS_LOG, RawStore
from ..store.tombstones import TOMBSTONES
from . import memex, workspace
from .common import as_datetime, iso

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Session
    from ..store.ports.scratch import StagedStores
    from ..store.ports.upkeep import UpkeepGraph

_BATCH_CARDS = 2000
_LOOKS = 3  # catch-ups outside the lock after the first build, before the last one under it
KIND = "rebuild"  # what the stores built aside are for (store/ports/scratch.py)


class _Contexts(RawStore):
    """L3 as `distilling.apply` sees it in a rebuild: card contexts are there already; only
    missing ones are written again (a rebuild after raw/contexts was lost)."""

    def write_contexts(self, items: list[tuple[str, str, list[Any]]]) -> None:
        super().write_contexts([item for item in items if not self._context_path(item[0]).exists()])


def fingerprint(memory: "Memory") -> dict[str, tuple[int, int]]:
    """Every session file and L3 log, with its size and time: what a rebuild was derived from."""
    files = [*memory.raw.session_files(), *(memory.raw.log_path(name) for name in (LINKS_LOG, CURATION_LOG, TOMBSTONES))]
    found = {}
    for path in files:
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        found[str(path)] = (st.st_size, st.st_mtime_ns)
    return found


class _Build:
    """The new graph and index built aside, and what of L3 they were derived from, so a later
    look at L3 derives only what changed since (`catch_up`)."""

    def __init__(self, memory: "Memory", stores: "StagedStores", moment: Any) -> None:
        self.memory, self.stores, self.stamp = memory, stores, iso(moment)
        self.seen: dict[str, tuple[int, int]] | None = None  # nothing derived yet
        self.logged = {LINKS_LOG: 0, CURATION_LOG: 0}  # log records replayed so far
        self.set_aside: dict[str, Copy] = {}  # cards a replayed forget took out, for a later restore record

    def catch_up(self, report: dict[str, Any], usage: dict[str, Any] | None = None) -> bool:
        """Derive what L3 holds and the build does not yet (everything, the first time): new
        or grown sessions distilled from where the build left them, then the logs' new
        records replayed. False when nothing had changed."""
        now = fingerprint(self.memory)
        if now == self.seen:
            return False
        seen = self.seen or {}
        gone = tombstones.forgotten(self.memory.raw, "session")  # forgotten on purpose: not derived again
        changed = [Path(p).stem for p, v in now.items() if p.endswith(".json") and seen.get(p) != v and Path(p).stem not in gone]
        embedder = self.memory.embedder
        index = self.stores.index(embedder.id, embedder.dim)
        with self.stores.graph() as graph:
            if self.seen is None:
                index.create()
                core = [{"name": n, "description": relation_description(n)} for n in CORE_RELATIONS]
                index.upsert_relations(core, embedder.embed([r["description"] for r in core]))
                graph.create_schema()
            _distill(self.memory, graph, index, sorted(changed), report, self.stamp)
            replayed = _replay(self.memory, graph, index, self.stamp, self._new_records(), self.set_aside)
            _drop_forgotten(self.memory, graph, index)
            report["replayed"] = {k: report["replayed"].get(k, 0) + n for k, n in replayed.items()}
            if usage is not None:
                report["usage_carried"] = _carry_usage(graph, usage)
            report["cards_now"] = graph.card_count()
        self.seen = now
        return True

    def _new_records(self) -> list[dict[str, Any]]:
        """The L3 logs' records not replayed yet, in time order (manual links marked)."""
        records = []
        for name in (LINKS_LOG, CURATION_LOG):
            found = self.memory.raw.read_log(name)
            new, self.logged[name] = found[self.logged[name]:], len(found)
            records += [{**r, "op": r.get("op", "link"), "_manual": True} for r in new] if name == LINKS_LOG else new
        return sorted(records, key=lambda r: str(r.get("ts") or ""))


def rebuild(memory: "Memory", *, now: Any = None) -> dict[str, Any]:
    """Derive L2 and L1 again from L3, whatever state they are in (docstring above)."""
    memory.dirs.require(graph=False)
    memory.dirs.require_private_tree()  # it reads every file of L3 as the truth (store/trust.py)
    report: dict[str, Any] = {"sessions": 0, "cards": 0, "links": 0, "notes": 0, "replayed": {}, "usage_carried": 0}
    try:
        with memory.reading("rebuild (usage of the old graph)") as graph:
            usage = {r.id: r for r in graph.card_rows()}
    except DamagedStoreError as exc:
        usage = {}
        report["note"] = f"usage counts not carried over: {exc}"
    forgotten_before = len(tombstones.read(memory.raw))
    with memory.storage.scratch().staged(KIND, graph=True) as stores:
        build = _Build(memory, stores, as_datetime(now))
        build.catch_up(report, usage)  # everything, outside the lock
        for _look in range(_LOOKS):  # sessions captured meanwhile, still outside the lock
            if not build.catch_up(report):
                break
        with memory.writing("rebuild (swap in the new graph and index)", change_graph=False):
            build.catch_up(report)  # the few captured since the last look, so a busy store still rebuilds
            # forgets that landed while the copy was built: the copy still holds what they took
            late = tombstones.read(memory.raw)[forgotten_before:]
            purge.redo(memory, late, lambda: (stores.install(), memory.reopen_index()))
        memory.reopen_index()  # the cached L1 handle points at the old tables
        return report


def _workspace_files(memory: "Memory", graph: "UpkeepGraph", index: Any, files: list[tuple[Session, dict[str, Any]]],
                     distiller: Any, contexts: "_Contexts", report: dict[str, Any], stamp: str) -> None:
    """Workspace files' versions replayed into cards, once the conversations' cards are back:
    an entry that repeats a stranger's card is untrusted again, as sync made it
    (maintenance/workspace.py `following`)."""
    from ..ingest.provenance import stored_echoes

    gone = tombstones.forgotten(memory.raw, "card") if files else set()
    echoes: dict[str, Any] = {}
    for session, row in files:
        graph.upsert_session({**row, "distilled_turns": len(session.turns), "last_card": None})
        cards, _ends = workspace.derive_all(session, distiller, stamp)
        if session.agent_id not in echoes:
            echoes[session.agent_id] = stored_echoes(graph, [session.agent_id, "shared"], stamp)
        cards = workspace.following(echoes[session.agent_id], [c for c in cards if c.id not in gone])
        contexts.write_contexts(workspace.contexts_for(session, cards))
        graph.upsert_cards(cards)
        graph.link_to_sessions([{"card": c.id, "session": session.id, "turns": c.sources[0].turn_ids} for c in cards])
        if cards:
            index.upsert_cards([index_row(c) for c in cards], memory.embedder.embed([index_text(c) for c in cards]))
        report["cards"] += len(cards)


def _distill(memory: "Memory", graph: "UpkeepGraph", index: Any, ids: list[str], report: dict[str, Any], stamp: str) -> None:
    """Distill these sessions' turns that the new graph does not have yet (all of them, the
    first time); notes imported with `import-memex` become their cards again."""
    from ..providers import make_distiller

    embedder = memory.embedder
    distiller = make_distiller(memory)
    contexts = _Contexts(memory.raw.root)
    known = graph.get_sessions(ids)
    batch: list[DistillPlan] = []
    notes = []
    files: list[tuple[Session, dict[str, Any]]] = []  # workspace files: after the conversations (below)
    for done, session_id in enumerate(ids, 1):
        # with `redaction.redact_raw` off L3 keeps the original: secrets out before L2/L1
        session = redact.for_derived(memory, memory.raw.load(session_id))
        if session is None:
            continue
        path = memory.raw.find(session_id)
        ingested = iso(as_datetime(path.stat().st_mtime)) if path else stamp
        start = (known.get(session_id) or {}).get("distilled_turns") or 0
        row = {"id": session.id, "agent_id": session.agent_id, "started_at": session.started_at,
               "ingested_at": ingested, "path": str(path), "title": session.title,
               "source_format": session.source_format, "turn_count": len(session.turns),
               "kind": session.kind, "parent": session.parent,
               "distilled_turns": start, "last_card": (known.get(session_id) or {}).get("last_card")}
        if session_id not in known:
            report["sessions"] += 1
        if session.source_format == workspace.FORMAT:  # a workspace file: its versions replayed (docs/workspace.md)
            files.append((session, row))
            continue
        if session.source_format == memex.FORMAT:
            graph.upsert_session({**row, "distilled_turns": len(session.turns)})
            if session_id not in known:
                notes.append((session, memex.card_for(session, stamp)))
            continue
        graph.upsert_session(row)
        batch.append(prepare(session, start, distiller, embedder, memory.config.distill.max_cards_per_session,
                             memory.config.provenance))
        if sum(len(p.cards) for p in batch) >= _BATCH_CARDS:
            _apply_batch(batch, graph, contexts, index, report)
            batch = []
        progress(f"rebuild: distilled {done}/{len(ids)} sessions", done, len(ids))
    if batch:
        _apply_batch(batch, graph, contexts, index, report)
    _workspace_files(memory, graph, index, files, distiller, contexts, report, stamp)
    if notes:
        links, _unresolved = memex.links_for(notes, {}, stamp)
        memex.apply_notes(graph, notes, links)
        index.upsert_cards([index_row(c) for _, c in notes], embedder.embed([index_text(c) for _, c in notes]))
        index.upsert_relations([{"name": memex.RELATION, "description": relation_description(memex.RELATION)}],
                               embedder.embed([relation_description(memex.RELATION)]))
        report["notes"] += len(notes)
        report["cards"] += len(notes)
        report["links"] += len(links)


def _apply_batch(batch: list[DistillPlan], graph: "UpkeepGraph", contexts: Any, index: Any, report: dict) -> None:
    applied, links = apply(batch, graph, contexts)
    cards = [c for p in applied for c in p.cards]
    if cards:
        index.upsert_cards([index_row(c) for c in cards], np.concatenate([p.vectors for p in applied if p.cards]))
    report["cards"] += len(cards)
    report["links"] += links


def _replay(memory: "Memory", graph: "UpkeepGraph", index: Any, stamp: str, records: list[dict[str, Any]],
            set_aside: dict[str, Copy]) -> dict[str, int]:
    """L3 log records in time order: manual links, then the resolver's and introspect's
    merges, links (CONTRADICTS, SIMILAR_TO), supersedes (`valid_until`), forgets (each card
    kept in `set_aside`) and restores (put back from it)."""
    from ..distill.resolver import merged_card
    from .consolidate import merge_in_graph

    from ..curate import entities

    done = {"link": 0, "merge": 0, "forget": 0, "restore": 0, "supersede": 0, "entity": 0, "confidence": 0,
            "summary": 0, "skipped": 0}
    customs: set[str] = set()
    for r in records:
        op = r.get("op")
        if op == "link":
            src, dst, rel = r.get("src"), r.get("dst"), r.get("rel")
            if not (src and dst and rel) or len(graph.get_cards([src, dst])) < 2:
                done["skipped"] += 1
                continue
            graph.add_links(expand_link(src, dst, rel, float(r.get("weight") or 1.0), r.get("ts") or stamp, r.get("reason")))
            if is_custom(rel):
                customs.add(rel)
            done["link"] += 1
        elif op == "merge":
            cards = graph.get_cards([r.get("keep"), r.get("drop")])
            keep, drop = cards.get(r.get("keep")), cards.get(r.get("drop"))
            if keep is None or drop is None:
                done["skipped"] += 1
                continue
            merged = merged_card(keep, [drop], r.get("ts") or stamp)
            merge_in_graph(graph, {keep.id: [drop.id]}, {keep.id: merged}, cards, {drop.id: keep.id}, r.get("ts") or stamp)
            index.delete_cards([drop.id])
            index.upsert_cards([index_row(merged)], memory.embedder.embed([index_text(merged)]))
            done["merge"] += 1
        elif op == "forget":
            card = r.get("card")
            if not card or not graph.get_cards([card]):
                done["skipped"] += 1
                continue
            for copy in copies_of(graph, {card: str(r.get("reason") or "")}, r.get("ts") or stamp):  # type: ignore[arg-type]
                set_aside[card] = copy
            graph.remove_cards([card])
            index.delete_cards([card])
            done["forget"] += 1
        elif op == "restore":
            copy = set_aside.pop(str(r.get("card") or ""), None)
            if copy is None:
                done["skipped"] += 1
                continue
            back = put_back(graph, [copy])  # type: ignore[arg-type]
            hand_over([copy], set_aside)
            index.upsert_cards([index_row(c) for c in back], memory.embedder.embed([index_text(c) for c in back]))
            done["restore"] += 1
        elif op == "entity":  # `alaya entities` and commit's entity types
            entities.apply(graph, r)
            done["entity"] += 1
        elif op == "supersede":  # the resolver's contradiction: the old fact's valid_until
            card, until = r.get("card"), r.get("valid_until")
            if not card or not until or not graph.get_cards([card]):
                done["skipped"] += 1
                continue
            graph.supersede(card, str(until), r.get("ts") or stamp)  # the first supersede wins, as in pipeline.py
            done["supersede"] += 1
        elif op == "confidence":  # reflect's step on an opinion: replayed while the file still states `from`
            card, value, before = r.get("card"), r.get("c"), r.get("from")
            if (not card or value is None or "from" not in r
                    or not graph.set_confidence(card, float(value), None if before is None else float(before))):
                done["skipped"] += 1
                continue
            done["confidence"] += 1
        elif op == "summary":  # reflect's summary of an entity: the card as reflect last wrote it
            try:
                card = Card.model_validate(r.get("card"))
            except ValidationError:
                done["skipped"] += 1
                continue
            graph.upsert_cards([card])
            index.upsert_cards([index_row(card)], memory.embedder.embed([index_text(card)]))
            done["summary"] += 1
    if customs:
        rows = [{"name": n, "description": relation_description(n)} for n in sorted(customs)]
        index.upsert_relations(rows, memory.embedder.embed([row["description"] for row in rows]))
    return done


def _drop_forgotten(memory: "Memory", graph: "UpkeepGraph", index: Any) -> None:
    """Cards forgotten on purpose that the replay brought back by another way (a card merged
    into one before it was forgotten), and the Session nodes of forgotten sessions."""
    cards = sorted(tombstones.forgotten(memory.raw, "card"))
    present = list(graph.get_cards(cards)) if cards else []
    if present:
        graph.remove_cards(present)
        index.delete_cards(present)
    sessions = sorted(tombstones.forgotten(memory.raw, "session"))
    if sessions:
        graph.delete_sessions(sessions)


def _carry_usage(graph: "UpkeepGraph", usage: dict[str, Any]) -> int:
    present = graph.all_card_ids()
    rows = [
        {"id": cid, "n": u.access_count, "seen": u.last_accessed, "created": u.created_at,
         "t": u.temperature, "tier": u.tier}
        for cid, u in usage.items() if cid in present
    ]
    graph.set_card_columns([{"id": r["id"], "access_count": r["n"], "last_accessed": r["seen"], "created_at": r["created"],
                             "temperature": r["t"], "tier": r["tier"]} for r in rows],
                           ["access_count", "last_accessed", "created_at", "temperature", "tier"])
    return len(rows)
