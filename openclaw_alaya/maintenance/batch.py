"""consolidate, fold-access, cool-down and forget together (what `alaya introspect` runs): one
snapshot, all the planning outside the lock, one write-lock hold to apply.

Each write-lock hold that opens the graph pays for opening Kuzu and for its checkpoint on close
(50–250 ms on 10,000 cards), so running the four steps one after the other held the lock about
five times; here it is held twice: a few milliseconds to rotate the access log (no store
opened, access.py) and once to apply everything.

Outside the lock, from one snapshot of the cards (read lock), in the order the steps run:

1. consolidate plans merges and SIMILAR_TO links (consolidate.plan), prepares the merged cards,
   their vectors and L3 context files;
2. fold-access aggregates the rotated access log;
3. cool-down plans temperatures and tiers on the cards as they will be after 1 and 2 (merged
   usage summed, accesses added);
4. forget picks the eligible cards among those tiers, with dependencies as they will be after
   the merges.

Under the write lock, one graph transaction applies them in the same order with the steps' own
re-checks (a merge whose cards changed meanwhile is skipped; forget re-checks eligibility on
the cards as the earlier parts left them), then L1 follows. Reports are the steps' own; a dry
run does not come here (each step reports from the store as it is).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..distilling import index_row, index_text
from . import access, consolidate, forget, temperature
from .bulk import delete_cards
from .common import CURATION_LOG, append_log, as_datetime, card_rows, iso

if TYPE_CHECKING:
    from ..engine import Alaya

STEPS = ("consolidate", "fold-access", "cool-down", "forget")


def run(memory: "Alaya", names: set[str], *, now: Any = None) -> dict[str, dict[str, Any]]:
    """The reports of the named steps (a subset of STEPS), applied in one write-lock hold."""
    moment = as_datetime(now)
    stamp = iso(moment)
    intro, tconf = memory.config.introspect, memory.config.temperature
    want = {n: n in names for n in STEPS}
    reports: dict[str, dict[str, Any]] = {}

    # --- one snapshot ---------------------------------------------------------------------
    with memory.lock.read("introspect (reading cards)"):
        with memory.graph(write=False) as graph:
            rows = card_rows(graph)
            linked = {(min(a, b), max(a, b)) for a, b in graph.query(
                "MATCH (a:Card)-[:SIMILAR_TO]->(b:Card) RETURN a.id, b.id")} if want["consolidate"] else set()
            counts = graph.relation_counts() if want["consolidate"] else {}
            protected = forget.depended_on(graph) if want["forget"] else set()
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
            "relations": consolidate.relation_review(counts, memory.embedder.embed, intro),
        }
    mapping = {d: k for k, drops in by_keep.items() for d in drops}
    by_id = {r.id: r for r in rows}
    future = _after_merges(by_id, by_keep, stamp)

    # --- 2. fold-access -------------------------------------------------------------------
    fold_paths: list[Any] = []
    hits: Counter = Counter()
    last: dict[str, float] = {}
    if want["fold-access"]:
        fold_paths = access.rotate(memory)
        hits, last, lines = access.aggregate(fold_paths)
        reports["fold-access"] = {"lines": lines, "cards": 0, "accesses": sum(hits.values())}
        for cid, n in hits.items():
            row = future.get(cid)  # a merged-away card matches nothing, as when the steps ran apart
            if row is not None:
                seen = iso(datetime.fromtimestamp(last[cid], timezone.utc))
                future[row.id] = dataclasses.replace(row, access_count=row.access_count + n,
                                                     last_accessed=max(row.last_accessed or "", seen))

    # --- 3. cool-down ---------------------------------------------------------------------
    cool: dict[str, Any] = {"updates": [], "drop_rows": [], "add_rows": []}
    if want["cool-down"]:
        cool = temperature.plan(list(future.values()), indexed - set(mapping), moment, tconf)
        reports["cool-down"] = {
            "cards": len(future), "tiers": dict(Counter(cool["tiers"].values())), "transitions": cool["transitions"],
            "demoted_hot_limit": len(cool["demoted"]), "embeddings_removed": len(cool["drop_rows"]),
            "embeddings_restored": len(cool["add_rows"]), "histogram": temperature.histogram(list(cool["temps"].values())),
        }
        for cid, tier in cool["tiers"].items():
            future[cid] = dataclasses.replace(future[cid], tier=tier)

    # --- 4. forget ------------------------------------------------------------------------
    chosen: list[str] = []
    if want["forget"]:
        shielded = {mapping.get(c, c) for c in protected}
        chosen = forget.eligible(list(future.values()), shielded, moment, intro)
        reports["forget"] = {"cold": sum(1 for r in future.values() if r.tier == "COLD"), "eligible": len(chosen),
                             "forgotten": 0, "cards": chosen[:50]}

    if not (by_keep or similar or fold_paths or cool["updates"] or cool["drop_rows"] or cool["add_rows"] or chosen):
        return reports

    # --- outside the lock: cards to (re)write, their vectors, L3 contexts -------------------
    prepared = None
    restore: list[Any] = []
    if by_keep or cool["add_rows"]:
        with memory.lock.read("introspect (cards to merge or re-index)"):
            with memory.graph(write=False) as graph:
                cards = graph.get_cards(list(dict.fromkeys(consolidate.involved_in(by_keep) + cool["add_rows"])))
        restore = [cards[c] for c in cool["add_rows"] if c in cards]
        if by_keep:
            prepared = consolidate.prepare(memory, by_keep, cards, indexed, stamp)
    restore_vectors = memory.embedder.embed([index_text(c) for c in restore]) if restore else None

    # --- one write-lock hold -----------------------------------------------------------------
    with memory.lock.write("introspect (" + ", ".join(n for n in STEPS if want[n]) + ")"):
        with memory.graph(write=True) as graph:
            done = {"ok": {}, "mapping": {}, "merged": [], "similar": 0, "skipped": 0}
            if prepared is not None or similar:
                prepared = prepared or {"by_keep": {}, "snapshot": {}, "planned": {}, "vectors": {}}
                done = consolidate.apply_in_graph(memory, graph, prepared, similar, stamp)
            if want["fold-access"]:
                found = access.apply_counts(graph, hits, last)
                reports["fold-access"].update(cards=found, unknown_cards=len(hits) - found)
            gone = set(done["mapping"])
            if cool["updates"]:
                temperature.apply_updates(graph, [u for u in cool["updates"] if u["id"] not in gone])
            present = {r[0] for r in graph.query("MATCH (c:Card) WHERE c.id IN $ids RETURN c.id",
                                                 {"ids": [c.id for c in restore]})} if restore else set()
            forgotten: list[str] = []
            if chosen:
                # re-check on the cards as this transaction left them: recalled, warmed up or
                # newly depended on meanwhile stays
                forgotten = forget.eligible(card_rows(graph, chosen), forget.depended_on(graph), moment, intro)
                append_log(memory, CURATION_LOG, [{"op": "forget", "card": c, "ts": stamp} for c in forgotten])
                delete_cards(graph, forgotten)
        for path in fold_paths:
            path.unlink(missing_ok=True)
        cold = {cid for cid, tier in cool.get("tiers", {}).items() if tier == "COLD"}
        if prepared is not None:
            consolidate.apply_to_index(memory, prepared, done, leave_out=cold | set(forgotten))
        memory.index.delete_cards(sorted(set(cool["drop_rows"]) | set(forgotten)))
        keep = [i for i, card in enumerate(restore) if card.id in present and card.id not in forgotten]
        if keep:
            memory.index.upsert_cards([index_row(restore[i]) for i in keep], restore_vectors[keep])
    if "consolidate" in reports:
        reports["consolidate"].update(merged=len(done["merged"]), similar_linked=done["similar"],
                                      skipped_changed=done["skipped"])
    if "forget" in reports:
        reports["forget"]["forgotten"] = len(forgotten)
    return reports


def _after_merges(by_id: dict[str, Any], by_keep: dict[str, list[str]], stamp: str) -> dict[str, Any]:
    """The card rows as the planned merges will leave them: merged-away cards gone, the kept
    card with the summed usage and the higher importance (as consolidate._merge_in_graph)."""
    future = dict(by_id)
    for keep, drops in by_keep.items():
        group = [by_id[c] for c in [keep, *drops] if c in by_id]
        if keep not in by_id:
            continue
        seen = [r.last_accessed for r in group if r.last_accessed]
        future[keep] = dataclasses.replace(
            by_id[keep], access_count=sum(r.access_count for r in group), last_accessed=max(seen) if seen else None,
            importance=max(r.importance for r in group), updated_at=stamp)
        for drop in drops:
            future.pop(drop, None)
    return future
