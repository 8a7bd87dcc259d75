"""`alaya rebuild`: re-derive L2 (graph) and L1 (index) from L3 (docs/architecture.md, "Data
layout").

1. Outside the lock, a new graph and index are built in `<data dir>/.rebuild-<stamp>/`: every
   session in `raw/sessions` distilled from its first turn (notes imported with
   `import-memex` become their cards again), then the L3 logs replayed in time order —
   `raw/links.jsonl` (links made with `alaya link`) and `raw/curation.jsonl` (the resolver's
   merges, CONTRADICTS links and supersedes — an old fact's `valid_until` — and introspect's
   merges, forgets and SIMILAR_TO links). Usage (access counts, last access, creation time,
   temperature and tier) is carried over from the old graph for cards that still exist; COLD
   cards get no L1 row.
2. Under the write lock, if L3 did not change meanwhile (else the build is redone, up to three
   times), the old `graph.kuzu` and `lancedb/` are moved aside and the new ones moved in; the
   old ones are deleted after the lock is released.

The offline distiller is deterministic and card ids are uuid5(session, key), so a rebuild
gives back the same cards and links.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .. import redact
from ..distill.plan import DistillPlan, apply, prepare
from ..errors import AlayaError
from ..models import (
    CORE_RELATIONS,
    expand_link,
    index_row,
    index_text,
    is_custom,
    relation_description,
)
from ..progress import progress
from ..store.graph import GraphStore
from ..store.raw import CURATION_LOG, LINKS_LOG, read_log
from . import memex
from .bulk import set_cards
from .common import as_datetime, card_rows, iso

if TYPE_CHECKING:
    from ..memory import Memory

_BATCH_CARDS = 2000
_ATTEMPTS = 3


class _Contexts:
    """What `distilling.apply` writes card contexts to: L3 already has them; only missing ones
    are written again (a rebuild after raw/contexts was lost)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write_context(self, card_id: str, session_id: str, turns: list[Any]) -> None:
        if not (self.raw.contexts_dir / f"{card_id}.json").exists():
            self.raw.write_context(card_id, session_id, turns)

    def write_contexts(self, items: list[tuple[str, str, list[Any]]]) -> None:
        """As `write_context`, one entry after the other."""
        for card_id, session_id, turns in items:
            self.write_context(card_id, session_id, turns)


def fingerprint(memory: "Memory") -> list[Any]:
    files = [memory.raw.sessions_dir / m / f for m in sorted(os.listdir(memory.raw.sessions_dir))
             if (memory.raw.sessions_dir / m).is_dir() for f in sorted(os.listdir(memory.raw.sessions_dir / m))] \
        if memory.raw.sessions_dir.is_dir() else []
    logs = [memory.raw.log_path(LINKS_LOG), memory.raw.log_path(CURATION_LOG)]
    return [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in [*files, *logs] if p.exists()]


def rebuild(memory: "Memory", *, now: Any = None) -> dict[str, Any]:
    memory.dirs.require()
    moment = as_datetime(now)
    for _attempt in range(_ATTEMPTS):
        before = fingerprint(memory)
        with memory.reading("rebuild (usage of the old graph)") as graph:
            usage = {r.id: r for r in card_rows(graph)}
        work = memory.dirs.root / f".rebuild-{time.time_ns()}"
        work.mkdir(mode=0o700)
        try:
            report = build(memory, work, usage, moment)
            old = memory.dirs.root / f".rebuild-old-{time.time_ns()}"
            with memory.writing("rebuild (swap in the new graph and index)"):
                if fingerprint(memory) != before:
                    continue  # L3 changed while building: build again from the new truth
                old.mkdir(mode=0o700)
                for name in ("graph.kuzu", "graph.kuzu.wal", "lancedb"):
                    if (memory.dirs.root / name).exists():
                        os.replace(memory.dirs.root / name, old / name)
                for name in ("graph.kuzu", "lancedb"):
                    os.replace(work / name, memory.dirs.root / name)
            memory.reopen_index()  # the cached L1 handle points at the old tables
            shutil.rmtree(old, ignore_errors=True)
            return report
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise AlayaError(f"{memory.dirs.root}: raw sessions kept changing during rebuild; try again when it is quieter")


def build(memory: "Memory", work: Path, usage: dict[str, Any], moment: Any) -> dict[str, Any]:
    from ..providers import make_distiller
    from ..store.vectors import VectorStore

    stamp = iso(moment)
    embedder = memory.embedder
    distiller = make_distiller(memory.config)
    index = VectorStore(work / "lancedb", embedder.id, embedder.dim)
    index.create()
    core = [{"name": n, "description": relation_description(n)} for n in CORE_RELATIONS]
    index.upsert_relations(core, embedder.embed([r["description"] for r in core]))
    contexts = _Contexts(memory.raw)
    report = {"sessions": 0, "cards": 0, "links": 0, "notes": 0, "replayed": {}, "usage_carried": 0}
    with GraphStore(work / "graph.kuzu", read_only=False) as graph:
        graph.create_schema()
        ids = memory.raw.session_ids()
        batch: list[DistillPlan] = []
        notes = []
        for done, session_id in enumerate(ids, 1):
            # with `redaction.redact_raw` off L3 keeps the original: secrets out before L2/L1
            session = redact.for_derived(memory, memory.raw.load(session_id))
            if session is None:
                continue
            path = memory.raw.find(session_id)
            ingested = iso(as_datetime(path.stat().st_mtime)) if path else stamp
            row = {"id": session.id, "agent_id": session.agent_id, "started_at": session.started_at,
                   "ingested_at": ingested, "path": str(path), "title": session.title,
                   "source_format": session.source_format, "turn_count": len(session.turns),
                   "distilled_turns": 0, "last_card": None}
            report["sessions"] += 1
            if session.source_format == memex.FORMAT:
                graph.upsert_session({**row, "distilled_turns": len(session.turns)})
                notes.append((session, memex.card_for(session, stamp)))
                continue
            graph.upsert_session(row)
            batch.append(prepare(session, 0, distiller, embedder, memory.config.distill.max_cards_per_session))
            if sum(len(p.cards) for p in batch) >= _BATCH_CARDS or done == len(ids):
                _apply_batch(batch, graph, contexts, index, report)
                batch = []
            progress(f"rebuild: distilled {done}/{len(ids)} sessions", done, len(ids))
        if batch:
            _apply_batch(batch, graph, contexts, index, report)
        if notes:
            links, _unresolved = memex.links_for(notes, {}, stamp)
            memex.apply_notes(graph, notes, links)
            index.upsert_cards([index_row(c) for _, c in notes], embedder.embed([index_text(c) for _, c in notes]))
            index.upsert_relations([{"name": memex.RELATION, "description": relation_description(memex.RELATION)}],
                                   embedder.embed([relation_description(memex.RELATION)]))
            report["notes"] = len(notes)
            report["cards"] += len(notes)
            report["links"] += len(links)
        report["replayed"] = _replay(memory, graph, index, stamp)
        report["usage_carried"] = _carry_usage(graph, index, usage)
        report["cards_now"] = graph.query("MATCH (c:Card) RETURN count(c)")[0][0]
    return report


def _apply_batch(batch: list[DistillPlan], graph: GraphStore, contexts: Any, index: Any, report: dict) -> None:
    applied, links = apply(batch, graph, contexts)
    cards = [c for p in applied for c in p.cards]
    if cards:
        index.upsert_cards([index_row(c) for c in cards], np.concatenate([p.vectors for p in applied if p.cards]))
    report["cards"] += len(cards)
    report["links"] += links


def _replay(memory: "Memory", graph: GraphStore, index: Any, stamp: str) -> dict[str, int]:
    """The L3 logs in time order: manual links, then the resolver's and introspect's merges,
    links (CONTRADICTS, SIMILAR_TO), supersedes (`valid_until`) and forgets."""
    from ..distill.resolver import merged_card
    from .consolidate import merge_in_graph

    records = [{**r, "op": r.get("op", "link"), "_manual": True} for r in read_log(memory.raw.log_path(LINKS_LOG))]
    records += read_log(memory.raw.log_path(CURATION_LOG))
    records.sort(key=lambda r: str(r.get("ts") or ""))
    done = {"link": 0, "merge": 0, "forget": 0, "supersede": 0, "skipped": 0}
    customs: set[str] = set()
    for r in records:
        op = r.get("op")
        if op == "link":
            src, dst, rel = r.get("src"), r.get("dst"), r.get("rel")
            if not (src and dst and rel) or len(graph.get_cards([src, dst])) < 2:
                done["skipped"] += 1
                continue
            graph.add_links(expand_link(src, dst, rel, float(r.get("weight") or 1.0), r.get("ts") or stamp))
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
            graph.query("MATCH (c:Card) WHERE c.id = $id DETACH DELETE c", {"id": card})
            index.delete_cards([card])
            done["forget"] += 1
        elif op == "supersede":  # the resolver's contradiction: the old fact's valid_until
            card, until = r.get("card"), r.get("valid_until")
            if not card or not until or not graph.get_cards([card]):
                done["skipped"] += 1
                continue
            graph.supersede(card, str(until), r.get("ts") or stamp)  # the first supersede wins, as in pipeline.py
            done["supersede"] += 1
    if customs:
        rows = [{"name": n, "description": relation_description(n)} for n in sorted(customs)]
        index.upsert_relations(rows, memory.embedder.embed([row["description"] for row in rows]))
    return done


def _carry_usage(graph: GraphStore, index: Any, usage: dict[str, Any]) -> int:
    present = {r[0] for r in graph.query("MATCH (c:Card) RETURN c.id")}
    rows = [
        {"id": cid, "n": u.access_count, "seen": u.last_accessed, "created": u.created_at,
         "t": u.temperature, "tier": u.tier}
        for cid, u in usage.items() if cid in present
    ]
    set_cards(graph, [{"id": r["id"], "access_count": r["n"], "last_accessed": r["seen"], "created_at": r["created"],
                       "temperature": r["t"], "tier": r["tier"]} for r in rows],
              {"access_count": pa.int64(), "last_accessed": pa.string(), "created_at": pa.string(),
               "temperature": pa.float64(), "tier": pa.string()})
    index.delete_cards([r["id"] for r in rows if r["tier"] == "COLD"])
    return len(rows)
