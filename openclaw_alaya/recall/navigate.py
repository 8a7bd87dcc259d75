"""Recall as navigation (docs/architecture.md, "The recall path"): find entry cards by words and
meaning, walk the chosen relations, and tell the caller how far each card is from what was
asked (`h_distance`) and which relations lead further (`explorable`).

Scoring, in short:
- entry cards: reciprocal-rank fusion of full-text (BM25), vector and entity-name matches,
  normalised so the best possible entry scores 1;
- session context (`context.py`): a plain query's entries also gain `context_share` of the
  score of the best entry next to them in their session, and those neighbours that are no entry
  join at that share, reached over `TEMPORAL_NEXT`, as do the cards up to `context_reach` away
  at × `context_further` more per card (all rescaled so the best possible is 1);
- a card reached over an edge inherits its parent's score × `hop_decay` × edge weight ×
  how well the relation fits the question: with `relations` named, 1 for a named one, 0.9 for
  a synonym of the curated table (`synonyms.py`, issue 35: LED_TO for CAUSED_BY, followed into
  the card only) and, for a relation whose name embeds within `rel_similarity_threshold` of a
  named one's (also followed), that similarity if higher (`rel_similarity`); else its
  embedding's cosine to the query;
- the final score weighs that relevance by the card's recency, importance, use (the recalls not
  folded yet included) and tag-hierarchy match, a bounded factor (`weights.py`, issue 31);
- `h_distance` = weighted mean of (1 − semantic closeness), hops taken / depth, and
  (1 − relation fit); 0 is "exactly what was asked", 1 is "far away".
No model is called: the only embedding is the query's own.

Time (`timing.py`, `periods.py`): `since`/`until` keep only the cards dated inside that range,
as entries and along the walk; a time phrase or date in the query ("last week", 上周, "around
Nov 27") ranks the cards dated outside its period lower without dropping them (people say "last
week" loosely), and a question asking when favours the cards that state a date.

Intent (`intent.py`): the kind of question ("which package manager?", "what did we decide",
"how do I …", "when", "who", "tell me about Peter", "what does Peter prefer?", and their Chinese
forms) scales each card's score by how well its type, kind and entities answer that kind, as a
bounded factor applied with the other penalties, so it reorders cards about the topic and never
drops one.

A from_node given by the id of a card since merged into another (introspect's consolidate)
navigates from the card it went into; `RecallResult.forwarded` maps the old id to it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from pydantic import BaseModel, Field

from ..config import RecallConfig
from ..distill.concepts import search_phrase
from ..embedding import Embedder
from ..errors import AlayaError, NotFoundError
from ..models import Card, Explorable, RecallNode, RecallResult, now_iso, source_of
from ..store.ports.graph import GraphReads
from ..store.ports.index import CardIndex
from ..text import estimate_tokens
from .compact import Returned
from .causes import stated_causes
from .context import SESSION_NEXT, session_neighbours
from .derived import widen
from .hierarchy import below
from .history import asks_history, fill_replaced
from .intent import CAUSE, IntentBoost, situation, without_names
from .periods import aware
from .synonyms import Way, following
from .decisions import DECISION, session_decisions
from .tags import asked_in, within
from .timing import TimeSignal
from .usage_now import NONE, Unfolded
from .weights import Weigher

SHARED_SCOPE = "shared"
UNKNOWN_ORIGIN = "unknown"  # what `origins` calls a card stored before provenance was recorded
_SUPERSEDED_PENALTY = 0.5


class RecallRequest(BaseModel):
    query: str | None = None
    concepts: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    depth: int | None = Field(None, ge=0, le=5)
    from_nodes: list[str] = Field(default_factory=list)
    budget: int | None = Field(None, ge=1)
    scope: str | None = None
    top_k: int | None = Field(None, ge=1)
    since: datetime | None = None  # only cards dated at or after this…
    until: datetime | None = None  # …and before this
    now: datetime | None = None  # what "last week" in the query is counted from (default: the current time)
    origins: list[str] | None = None  # only cards of these origins (models.ORIGINS, "unknown": stored before provenance)
    tags: list[str] = Field(default_factory=list)  # only cards filed under one of these tags or their children (tags.py)

    @property
    def text(self) -> str:
        """The words the caller is looking for: the query, else the concepts."""
        return (self.query or " ".join(self.concepts)).strip()


@dataclass
class _Hit:
    card_id: str
    score: float
    hops: int = 0
    rel: str | None = None
    rel_fit: float = 1.0
    parents: list[str] = field(default_factory=list)


class Recaller:
    def __init__(self, config: RecallConfig, embedder: Embedder, usage: Unfolded = NONE) -> None:
        self.config = config
        self.embedder = embedder
        self.usage = usage  # the recalls not folded into the cards yet (usage_now.py)

    def run(self, request: RecallRequest, graph: GraphReads, index: CardIndex) -> RecallResult:
        # a from_node merged into another card since (introspect's consolidate): navigate from
        # the card it went into, and say so in `forwarded`
        forwarded = graph.resolve_ids(request.from_nodes) if request.from_nodes else {}
        if forwarded:
            current = dict.fromkeys(forwarded.get(n, n) for n in request.from_nodes)
            request = request.model_copy(update={"from_nodes": list(current)})
        scopes = [request.scope, SHARED_SCOPE] if request.scope else None
        when = TimeSignal(request.text, request.since, request.until, request.now, graph, self.config)
        text = when.text
        query_vec = self._query_vector(text) if text else None  # None: full-text and graph only
        depth = self._depth(request)
        self._vectors: dict[str, np.ndarray] = {}  # card vectors the full-text searches returned
        self._query_sims: dict[str, float] = {}  # cosines to the query the vector search computed

        if request.from_nodes:
            known = graph.get_cards(request.from_nodes)
            unknown = [n for n in request.from_nodes if n not in known]
            if unknown:
                raise NotFoundError(f"no card {unknown[0]!r} (from_nodes)")
            entries = {n: _Hit(n, 1.0) for n in request.from_nodes}
            hits = self._expand(entries, graph, request, max(depth, 1), query_vec, index, when)
            for n in request.from_nodes:
                hits.pop(n, None)  # navigation returns where you can go, not where you are
        else:
            entries = when.keep(self._entries(request, text, query_vec, graph, index, scopes))
            if depth:
                hits = self._expand(entries, graph, request, depth, query_vec, index, when)
            else:
                hits = when.keep(self._with_context(entries, graph))
        boost = IntentBoost.of(request.query, self.config.intent)
        if boost and boost.intent and boost.intent.states is CAUSE and not depth:
            hits = when.keep(_joined(hits, stated_causes(graph, _scores(hits), self.config.context_parents), "CAUSED_BY"))
        elif boost and boost.intent and DECISION in boost.intent.answers and not depth and request.query:
            hits = when.keep(_joined(hits, session_decisions(graph, _scores(hits), request.query), SESSION_NEXT))
        when.rank(hits)

        ranked = sorted(hits.values(), key=_order)
        reference = self._reference_vector(query_vec, request, index)
        closeness = self._closeness(reference, [h.card_id for h in ranked], index)
        cards = _LazyCards(graph, [h.card_id for h in ranked], (request.top_k or self.config.top_k) + 4)
        weigh = Weigher(self.config.weights, aware(request.now), self.usage, asked_in(request.query, request.tags))
        final = _final_order(ranked, cards, request.scope, request.origins, boost, weigh, request.tags)
        nodes = self._take(final, closeness, depth, request)
        if request.from_nodes:  # navigation: the nearest place first (the seed's contract)
            nodes.sort(key=lambda n: (n.h_distance, -n.score))
        self._reasons(nodes, hits, graph)
        if asks_history(request.query):
            fill_replaced(nodes, graph)
        explorable = self._explorable(nodes, graph, reference, index)
        avg = round(sum(n.h_distance for n in nodes) / len(nodes), 4) if nodes else 0.0
        return RecallResult(nodes=nodes, explorable=explorable, h_distance_avg=avg, forwarded=forwarded)

    def _query_vector(self, text: str) -> np.ndarray | None:
        """The question's vector, with the people it names weighing `names_in_vector` (both
        texts embedded in one call: one request to a remote embedder)."""
        rest = without_names(text)
        share = self.config.names_in_vector
        if rest is None or share >= 1:
            return self._embed(text)
        vectors = self._embed_all([text, rest])
        if vectors is None:
            return None
        whole, other = vectors
        mixed = share * whole + (1 - share) * other
        norm = float(np.linalg.norm(mixed))
        return mixed / norm if norm else whole

    def _embed(self, text: str) -> np.ndarray | None:
        """One text's vector, or None when the embedder is unavailable (`_embed_all`)."""
        vectors = self._embed_all([text])
        return vectors[0] if vectors is not None else None

    def _embed_all(self, texts: list[str]) -> list[np.ndarray] | None:
        """The texts' vectors in one call, or None when the embedder is unavailable (a remote
        one down): recall then runs on full-text search and the graph alone
        (docs/architecture.md, "Providers")."""
        try:
            return list(self.embedder.embed(texts))
        except AlayaError:
            return None

    # --- entry points ---------------------------------------------------------------------

    def _depth(self, request: RecallRequest) -> int:
        if request.depth is not None:
            return min(request.depth, self.config.max_depth)
        structured = bool(request.relations or request.concepts or request.from_nodes)
        return self.config.default_depth if structured else 0

    def _entries(self, request, text, query_vec, graph, index, scopes) -> dict[str, _Hit]:
        """Fuse every ranked list (RRF) into one entry score per card."""
        n = self.config.candidates
        lists: list[tuple[float, list[str]]] = []
        phrases = [text] + [c for c in request.concepts if c.strip() and c.strip() != text]
        for phrase in phrases:
            want = self._vectors if query_vec is not None else None
            words = widen(phrase) if self.config.derived_words else phrase
            lists.append((self.config.fts_weight, [cid for cid, _ in index.text_search(words, n, scopes, want)]))
            vec = query_vec if phrase == text else (self._embed(phrase) if query_vec is not None else None)
            if vec is not None and float(np.abs(vec).sum()) > 0:
                matches = index.vector_search(vec, n, scopes)
                if phrase == text:
                    self._query_sims.update(matches)
                floor = self.config.min_vector_similarity
                lists.append((self.config.vector_weight, [cid for cid, sim in matches if sim >= floor]))
        if request.concepts:
            lists.append((self.config.fts_weight, graph.card_ids_mentioning(request.concepts)[:n]))
            under = below(graph, request.concepts)  # PgBouncer for "connection pooler" (issue 35)
            if under:
                lists.append((self.config.fts_weight / 2, graph.card_ids_mentioning(under)[:n]))
        # a message telling of one's situation: the cards filed under its concepts and those
        # stating a cause, goal, value or state (distill/concepts.py), a bridge where no word is shared
        if self.config.concept_weight and text and situation(text):
            phrase = search_phrase(text)
            lists.append((self.config.concept_weight, [cid for cid, _ in index.text_search(phrase, n, scopes)]))
        k = self.config.rrf_k
        best = sum(weight for weight, ranked in lists if ranked) / (k + 1) or 1.0
        fused: dict[str, float] = {}
        for weight, ranked in lists:
            for rank, cid in enumerate(ranked):
                fused[cid] = fused.get(cid, 0.0) + weight / (k + rank + 1)
        return {cid: _Hit(cid, score / best) for cid, score in fused.items()}

    def _with_context(self, entries: dict[str, _Hit], graph: GraphReads) -> dict[str, _Hit]:
        """The entries, each raised by the best of its neighbours in its session, and the
        neighbours of the best entries that were no entry themselves (`context.py`)."""
        scores = {cid: hit.score for cid, hit in entries.items()}
        c = self.config
        near = session_neighbours(graph, scores, c.context_parents, c.context_share, c.context_reach, c.context_further)
        hits = dict(entries)
        for cid, (score, parent) in near.items():
            hit = hits.get(cid)
            if hit is not None:
                hit.score += score
            else:
                hits[cid] = _Hit(cid, score, 1, SESSION_NEXT, 1.0, [parent])
        scale = 1 + self.config.context_share  # the best possible card still scores 1
        for hit in hits.values():
            hit.score /= scale
        return hits

    # --- graph walk -----------------------------------------------------------------------

    def _expand(self, entries, graph, request, depth, query_vec, index, when: TimeSignal) -> dict[str, _Hit]:
        """Breadth-first along the chosen relations from the best entries, up to `depth` hops."""
        hits = dict(entries)
        wanted = request.relations or None
        follow = self._following(request.relations, index) if wanted else {}
        rel_vectors = index.relation_vectors() if query_vec is not None else {}
        frontier = sorted(entries.values(), key=lambda h: -h.score)[: self.config.top_k]
        for hop in range(1, depth + 1):
            ids = [h.card_id for h in frontier]
            if wanted:
                edges = graph.directed_neighbours(ids, list(follow))
            else:
                edges = [(*edge, True) for edge in graph.neighbours(ids, None)]
            by_parent = {h.card_id: h for h in frontier}
            reached: dict[str, _Hit] = {}
            for src, rel, dst, weight, outgoing in edges:
                parent = by_parent[src]
                if wanted:  # a named relation fits fully, a synonym or similar one as closely as its name
                    fit, way = follow[rel]
                    if way is not None and way != outgoing:
                        continue  # LED_TO out of a card leads to its effects, not its causes
                else:
                    fit = _relation_fit(rel, query_vec, rel_vectors, unknown=0.5)
                score = parent.score * self.config.hop_decay * weight * (0.5 + 0.5 * fit)
                current = reached.get(dst) or hits.get(dst)
                if current is None or score > current.score:  # the best path to a card wins
                    reached[dst] = _Hit(dst, score, hop, rel, fit, [src])
            reached = when.keep(reached)
            reached = dict(sorted(reached.items(), key=lambda kv: -kv[1].score)[: self.config.expand_per_hop])
            hits.update(reached)
            frontier = list(reached.values())
            if not frontier:
                break
        return hits

    def _following(self, named: list[str], index) -> dict[str, tuple[float, Way]]:
        """Relation name → (fit, way) for a walk along `named`: the curated synonyms
        (`synonyms.py`, no model needed), then the names the embedder finds close, which raise
        a synonym's fit where closer and are followed both ways when not listed."""
        follow = following(named, self.config.relation_aliases)
        for name, sim in self._similar_relations(named, index).items():
            fit, way = follow.get(name, (0.0, None))
            follow[name] = (max(fit, sim), way)
        return follow

    def _similar_relations(self, named: list[str], index) -> dict[str, float]:
        """The other relation names in the index whose words embed within
        `rel_similarity_threshold` of a named one's (as introspect compares names for aliases),
        with that similarity; none when the embedder is unavailable."""
        others = sorted(set(index.relation_vectors()) - set(named) - {"EXTRACTED_FROM"})
        if not others:
            return {}
        try:
            vectors = self.embedder.embed([n.replace("_", " ").lower() for n in [*named, *others]])
        except AlayaError:
            return {}
        sims = np.asarray(vectors[len(named):]) @ np.asarray(vectors[: len(named)]).T
        best = sims.max(axis=1)
        floor = self.config.rel_similarity_threshold
        return {name: round(min(1.0, float(s)), 4) for name, s in zip(others, best) if s >= floor}

    # --- distances ------------------------------------------------------------------------

    def _reference_vector(self, query_vec, request, index) -> np.ndarray | None:
        """What closeness is measured against: the query, else where the caller stands."""
        if query_vec is not None:
            return query_vec
        if request.from_nodes:
            vectors = list(index.vectors_for(request.from_nodes).values())
            if vectors:
                mean = np.mean(vectors, axis=0)
                norm = float(np.linalg.norm(mean))
                return mean / norm if norm else None
        return None

    def _closeness(self, reference, ids: list[str], index) -> dict[str, float]:
        """Cosine to the reference, rescaled so the closest candidate is 1 (hash vectors are
        sparse and absolute cosines small; the relative gap is what tells near from far)."""
        if reference is None or not ids:
            return {}
        wanted = ids[: self.config.candidates]
        searched = self._query_sims  # filled only when the reference is the query's vector
        sims = {cid: searched[cid] for cid in wanted if cid in searched}
        known = self._vectors
        vectors = {cid: known[cid] for cid in wanted if cid in known and cid not in sims}
        missing = [cid for cid in wanted if cid not in sims and cid not in known]
        if missing:
            vectors.update(index.vectors_for(missing))
        sims.update((cid, float(np.dot(vec, reference))) for cid, vec in vectors.items())
        sims = {cid: max(0.0, s) for cid, s in sims.items()}
        top = max(sims.values(), default=0.0)
        return {cid: (s / top if top else 0.0) for cid, s in sims.items()}

    def _h_distance(self, hit: _Hit, closeness: float | None, depth: int) -> float:
        w = self.config.h_weights
        semantic_gap = 1.0 - (closeness if closeness is not None else hit.score)
        hop_part = hit.hops / max(depth, 1)
        rel_gap = 1.0 - hit.rel_fit if hit.hops else 0.0
        total = w.semantic + w.hops + w.relation or 1.0
        return round((w.semantic * semantic_gap + w.hops * hop_part + w.relation * rel_gap) / total, 4)

    # --- output ---------------------------------------------------------------------------

    def _take(self, ranked: Iterator[tuple[_Hit, Card]], closeness, depth, request) -> list[RecallNode]:
        """Best first, until top_k cards or the token budget is used up. A card whose source
        turns are all cited by better-ranked cards adds nothing new and is skipped, unless one
        of those returned a reply only as its opening (then it gives the rest); the lines of a
        card that better-ranked ones already returned are left out (`compact.py`)."""
        limit = request.top_k or (self.config.candidates if request.budget else self.config.top_k)
        nodes: list[RecallNode] = []
        cited: set[tuple[str, str]] = set()
        returned = Returned()
        used = 0
        now = now_iso()
        for hit, card in ranked:
            if len(nodes) >= limit:
                break
            turns = {(s.session_id, t) for s in card.sources for t in s.turn_ids}
            if turns and turns <= cited:
                # what it says was returned, unless a reply was returned only as its opening
                content = returned.continued(card.content) if turns & returned.cut_turns else None
                if content is None:
                    continue
            else:
                # a card sharing no turn with earlier ones repeats none of their lines
                content = returned.without_repeats(card.content) if turns & cited else card.content
            cost = estimate_tokens(card.title) + estimate_tokens(content)
            if request.budget is not None and used + cost > request.budget:
                if nodes:
                    break
                content = _truncate_to(content, request.budget - estimate_tokens(card.title))
                cost = estimate_tokens(card.title) + estimate_tokens(content)
                if cost > request.budget:
                    break
            used += cost
            cited |= turns
            returned.record(content, turns)
            nodes.append(
                RecallNode(
                    card_id=card.id,
                    title=card.title,
                    content=content,
                    score=round(hit.score, 4),
                    h_distance=self._h_distance(hit, closeness.get(card.id), depth),
                    matched_rel=hit.rel,
                    rel_similarity=round(hit.rel_fit if hit.hops else 1.0, 4),
                    type=card.type,
                    tags=card.tags,
                    tier=card.tier,
                    sources=card.sources,
                    valid_until=card.valid_until,
                    superseded=bool(card.valid_until) and card.valid_until <= now,
                    origin=card.origin,
                    session_kind=card.session_kind,
                    entities=card.entities,
                    kind=card.kind,
                    confidence=card.confidence,
                    source=source_of(card.sources),
                    timestamp=card.occurred,
                )
            )
        return nodes

    def _reasons(self, nodes: list[RecallNode], hits: dict[str, _Hit], graph: GraphReads) -> None:
        """`matched_reason`: the reason recorded on the edge each walked-to card was reached by."""
        pairs = {n.card_id: (hits[n.card_id].parents[0], n.matched_rel, n.card_id)
                 for n in nodes if n.matched_rel and n.card_id in hits and hits[n.card_id].parents}
        found = graph.edge_reasons(list(pairs.values())) if pairs else {}
        for node in nodes:
            if node.card_id in pairs:
                node.matched_reason = found.get(pairs[node.card_id])

    def _explorable(self, nodes, graph, reference, index) -> list[Explorable]:
        """Relations that lead from the returned cards to cards not yet returned."""
        counts = graph.fanout([n.card_id for n in nodes])
        rel_vectors = index.relation_vectors() if reference is not None and counts else {}
        found = [
            Explorable(rel=rel, count=count, rel_sim_to_query=round(_relation_fit(rel, reference, rel_vectors), 4))
            for rel, count in counts.items()
        ]
        return sorted(found, key=lambda e: (-e.rel_sim_to_query, -e.count, e.rel))


def _scores(hits: dict[str, _Hit]) -> dict[str, float]:
    return {cid: hit.score for cid, hit in hits.items()}


def _joined(hits: dict[str, _Hit], found: dict[str, tuple[float, str]], rel: str) -> dict[str, _Hit]:
    """The hits and the cards `found` for them (card → (score, the hit it joins through): a
    why question's causes, a decision question's decision), each keeping the better score."""
    out = dict(hits)
    for cid, (score, parent) in found.items():
        if cid not in hits or score > hits[cid].score:
            out[cid] = _Hit(cid, score, 1, rel, 1.0, [parent])
    return out


def _order(hit: _Hit) -> tuple[float, int, str]:
    return (-hit.score, hit.hops, hit.card_id)


def _final_order(ranked: list[_Hit], cards: "_LazyCards", scope: str | None,
                 origins: list[str] | None = None, boost: IntentBoost | None = None,
                 weigh: Weigher | None = None, tags: list[str] | None = None) -> Iterator[tuple[_Hit, Card]]:
    """The hits best first once cards out of scope, outside the tags asked for or gone are
    dropped, superseded ones penalised and the others scaled for the question's intent
    (`intent.py`: the cards that answer it keep their score, the rest lose a bounded share) and
    weighed by time, importance, use and tags (`weights.py`), reading cards only as far down
    the list as that order needs: each of these only lowers a score, so a checked hit is final
    as soon as it beats the next unchecked one's score as it stands (at 100k cards, checking
    every candidate first was a third of a recall)."""
    checked: list[tuple[tuple[float, int, str], _Hit, Card]] = []
    for hit in ranked:
        while checked and checked[0][0] <= _order(hit):
            yield heapq.heappop(checked)[1:]
        card = cards.get(hit.card_id)
        if card is None or not _in_scope(card, scope) or (origins is not None and (card.origin or UNKNOWN_ORIGIN) not in origins):
            continue
        if tags and not any(within(card.tags, t) for t in tags):
            continue
        if card.valid_until:
            hit.score *= _SUPERSEDED_PENALTY
        if boost:
            hit.score *= boost.factor(card)
        if weigh:
            hit.score *= weigh.factor(card)
        heapq.heappush(checked, (_order(hit), hit, card))
    while checked:
        yield heapq.heappop(checked)[1:]


class _LazyCards:
    """The ranked cards, read from the graph a chunk at a time as the ranking walks down."""

    def __init__(self, graph: GraphReads, ranked: list[str], chunk: int) -> None:
        self.graph, self.ranked, self.chunk = graph, ranked, max(chunk, 1)
        self.cards: dict[str, Card] = {}
        self.fetched = 0

    def get(self, card_id: str) -> Card | None:
        """The card, or None when the graph has no such card (an index row left behind)."""
        while card_id not in self.cards and self.fetched < len(self.ranked):
            more = self.ranked[self.fetched:self.fetched + self.chunk]
            self.fetched += len(more)
            self.chunk *= 2
            self.cards.update(self.graph.get_cards(more))
        return self.cards.get(card_id)


def _relation_fit(rel: str, query_vec, rel_vectors: dict[str, np.ndarray], unknown: float = 0.0) -> float:
    """Cosine of the relation's embedding to the query; `unknown` when there is no query."""
    vec = rel_vectors.get(rel)
    if query_vec is None:
        return unknown
    if vec is None:
        return 0.0
    return max(0.0, float(np.dot(vec, query_vec)))


def _in_scope(card: Card, scope: str | None) -> bool:
    return scope is None or card.scope in (scope, SHARED_SCOPE)


def _truncate_to(text: str, budget: int) -> str:
    """Cut text to roughly `budget` tokens, on a word boundary when there is one."""
    if budget <= 0:
        return ""
    while text and estimate_tokens(text + "…") > budget:
        cut = text[: max(1, int(len(text) * 0.8))]
        text = cut.rsplit(" ", 1)[0] if " " in cut[-40:] else cut
    return text + "…" if text else ""
