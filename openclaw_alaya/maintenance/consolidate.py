"""Consolidate: merge duplicate cards, link similar ones, and review custom relation names.

Pairs are found on the L1 vectors (cosine; the hash embedder's vectors are unit length) with
blocked matrix products — O(N²·d) arithmetic in numpy, O(N·block) memory, no Python loop over
pairs — and only within one scope (an agent's cards are never merged into another's).

- cosine ≥ `introspect.consolidate_threshold` and the merge check passes (same type, Jaccard of
  content words ≥ `introspect.merge_min_overlap`, neither card superseded): the pair is merged.
  The kept card is the more used one (then the older, then the smaller id); it takes the other's
  provenance (sources, EXTRACTED_FROM edges, L3 contexts), tags, entities, usage and edges; the
  other card leaves L2 and L1, and its id forwards to the kept card (a `Forward` node: `alaya
  get`, `trace` and `recall --from-nodes` still accept it). Its L3 context file stays, and the
  merge is recorded in `raw/curation.jsonl` so `alaya rebuild` replays it.
- `introspect.similar_threshold` ≤ cosine (or a pair above the merge threshold that fails the
  check): linked `SIMILAR_TO` (weight = cosine) unless already linked, at most
  `introspect.max_similar_links` new links per card and run, best first.
- Relation names: custom names whose embeddings (of the name's words) are close to another
  name are alias candidates; custom names used at least `introspect.relation_promote_count`
  times are promotion candidates; vague names (RELATES_TO, LINKED_TO, …) are flagged. These are
  reported, never applied: renaming relations is the user's call. Names are also compared by
  their spelling, offline (`relation_aliases.py`, issue 35), and each candidate carries the
  command that confirms it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from ..distill.resolver import merged_card
from ..models import CORE_RELATIONS, Card, Link, expand_link, index_row, index_text, trust_class
from ..progress import progress
from ..store.raw import CURATION_LOG
from ..text import content_words
from ..store.ports.upkeep import CardRow
from .common import as_datetime, iso
from .relation_aliases import merged, name_candidates, with_confirm

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import UpkeepGraph

VAGUE_RELATIONS = ("RELATES_TO", "RELATED_TO", "LINKED_TO", "ASSOCIATED_WITH", "CONNECTED_TO", "RELATED", "LINKS_TO")
_BLOCK = 1024
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def similar_pairs(vectors: np.ndarray, groups: list[str], threshold: float, block: int = _BLOCK) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j, same group, cosine ≥ threshold; rows need not be normalised."""
    n = len(vectors)
    if n < 2:
        return []
    x = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1)
    x = x / np.where(norms > 0, norms, 1.0)[:, None]
    codes = np.unique(np.asarray(groups), return_inverse=True)[1]
    found: list[tuple[int, int, float]] = []
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = x[start:stop] @ x[start:].T  # only columns j ≥ start: each pair once
        sims[np.arange(stop - start)[:, None] + start >= np.arange(start, n)[None, :]] = -1.0  # j > i only
        sims[codes[start:stop][:, None] != codes[start:][None, :]] = -1.0
        r, c = np.nonzero(sims >= threshold)
        found.extend(zip((r + start).tolist(), (c + start).tolist(), sims[r, c].tolist()))
        progress(f"consolidate: compared {stop}/{n} cards", stop, n)
    return found


def overlap(a: str, b: str) -> float:
    """Jaccard of the content words of two texts; 0 when they state different numbers
    ("timeout is 30 s" and "timeout is 60 s" hash alike but are two facts)."""
    wa, wb = set(content_words(a)), set(content_words(b))
    if not wa or not wb or set(_NUMBER.findall(a)) != set(_NUMBER.findall(b)):
        return 0.0
    return len(wa & wb) / len(wa | wb)


def _rank(row: CardRow) -> tuple:
    """Which of two duplicates is kept: more used, then older, then smaller id."""
    return (-row.access_count, row.created_at or "", row.id)


def plan(rows: list[CardRow], ids: list[str], vectors: np.ndarray, similar_linked: set[tuple[str, str]],
         config: Any) -> dict[str, Any]:
    by_id = {r.id: r for r in rows}
    keep_idx = [i for i, cid in enumerate(ids) if cid in by_id]
    ids = [ids[i] for i in keep_idx]
    vectors = vectors[keep_idx] if len(keep_idx) else vectors[:0]
    low = min(config.similar_threshold, config.consolidate_threshold)
    # within one scope and one trust class (models.trust_class): an untrusted card is never
    # merged into, or linked as the same as, a card that may be injected
    pairs = similar_pairs(vectors, [f"{by_id[c].scope}\x00{trust_class(by_id[c].origin)}" for c in ids], low)
    pairs.sort(key=lambda p: (-p[2], ids[p[0]], ids[p[1]]))
    merges: list[tuple[str, str, float]] = []  # (keep, drop, cosine)
    absorbed: dict[str, str] = {}
    absorbers: set[str] = set()
    similar: list[tuple[str, str, float]] = []
    rejected = 0
    per_card: Counter = Counter()
    for i, j, sim in pairs:
        a, b = by_id[ids[i]], by_id[ids[j]]
        if sim >= config.consolidate_threshold:
            if a.type == b.type and not a.valid_until and not b.valid_until and \
                    overlap(a.title + " " + a.content, b.title + " " + b.content) >= config.merge_min_overlap:
                keep, drop = sorted((a, b), key=_rank)
                if keep.id in absorbed or drop.id in absorbed or drop.id in absorbers:
                    continue  # already merged this run; the next run looks again
                absorbed[drop.id] = keep.id
                absorbers.add(keep.id)
                merges.append((keep.id, drop.id, sim))
                continue
            rejected += 1
        key = (min(a.id, b.id), max(a.id, b.id))
        if key in similar_linked or a.id in absorbed or b.id in absorbed:
            continue
        if per_card[a.id] >= config.max_similar_links or per_card[b.id] >= config.max_similar_links:
            continue
        per_card[a.id] += 1
        per_card[b.id] += 1
        similar.append((a.id, b.id, sim))
    return {"pairs": len(pairs), "merges": merges, "similar": similar, "rejected_by_check": rejected}


def relation_review(counts: dict[str, int], embed: Any, config: Any,
                    confirmed: dict[str, str] | None = None) -> dict[str, Any]:
    """Alias candidates (by embedding and, with no model, by spelling: relation_aliases.py),
    promotion candidates and vague names among the custom relations; `confirmed` aliases
    (`recall.relation_aliases`) are not proposed again."""
    custom = sorted(name for name in counts if name not in CORE_RELATIONS)
    names = custom + [n for n in CORE_RELATIONS if n != "EXTRACTED_FROM"]
    aliases = []
    if custom:
        vectors = embed([n.replace("_", " ").lower() for n in names])
        sims = vectors[: len(custom)] @ vectors.T
        for i, name in enumerate(custom):
            for j, other in enumerate(names):
                if (j < len(custom) and j <= i) or other == name:
                    continue
                if float(sims[i, j]) >= config.relation_alias_threshold:
                    aliases.append({"name": name, "alias_of": other, "similarity": round(float(sims[i, j]), 3),
                                    "counts": [counts.get(name, 0), counts.get(other, 0)]})
    aliases = with_confirm(merged(aliases, name_candidates(custom, names, counts)), confirmed or {})
    promote = [{"name": n, "count": counts[n]} for n in custom if counts[n] >= config.relation_promote_count]
    vague = [{"name": n, "count": counts[n]} for n in custom if n in VAGUE_RELATIONS]
    return {"custom": len(custom), "alias_candidates": aliases, "promote_candidates": promote, "vague": vague}


def consolidate(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    moment = as_datetime(now)
    config = memory.config.introspect
    with memory.reading("introspect consolidate (reading cards)") as graph:
        rows = graph.card_rows()
        linked = graph.similar_linked()
        counts = graph.relation_counts()
        ids, vectors = memory.index.all_vectors()
    p = plan(rows, ids, vectors, linked, config)
    relations = relation_review(counts, memory.embedder.embed, config, memory.config.recall.relation_aliases)
    report = {
        "cards_compared": len(ids), "pairs_over_similar_threshold": p["pairs"],
        "merged": len(p["merges"]), "similar_linked": len(p["similar"]),
        "rejected_by_check": p["rejected_by_check"],
        "merges": [{"keep": k, "drop": d, "similarity": round(s, 4)} for k, d, s in p["merges"][:50]],
        "relations": relations,
    }
    if dry_run or not (p["merges"] or p["similar"]):
        return report
    applied = apply(memory, p["merges"], p["similar"], moment, set(ids))
    report.update(merged=applied["merged"], similar_linked=applied["similar"], skipped_changed=applied["skipped"])
    return report


def apply(memory: "Memory", merges: list[tuple[str, str, float]], similar: list[tuple[str, str, float]],
          moment: Any, indexed: set[str]) -> dict[str, int]:
    """`indexed`: the ids with an L1 row (the caller read them all for the plan)."""
    stamp = iso(moment)
    by_keep = group_merges(merges)
    # Outside the lock: the merged cards and their new vectors, from a snapshot...
    with memory.reading("introspect consolidate (reading duplicates)") as graph:
        snapshot = graph.get_cards(involved_in(by_keep))
    prepared = prepare(memory, by_keep, snapshot, indexed, stamp)
    # ...applied under the write lock only if nobody changed those cards meanwhile.
    with memory.writing("introspect consolidate") as graph:
        with graph:
            done = apply_in_graph(graph, prepared, similar, stamp)
            memory.raw.append_log(CURATION_LOG, done["curation"])  # before the commit: L3 → L2
        apply_to_index(memory, prepared, done)
    return {"merged": len(done["merged"]), "similar": done["similar"], "skipped": done["skipped"]}


def group_merges(merges: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    by_keep: dict[str, list[str]] = {}
    for keep, drop, _sim in merges:
        by_keep.setdefault(keep, []).append(drop)
    return by_keep


def involved_in(by_keep: dict[str, list[str]]) -> list[str]:
    return [c for keep, drops in by_keep.items() for c in [keep, *drops]]


def prepare(memory: "Memory", by_keep: dict[str, list[str]], snapshot: dict[str, Card], indexed: set[str],
            stamp: str) -> dict[str, Any]:
    """Outside the lock: the merged cards, the new vectors of kept cards that have an L1 row, and
    the kept cards' L3 context files (which gain the dropped cards' turns)."""
    planned = {
        keep: merged_card(snapshot[keep], [snapshot[d] for d in drops if d in snapshot], stamp)
        for keep, drops in by_keep.items() if keep in snapshot
    }
    keeps = [k for k in planned if k in indexed]
    vectors = dict(zip(keeps, memory.embedder.embed([index_text(planned[k]) for k in keeps]))) if keeps else {}
    # L3 first, before the lock (file writes with fsync are the slow part of a merge). Should the
    # merge be skipped under the lock, the extra entries are harmless: trace follows the card's
    # sources, not the context file.
    for keep, drops in by_keep.items():
        own = memory.raw.load_context(keep) or {}
        extra = False
        for drop in drops:
            for session_id, turns in (memory.raw.load_context(drop) or {}).items():
                have = {t.id for t in own.get(session_id, [])}
                if any(t.id not in have for t in turns):
                    own[session_id] = own.get(session_id, []) + [t for t in turns if t.id not in have]
                    extra = True
        if extra:
            for session_id, turns in own.items():
                memory.raw.write_context(keep, session_id, turns)
    return {"by_keep": by_keep, "snapshot": snapshot, "planned": planned, "vectors": vectors}


def apply_in_graph(graph: "UpkeepGraph", prepared: dict[str, Any], similar: list[tuple[str, str, float]],
                   stamp: str) -> dict[str, Any]:
    """In the graph's transaction: the merges whose cards nobody changed since the snapshot, then
    the SIMILAR_TO links. Their records for `raw/curation.jsonl` (what rebuild replays) come
    back in "curation", for the caller to append before the graph change becomes visible: at
    the commit, or at the swap of a shadow copy (shadow.py)."""
    by_keep, snapshot, planned = prepared["by_keep"], prepared["snapshot"], prepared["planned"]
    current = {r.id: r for r in graph.card_rows(involved_in(by_keep))} if by_keep else {}
    ok = {}
    skipped = 0
    for keep, drops in by_keep.items():
        same = keep in planned and all(
            c in current and current[c].updated_at == snapshot[c].updated_at for c in [keep, *drops])
        if same:
            ok[keep] = drops
        else:
            skipped += len(drops)
    mapping = {d: k for k, drops in ok.items() for d in drops}
    done = [(k, d) for d, k in mapping.items()]
    curation = [{"op": "merge", "keep": k, "drop": d, "ts": stamp} for k, d in done]
    if mapping:
        merge_in_graph(graph, ok, planned, current, mapping, stamp)
    kept = [(a, b, sim) for a, b, sim in similar if a not in mapping and b not in mapping]
    links = [link for a, b, sim in kept for link in expand_link(a, b, "SIMILAR_TO", round(sim, 4), stamp)]
    curation += [{"op": "link", "src": a, "dst": b, "rel": "SIMILAR_TO", "weight": round(s, 4), "ts": stamp}
                 for a, b, s in kept]
    graph.add_missing_links(links)
    return {"ok": ok, "mapping": mapping, "merged": done, "similar": len(links) // 2, "skipped": skipped,
            "curation": curation}


def apply_to_index(memory: "Memory", prepared: dict[str, Any], done: dict[str, Any]) -> None:
    """Under the write lock, after the graph: merged-away rows go, kept cards get their new text
    and vector."""
    gone, rows, vectors = index_changes(prepared, done)
    memory.index.delete_cards(gone)
    if rows:
        memory.index.upsert_cards(rows, np.stack(vectors))


def index_changes(prepared: dict[str, Any], done: dict[str, Any], *, leave_out: set[str] = frozenset()
                  ) -> tuple[list[str], list[dict[str, Any]], list[np.ndarray]]:
    """The L1 side of the applied merges: the merged-away rows to delete, and the kept cards'
    new rows and vectors (except those in `leave_out`: cards that leave L1 in the same hold)."""
    refresh = [k for k in done["ok"] if k in prepared["vectors"] and k not in leave_out]
    return (list(done["mapping"]), [index_row(prepared["planned"][k]) for k in refresh],
            [prepared["vectors"][k] for k in refresh])


def summed_usage(cards: list[Any]) -> tuple[int, str | None]:
    """A merged card's usage: the summed access_count and the latest last_accessed of the cards
    merged (ISO times in UTC compare as strings)."""
    seen = [c.last_accessed for c in cards if c.last_accessed]
    return sum(c.access_count for c in cards), max(seen) if seen else None


def merge_in_graph(graph: "UpkeepGraph", ok: dict[str, list[str]], planned: dict[str, Card], current: dict[str, Card],
                    mapping: dict[str, str], stamp: str) -> None:
    drops = list(mapping)
    reasons: dict = {}
    edges = graph.card_edges(drops, reasons=reasons)
    graph.upsert_cards([planned[k] for k in ok])
    usage = []
    for keep, ds in ok.items():
        n, seen = summed_usage([current[c] for c in [keep, *ds]])
        usage.append({"id": keep, "access_count": n, "last_accessed": seen})
    graph.set_card_columns(usage, ["access_count", "last_accessed"])
    links = []
    for src, rel, dst, weight, created in edges:
        a, b = mapping.get(src, src), mapping.get(dst, dst)
        if a != b:
            links.append(Link(src=a, dst=b, rel=rel, weight=weight, created_at=created or stamp, reason=reasons.get((src, rel, dst))))
    graph.add_missing_links(links)
    graph.link_to_sessions([
        {"card": k, "session": s.session_id, "turns": s.turn_ids} for k in ok for s in planned[k].sources
    ])
    graph.forward(mapping)  # the dropped ids keep resolving to the kept cards (get, trace, recall)
    graph.remove_cards(drops)
