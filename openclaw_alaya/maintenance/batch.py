"""consolidate, fold-access, cool-down and forget together (what `alaya introspect` runs): one
snapshot, all the planning outside the lock, and the graph work too, on a copy of the graph.

Each write-lock hold that opens the graph pays for opening Kuzu and for its checkpoint on close
(50–250 ms on 10,000 cards), so running the four steps one after the other held the lock about
five times; here it is held twice: a few milliseconds to rotate the access log (no store
opened, access.py) and once to swap in the graph and write L1.

Outside the lock, from one snapshot of the cards (read lock), in the order the steps run:

1. consolidate plans merges and SIMILAR_TO links (consolidate.plan), prepares the merged cards,
   their vectors and L3 context files;
2. fold-access aggregates the rotated access log;
3. cool-down plans temperatures and tiers on the cards as they will be after 1 and 2 (merged
   usage summed, accesses added);
4. forget picks the eligible cards among those tiers, with dependencies as they will be after
   the merges.

Then one graph transaction applies them in the same order with the steps' own re-checks (a
merge whose cards changed meanwhile is skipped; forget re-checks eligibility on the cards as the
earlier parts left them) — on a private copy of the graph, outside the lock (the scratch port's
`graph_draft`, store/ports/scratch.py). Under the write lock the copy replaces the graph if no
writer changed the graph meanwhile; if one did, the same transaction is applied to the graph
itself under the lock. L1 follows in the same hold. Which way it went, and where the hold's time
went, is logged (logger `openclaw_alaya.maintenance.batch`, INFO). Reports are the steps' own;
a dry run does not come here (each step reports from the store as it is).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np

from ..curate.restore import copies_of, restored
from ..models import index_row, index_text
from ..store import forgotten as saved
from ..store.raw import CURATION_LOG, log_lines
from . import access, consolidate, forget, temperature
from .common import as_datetime, iso

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Card
    from ..store.ports.upkeep import UpkeepGraph

STEPS = ("consolidate", "fold-access", "cool-down", "forget")
log = logging.getLogger(__name__)


def run(memory: "Memory", names: set[str], *, now: Any = None) -> dict[str, dict[str, Any]]:
    """The reports of the named steps (a subset of STEPS), applied in one write-lock hold; then
    forget's saved copies past the purge window deleted (forget.purge_copies)."""
    reports = _run(memory, names, now=now)
    if "forget" in reports:
        reports["forget"]["copies_purged"] = forget.purge_copies(memory, now=now)
    return reports


def _run(memory: "Memory", names: set[str], *, now: Any = None) -> dict[str, dict[str, Any]]:
    moment = as_datetime(now)
    stamp = iso(moment)
    intro, tconf = memory.config.introspect, memory.config.temperature
    want = {n: n in names for n in STEPS}
    reports: dict[str, dict[str, Any]] = {}

    # --- one snapshot ---------------------------------------------------------------------
    kept = restored(memory) if want["forget"] else set()
    with memory.reading("introspect (reading cards)") as graph:
        rows = graph.card_rows()
        linked = graph.similar_linked() if want["consolidate"] else set()
        counts = graph.relation_counts() if want["consolidate"] else {}
        protected = forget.spared(graph, rows) | kept if want["forget"] else set()
        if want["consolidate"]:
            ids, vectors = memory.index.all_vectors()
            indexed = set(ids)
        else:
            indexed = set(memory.index.card_ids())

    # --- 1. consolidate -------------------------------------------------------------------
    by_keep: dict[str, list[str]] = {}
    similar: list[tuple[str, str, float]] = []
    if want["consolidate"]:
        p = consolidate.plan(rows, ids, vectors, linked, intro)
        by_keep, similar = consolidate.group_merges(p["merges"]), p["similar"]
        reports["consolidate"] = {
            "cards_compared": len(ids), "pairs_over_similar_threshold": p["pairs"],
            "merged": len(p["merges"]), "similar_linked": len(p["similar"]),
            "rejected_by_check": p["rejected_by_check"],
            "merges": [{"keep": k, "drop": d, "similarity": round(s, 4)} for k, d, s in p["merges"][:50]],
            "relations": consolidate.relation_review(counts, memory.embedder.embed, intro,
                                                     memory.config.recall.relation_aliases),
        }
    mapping = {d: k for k, drops in by_keep.items() for d in drops}
    by_id = {r.id: r for r in rows}
    future = _after_merges(by_id, by_keep, stamp)

    # --- 2. fold-access -------------------------------------------------------------------
    folding = access.Folding([])
    hits: Counter = Counter()
    last: dict[str, float] = {}
    if want["fold-access"]:
        folding = access.Folding.read(access.rotate(memory))
        hits, last, lines = folding.tally()
        reports["fold-access"] = {"lines": lines, "cards": 0, "accesses": sum(hits.values())}
        for cid, n in hits.items():
            row = future.get(cid)  # a merged-away card matches nothing, as when the steps ran apart
            if row is not None:
                seen = iso(datetime.fromtimestamp(last[cid], timezone.utc))
                future[row.id] = dataclasses.replace(row, access_count=row.access_count + n,
                                                     last_accessed=max(row.last_accessed or "", seen))

    # --- 3. cool-down ---------------------------------------------------------------------
    cool: dict[str, Any] = {"updates": [], "add_rows": []}
    if want["cool-down"]:
        cool = temperature.plan(list(future.values()), indexed - set(mapping), moment, tconf)
        reports["cool-down"] = {
            "cards": len(future), "tiers": dict(Counter(cool["tiers"].values())), "transitions": cool["transitions"],
            "demoted_hot_limit": len(cool["demoted"]), "embeddings_restored": len(cool["add_rows"]),
            "histogram": temperature.histogram(list(cool["temps"].values())),
        }
        for cid, tier in cool["tiers"].items():
            future[cid] = dataclasses.replace(future[cid], tier=tier)

    # --- 4. forget ------------------------------------------------------------------------
    chosen: dict[str, str] = {}
    if want["forget"]:
        shielded = {mapping.get(c, c) for c in protected}
        chosen = forget.eligible(list(future.values()), shielded, moment, intro)
        reports["forget"] = forget.report_of(list(future.values()), chosen, moment, intro)

    if not (by_keep or similar or folding.reads or cool["updates"] or cool["add_rows"] or chosen):
        return reports

    # --- outside the lock: cards to (re)write, their vectors, L3 contexts -------------------
    prepared = None
    restore: list[Any] = []
    if by_keep or cool["add_rows"]:
        with memory.reading("introspect (cards to merge or re-index)") as graph:
            cards = graph.get_cards(list(dict.fromkeys(consolidate.involved_in(by_keep) + cool["add_rows"])))
        restore = [cards[c] for c in cool["add_rows"] if c in cards]
        if by_keep:
            prepared = consolidate.prepare(memory, by_keep, cards, indexed, stamp)
    batch = _Batch(
        moment=moment, stamp=stamp, prepared=prepared, similar=similar, hits=hits, last=last, folding=folding,
        updates=cool["updates"], chosen=chosen, kept=kept, restore=restore,
        restore_vectors=memory.embedder.embed([index_text(c) for c in restore]) if restore else None)

    # --- one write-lock hold -----------------------------------------------------------------
    applied = _apply(memory, batch, intro, "introspect (" + ", ".join(n for n in STEPS if want[n]) + ")")
    if "consolidate" in reports:
        reports["consolidate"].update(merged=len(applied.done["merged"]), similar_linked=applied.done["similar"],
                                      skipped_changed=applied.done["skipped"])
    if "fold-access" in reports:
        folded, _last, lines = folding.tally()  # as settled under the lock
        reports["fold-access"].update(lines=lines, accesses=sum(folded.values()), cards=applied.found,
                                      unknown_cards=len(folded) - applied.found)
    if "forget" in reports:
        reports["forget"]["forgotten"] = len(applied.forgotten)
    return reports


@dataclasses.dataclass
class _Batch:
    """Everything the write-lock hold applies, planned outside it."""

    moment: datetime
    stamp: str
    prepared: dict[str, Any] | None  # consolidate.prepare's merges
    similar: list[tuple[str, str, float]]  # SIMILAR_TO links to add
    hits: Counter  # accesses per card, from the rotated access log…
    last: dict[str, float]  # …and the last one of each
    folding: access.Folding  # the rotated logs and their records, the logs removed once folded
    updates: list[dict[str, Any]]  # temperatures and tiers
    chosen: dict[str, str]  # forget's candidates and their reasons, re-checked in the transaction
    kept: set[str]  # cards the owner restored (curate/restore.py): never forgotten again
    restore: list[Card]  # cards without an L1 row (COLD in a store of before issue 31): it comes back…
    restore_vectors: np.ndarray | None  # …with these vectors


@dataclasses.dataclass
class _Applied:
    """What the graph transaction did: for L1, `raw/curation.jsonl` and the reports."""

    done: dict[str, Any]  # consolidate.apply_in_graph's result
    found: int  # cards whose access counts were folded in
    present: set[str]  # restored cards still in the graph
    forgotten: dict[str, str]  # card → reason
    copies: list[dict[str, Any]]  # what `alaya restore` needs of each, saved before the graph changes
    curation: str  # the lines for the L3 log, serialised outside the lock when the copy is used


class _Laps:
    """Milliseconds per part of the work, for the log (bench/introspect_scale.py prints them)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.ms[name] = round((now - self._last) * 1000, 1)
        self._last = now


def _apply(memory: "Memory", batch: _Batch, intro: Any, operation: str) -> _Applied:
    """The batch applied to a copy of the graph outside the lock and installed under it (the
    scratch port's `graph_draft`); applied to the graph itself under the lock when no copy could
    be taken or a writer changed the graph meanwhile. L1 follows under the same hold either way."""
    outside = _Laps()
    with memory.storage.scratch().graph_draft(memory.reading("introspect (copying the graph)")) as copy:
        outside.lap("copy")
        applied = None
        if copy is not None:
            with copy.open() as graph:
                applied = _apply_graph(graph, batch, intro)
            copy.sync()
            outside.lap("apply to the copy")
        with memory.writing(operation) as graph:
            held = _Laps()
            if batch.folding.settle():  # another introspect folded some, or recalls appended: count what is there once
                hits, last, _lines = batch.folding.tally()
                batch = dataclasses.replace(batch, hits=hits, last=last)
                applied = None  # the copy has other counts
            if copy is not None and applied is not None and copy.unchanged():
                saved.save(memory.dirs.state, applied.copies)
                memory.raw.append_lines(CURATION_LOG, applied.curation)  # L3 before L2
                held.lap("L3 log")
                copy.install()
                held.lap("swap")
                how = "shadow"
            else:
                if batch.chosen:  # a restore meanwhile changed the graph (so no copy): spare it
                    batch = dataclasses.replace(batch, kept=restored(memory))
                with graph:
                    applied = _apply_graph(graph, batch, intro)
                    saved.save(memory.dirs.state, applied.copies)
                    memory.raw.append_lines(CURATION_LOG, applied.curation)  # before the commit
                held.lap("graph in place")
                how = "in-place"
            access.retire(memory, batch.folding)
            _apply_index(memory, batch, applied)
            held.lap("L1")
    log.info("introspect batch applied %s; write lock held for %s ms; outside it %s ms", how, held.ms, outside.ms,
             extra={"applied": how, "hold_ms": held.ms, "outside_ms": outside.ms})
    return applied


def _apply_graph(graph: "UpkeepGraph", batch: _Batch, intro: Any) -> _Applied:
    """The four steps in one transaction, in their order and with their own re-checks."""
    done: dict[str, Any] = {"ok": {}, "mapping": {}, "merged": [], "similar": 0, "skipped": 0, "curation": []}
    if batch.prepared is not None or batch.similar:
        prepared = batch.prepared or {"by_keep": {}, "snapshot": {}, "planned": {}, "vectors": {}}
        done = consolidate.apply_in_graph(graph, prepared, batch.similar, batch.stamp)
    found = access.apply_counts(graph, batch.hits, batch.last)
    gone = set(done["mapping"])
    if batch.updates:
        temperature.apply_updates(graph, [u for u in batch.updates if u["id"] not in gone])
    present = graph.present_ids([c.id for c in batch.restore])
    forgotten: dict[str, str] = {}
    copies: list[dict[str, Any]] = []
    if batch.chosen:
        # re-check on the cards as this transaction left them: recalled, warmed up or newly
        # depended on meanwhile stays
        now_rows = graph.card_rows(list(batch.chosen))
        forgotten = forget.eligible(now_rows, forget.spared(graph, now_rows) | batch.kept, batch.moment, intro)
        copies = copies_of(graph, forgotten, batch.stamp)  # type: ignore[arg-type]
        graph.remove_cards(list(forgotten))
    curation = log_lines(done["curation"] + forget.records(forgotten, batch.stamp))
    return _Applied(done=done, found=found, present=present, forgotten=forgotten, copies=copies, curation=curation)


def _apply_index(memory: "Memory", batch: _Batch, applied: _Applied) -> None:
    """Under the write lock, after the graph: L1 rows of merged and forgotten cards go
    in one delete, merged and warmed-up cards' rows come in one upsert (each LanceDB commit
    costs 10–20 ms on 10,000 rows)."""
    forgotten = set(applied.forgotten)
    gone, rows, vectors = consolidate.index_changes(batch.prepared, applied.done, leave_out=forgotten) \
        if batch.prepared is not None else ([], [], [])
    memory.index.delete_cards(sorted(set(gone) | forgotten))
    back = [i for i, card in enumerate(batch.restore) if card.id in applied.present and card.id not in forgotten]
    rows += [index_row(batch.restore[i]) for i in back]
    vectors += [batch.restore_vectors[i] for i in back]
    if rows:
        memory.index.upsert_cards(rows, np.stack(vectors))


def _after_merges(by_id: dict[str, Any], by_keep: dict[str, list[str]], stamp: str) -> dict[str, Any]:
    """The card rows as the planned merges will leave them: merged-away cards gone, the kept
    card with the summed usage and the higher importance (as consolidate.merge_in_graph)."""
    future = dict(by_id)
    for keep, drops in by_keep.items():
        group = [by_id[c] for c in [keep, *drops] if c in by_id]
        if keep not in by_id:
            continue
        count, seen = consolidate.summed_usage(group)
        future[keep] = dataclasses.replace(
            by_id[keep], access_count=count, last_accessed=seen,
            importance=max(r.importance for r in group), updated_at=stamp)
        for drop in drops:
            future.pop(drop, None)
    return future
