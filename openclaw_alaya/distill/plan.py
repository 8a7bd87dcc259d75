"""Distillation in two halves, so the slow half never runs under the lock (docs/architecture.md,
"The lock protocol"): `prepare` (distil, build cards, embed: seconds, no lock) and `apply`
(write contexts, graph and index rows: milliseconds, under the write lock)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import (
    Card,
    DistillResult,
    Link,
    Session,
    SourceRef,
    Turn,
    expand_link,
    index_text,
    least_trusted,
    normalise_relation,
    now_iso,
    trust_class,
)
from ..safety.echo import Echoes
from ..store import tombstones
from ..store.raw import RawStore
from ..config import ProvenanceConfig
from .concepts import concept_tags
from .deliberate import distiller_for
from .entity_links import entity_links
from .subagent import SubagentSummary

if TYPE_CHECKING:
    from ..embedding import Embedder
    from ..models import Distiller
    from ..store.ports.graph import CardGraph

_CARD_NAMESPACE = uuid.UUID("6f1c2a4e-6a6f-4c1a-9d55-616c61796121")


def card_id(session_id: str, key: str) -> str:
    """Deterministic: re-distilling the same turns gives the same card ids."""
    return "card-" + str(uuid.uuid5(_CARD_NAMESPACE, session_id + "\x00" + key))


@dataclass
class DistillPlan:
    """One session's distillation, ready to apply if nobody distilled those turns meanwhile."""

    session: Session
    start: int
    cards: list[Card]
    links: list[Link]  # between this session's new cards; TEMPORAL_NEXT is added on apply
    vectors: Any
    summary: str | None = None  # the distiller's one line about the session, if it gave one


def prepare(session: Session, start: int, distiller: "Distiller", embedder: "Embedder | None", max_cards: int,
            policy: "ProvenanceConfig | None" = None) -> DistillPlan:
    """`distiller` for a conversation; a note or a triplet commit has its own (deliberate.py),
    a sub-agent's session one summary card (subagent.py); the turns of runs `policy` gates
    (cron, heartbeat) are left out (docs/provenance.md)."""
    policy = policy or ProvenanceConfig()
    if session.kind == "subagent":
        result = SubagentSummary(policy.subagent_read_tokens).distill(session, start)
    else:
        view, at = distillable(session, start, policy)
        result = distiller_for(session, distiller).distill(view, at) if at < len(view.turns) else DistillResult()
    stamp = now_iso()
    echoes = Echoes([t.content for t in session.turns if t.origin == "untrusted"])
    cards = [_card(session, draft, stamp, echoes) for draft in result.cards[:max_cards]]
    # embedder None: the caller embeds a whole batch at once (pipeline.py)
    vectors = embedder.embed([index_text(card) for card in cards]) if cards and embedder is not None else None
    links = _draft_links(session, result, {c.id for c in cards}, stamp)
    summary = " ".join((result.summary or "").split())[:300] or None
    return DistillPlan(session, start, cards, links, vectors, summary)


def distillable(session: Session, start: int, policy: "ProvenanceConfig") -> tuple[Session, int]:
    """The session without the turns of gated runs, and where its undistilled part now starts."""
    gated = {kind for kind, on in (("cron", policy.distill_cron), ("heartbeat", policy.distill_heartbeat)) if not on}
    gated.add("subagent")  # a sub-agent's result announced to its parent: its summary card has it
    keep = [(t.kind or session.kind) not in gated for t in session.turns]
    if all(keep):
        return session, start
    turns = [t for t, k in zip(session.turns, keep) if k]
    return session.model_copy(update={"turns": turns}), sum(keep[:start])


def _card(session: Session, draft, stamp: str, echoes: Echoes) -> Card:
    """The card a draft describes; its origin the least trusted of the turns it cites, and
    `untrusted` when its text repeats an untrusted turn of the session it does not cite (a
    model's card can say what a stranger said while citing the assistant's answer)."""
    by_id = {t.id: t for t in session.turns}
    cited = [by_id[t] for t in draft.turn_ids if t in by_id]
    origin = least_trusted([t.origin for t in cited])
    if trust_class(origin) == "injectable" and echoes.repeated_in(f"{draft.title}\n{draft.content}"):
        origin = "untrusted"
    return Card(
        id=card_id(session.id, draft.key),
        title=draft.title,
        content=draft.content,
        type=draft.type,
        tags=[*draft.tags, *(t for t in concept_tags(draft.content) if t not in draft.tags)],
        entities=draft.entities,
        importance=draft.importance,
        scope=session.agent_id,
        sources=[SourceRef(session_id=session.id, turn_ids=draft.turn_ids)],
        created_at=stamp,
        updated_at=stamp,
        valid_from=draft.valid_from,
        origin=origin,
        session_kind=next((t.kind for t in cited if t.kind), None) or session.kind,
    )


def _draft_links(session: Session, result: DistillResult, kept: set[str], stamp: str) -> list[Link]:
    links = []
    for draft in result.links:
        src, dst = card_id(session.id, draft.src), card_id(session.id, draft.dst)
        if src in kept and dst in kept and src != dst:
            links += expand_link(src, dst, normalise_relation(draft.rel), draft.weight, stamp, draft.reason)
    return links


def apply(plans: list[DistillPlan], graph: "CardGraph", raw: RawStore) -> tuple[list[DistillPlan], int]:
    """Write the plans whose sessions are still where they were when prepared (L3 contexts,
    then L2). Returns the applied plans (their cards go to L1 next) and the links written."""
    # the whole batch goes out in a few statements (one per kind, not per session) and one
    # batched sync of the context files: a backlog applies at hundreds of turns a second
    cards, links, sessions = [], [], []
    stamp = now_iso()
    known = graph.get_sessions([plan.session.id for plan in plans])
    # the others were distilled by another process meanwhile
    applied = [plan for plan in plans if ((known.get(plan.session.id) or {}).get("distilled_turns") or 0) == plan.start]
    if not applied:
        return applied, 0
    applied = _without_forgotten(applied, raw)
    for plan in applied:
        current = known.get(plan.session.id) or {}
        cards += plan.cards
        chain = ([current["last_card"]] if current.get("last_card") else []) + [c.id for c in plan.cards]
        # a sub-agent's summary card is re-made under its own id: no edge from it to itself
        links += [link for a, b in zip(chain, chain[1:]) if a != b for link in expand_link(a, b, "TEMPORAL_NEXT", 1.0, stamp)]
        links += plan.links
        # the session's summary line: the distiller's, else (none yet) its title or first card's title
        summary = plan.summary or current.get("summary") or plan.session.title or next(
            (c.title for c in plan.cards if trust_class(c.origin) == "injectable"), None)
        sessions.append({**current, "distilled_turns": len(plan.session.turns), "last_card": chain[-1] if chain else None,
                         "summary": summary})
    contexts, extracted = provenance(cards, applied)
    raw.write_contexts(contexts)  # L3 first, one batched sync
    graph.upsert_cards(cards)
    graph.link_to_sessions(extracted)
    graph.add_links(links)
    graph.link_entities([link for card in cards for link in entity_links(card)])  # issue 35
    graph.upsert_sessions(sessions)
    return applied, len(links)


def _without_forgotten(plans: list[DistillPlan], raw: RawStore) -> list[DistillPlan]:
    """A card forgotten on purpose is not derived again (re-sent turns, a rebuild): its id is
    deterministic, so its tombstone names it (store/tombstones.py)."""
    gone = tombstones.forgotten(raw, "card")
    if not gone:
        return plans
    kept = []
    for plan in plans:
        keep = [c.id not in gone for c in plan.cards]
        cards = [c for c, k in zip(plan.cards, keep) if k]
        links = [link for link in plan.links if link.src not in gone and link.dst not in gone]
        vectors = plan.vectors[keep] if plan.vectors is not None and len(plan.vectors) == len(keep) else plan.vectors
        kept.append(DistillPlan(plan.session, plan.start, cards, links, vectors, plan.summary))
    return kept


def provenance(cards: list[Card], plans: list[DistillPlan]) -> tuple[list[tuple[str, str, list[Turn]]], list[dict[str, Any]]]:
    """The L3 context entries and EXTRACTED_FROM rows of the cards' sources in these plans'
    sessions: a card that cards of other sessions were merged into (pipeline.py) cites each."""
    turns = {plan.session.id: {turn.id: turn for turn in plan.session.turns} for plan in plans}
    contexts, extracted = [], []
    for card in cards:
        for source in card.sources:
            by_id = turns.get(source.session_id)
            if by_id is not None:
                contexts.append((card.id, source.session_id, [by_id[t] for t in source.turn_ids if t in by_id]))
                extracted.append({"card": card.id, "session": source.session_id, "turns": source.turn_ids})
    return contexts, extracted
