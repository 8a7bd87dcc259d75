"""The batch half of distillation (engine.distill): embed, resolve, apply.

For a batch of prepared sessions (`distilling.prepare`, no vectors yet):

1. embed every new card, and every custom relation name not yet in the index, in one batched
   call (no lock): an `openai` embedder sends ⌈cards / batch_size⌉ requests, not one per
   session. If the endpoint is down, the cards are kept anyway: they get an all-zero vector
   (full-text search still finds them; vector search cannot) and are listed in
   `state/pending_embeddings.json` for the `embed-pending` introspect step;
2. under the read lock, find candidate stored cards for each new card: one vector search for
   the whole batch (a matrix product over the in-memory copy), full-text search for the cards
   that state a fact or have no vector;
3. with no lock, let the resolver decide: add, merge into a stored card, or contradict one
   (resolver.py; a configured LLM judges the pairs the rules flag);
4. under the write lock, recheck the targets (still there, still valid), write L3 contexts
   and L2 (`distilling.apply`), apply merges (a statement per kind for the batch) and
   contradictions, then L1 (one commit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..models import (
    CORE_RELATIONS,
    Card,
    Link,
    expand_link,
    index_row,
    index_text,
    now_iso,
    relation_description,
)
from ..providers import embed_or_pending, read_pending, write_pending
from .plan import DistillPlan, apply, provenance
from .resolver import Decision, Resolver, merged_card, states_fact

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import DistillReport

CANDIDATES = 5  # stored cards fetched per new card from each of vector and full-text search


# --- the batch ------------------------------------------------------------------------------


def apply_batch(memory: "Memory", plans: list[DistillPlan], report: "DistillReport", distiller: Any = None) -> None:
    cards = [card for plan in plans for card in plan.cards]
    known_relations = _relation_names(memory)
    # relation names without an embedding: custom ones first used here, and the core ones when
    # init left them to the first batch (a remote embedder)
    custom = sorted(({link.rel for plan in plans for link in plan.links} | set(CORE_RELATIONS)) - known_relations)
    texts = [index_text(card) for card in cards] + [relation_description(name) for name in custom]
    vectors, embedded = embed_or_pending(memory.embedder, texts)
    card_vectors = {card.id: vectors[i] for i, card in enumerate(cards)}
    relation_rows = [{"name": n, "description": relation_description(n)} for n in custom] if embedded else []
    relation_vectors = vectors[len(cards):]

    candidates = find_candidates(memory, cards, card_vectors) if cards else {}
    judge = getattr(distiller, "judge", None) if memory.config.distill.llm_resolve else None
    decisions = Resolver(judge=judge).decide(cards, candidates)

    names = ", ".join(p.session.id for p in plans[:3]) + (" …" if len(plans) > 3 else "")
    with memory.writing(f"distill {names}") as graph:
        with graph:
            applied, links, merged, contradicted = _write_graph(memory, graph, plans, decisions)
        rows = [card for plan in applied for card in plan.cards]
        # a merged card's index text gains the new tags and entities; its vector stays
        kept = memory.index.vectors_for([c.id for c in merged])
        indexed = rows + [c for c in merged if c.id in kept]
        if indexed:  # one commit for the batch
            vectors_by_id = {**card_vectors, **kept}
            memory.index.upsert_cards([index_row(c) for c in indexed], np.stack([vectors_by_id[c.id] for c in indexed]))
        if relation_rows:
            memory.index.upsert_relations(relation_rows, relation_vectors)
        if not embedded and rows:
            write_pending(memory, read_pending(memory) + [c.id for c in rows])
    report.sessions += len(applied)
    report.cards += len(rows)
    report.links += links
    report.merged += len(merged)
    report.contradicted += contradicted
    report.pending_embedding += 0 if embedded else len(rows)


def find_candidates(memory: "Memory", cards: list[Card], vectors: dict[str, np.ndarray]) -> dict[str, list[Card]]:
    """Stored cards of each new card's scope (the resolver compares no others) near it, under
    the read lock: by meaning for the whole batch in one matrix product; by words too where
    meaning is not enough: the card has no vector (embedder down), or it states a fact that a
    stored card may contradict in other words (resolver.states_fact). A full-text query over
    rows not yet folded into the FTS index costs tens of ms, so it is kept to those cards."""
    ids: dict[str, list[str]] = {card.id: [] for card in cards}
    with memory.reading("distill (comparing with stored cards)") as graph:
        index = memory.index
        if index.card_count() == 0:
            return {}
        embedded = [card for card in cards if card.id in vectors and np.any(vectors[card.id])]
        if embedded:
            found = index.search_many(np.stack([vectors[c.id] for c in embedded]), CANDIDATES, [c.scope for c in embedded])
            for card, hits in zip(embedded, found):
                ids[card.id] += [cid for cid, _ in hits]
        with_vector = {card.id for card in embedded}
        for card in cards:
            if card.id not in with_vector or states_fact(card):
                query = " ".join(f"{card.title} {card.content}".split())[:400]
                ids[card.id] += [cid for cid, _ in index.text_search(query, CANDIDATES, [card.scope])]
        ids = {cid: list(dict.fromkeys(c for c in found if c != cid)) for cid, found in ids.items()}
        stored = graph.get_cards({cid for found in ids.values() for cid in found})
    return {cid: [stored[c] for c in found if c in stored] for cid, found in ids.items()}


def _write_graph(memory: "Memory", graph: Any, plans: list[DistillPlan], decisions: dict[str, Decision]):
    """Under the write lock: recheck targets, apply the plans, then merges and contradictions."""
    stamp = now_iso()
    new_ids = {card.id: card for plan in plans for card in plan.cards}
    stored_targets = graph.get_cards({d.target for d in decisions.values() if d.target and d.target not in new_ids})
    merges: dict[str, Card] = {}  # stored target id → merged card
    in_batch: dict[str, str] = {}  # merged-away new card id → the new card it went into
    contradictions: list[tuple[Decision, Card]] = []
    for plan in plans:
        for card in plan.cards:
            decision = decisions.get(card.id) or Decision(card.id)
            target = decision.target
            if decision.action == "merge" and target in new_ids:
                in_batch[card.id] = target
            elif decision.action == "merge" and target in stored_targets:
                merges[target] = merged_card(merges.get(target) or stored_targets[target], [card], stamp)
                in_batch[card.id] = target
            elif decision.action == "contradict" and (target in new_ids or (target in stored_targets and stored_targets[target].valid_until is None)):
                contradictions.append((decision, card))
    # in-batch merges: fold the sources into the earlier new card
    replaced: dict[str, Card] = {}
    for gone, into in in_batch.items():
        if into in new_ids:
            replaced[into] = merged_card(replaced.get(into) or new_ids[into], [new_ids[gone]], stamp)
    kept_plans = []
    for plan in plans:
        cards = [replaced.get(c.id, c) for c in plan.cards if c.id not in in_batch]
        links = []
        for link in plan.links:
            src, dst = in_batch.get(link.src, link.src), in_batch.get(link.dst, link.dst)
            if src != dst:
                links.append(link.model_copy(update={"src": src, "dst": dst}))
        kept_plans.append(DistillPlan(plan.session, plan.start, cards, links, plan.vectors, plan.summary))
    applied, written = apply(kept_plans, graph, memory.raw)
    applied_sessions = {p.session.id for p in applied}
    contradictions = [(d, card) for d, card in contradictions if card.sources and card.sources[0].session_id in applied_sessions]
    _log_curation(memory, contradictions, in_batch, new_ids, applied_sessions, stamp)

    merged_cards = _write_merges(memory, graph, list(merges.values()), applied)
    links: list[Link] = []
    for decision, card in contradictions:
        graph.supersede(decision.target, card.valid_from or stamp, stamp)
        links += expand_link(card.id, decision.target, "CONTRADICTS", 1.0, stamp)
    if links:
        graph.add_links(links)
    return applied, written + len(links), merged_cards, len(contradictions)


def _write_merges(memory: "Memory", graph: Any, merged: list[Card], applied: list[DistillPlan]) -> list[Card]:
    """Stored cards that gained sources from the applied sessions: their contexts (L3, one
    batched sync), then the cards and their EXTRACTED_FROM edges (L2), a statement per kind for
    the whole batch (a quarter of a backlog's cards can be merges). Returns the cards written."""
    contexts, extracted = provenance(merged, applied)
    fresh = {row["card"] for row in extracted}
    cards = [card for card in merged if card.id in fresh]
    if cards:
        memory.raw.write_contexts(contexts)
        graph.update_provenance(cards)
        graph.link_to_sessions(extracted)
    return cards


def _log_curation(memory, contradictions, in_batch, new_ids, applied_sessions, stamp) -> None:
    """L3 first: what the resolver did goes to `raw/curation.jsonl`, which `alaya rebuild`
    replays after re-distilling (merge: keep/drop; CONTRADICTS link; supersede: valid_until).
    `contradictions`: those of the applied sessions only."""
    from ..store.raw import CURATION_LOG

    records: list[dict[str, Any]] = []
    for gone, into in in_batch.items():
        card = new_ids[gone]
        if card.sources and card.sources[0].session_id in applied_sessions:
            records.append({"op": "merge", "keep": into, "drop": gone, "ts": stamp, "by": "resolver"})
    for decision, card in contradictions:
        records.append({"op": "link", "src": card.id, "dst": decision.target, "rel": "CONTRADICTS", "weight": 1.0,
                        "ts": stamp, "by": "resolver"})
        records.append({"op": "supersede", "card": decision.target, "valid_until": card.valid_from or stamp,
                        "by_card": card.id, "ts": stamp})
    if records:
        memory.raw.append_log(CURATION_LOG, records)


def _relation_names(memory: "Memory") -> set[str]:
    try:
        with memory.reading("distill (relation names)"):
            return set(memory.index.relation_vectors())
    except Exception:  # noqa: BLE001 - at worst a name is embedded twice
        return set()
