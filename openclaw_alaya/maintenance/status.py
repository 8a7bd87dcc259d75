"""`alaya status`, assembled in one place (seed §4.9): counts per layer, sessions waiting to be
distilled, the providers and what they spent, cards per type and tier, links per relation, the
oldest and newest session, a temperature histogram, sizes on disk, the access log not yet
folded in, how many secrets were redacted, and the memory's health in one line (metrics.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import redact
from ..providers import read_pending, read_usage
from . import access, metrics
from .temperature import histogram

if TYPE_CHECKING:
    from ..memory import Memory


def status(memory: "Memory") -> dict[str, Any]:
    memory.dirs.require()
    with memory.reading("status") as graph:
        counts = graph.counts()
        pending = sum(1 for s in graph.sessions() if (s["distilled_turns"] or 0) < (s["turn_count"] or 0))
        indexed = memory.index.card_count()
    return {
        "data_dir": str(memory.dirs.root),
        **counts,
        "pending_sessions": pending,
        "indexed_cards": indexed,
        "embedder": memory.embedder.id,
        "distiller": memory.config.distill.llm_provider,
        "pending_embeddings": len(read_pending(memory)),  # cards stored while the embedder was down
        "llm_usage": read_usage(memory),  # model tokens and requests spent so far
        **details(memory),
        "redaction": redact.status(memory),
        "health": metrics.headline(metrics.compute(memory, forgotten=False)),  # `alaya metrics` has the rest
    }


def details(memory: "Memory") -> dict[str, Any]:
    """Tiers, temperatures, per-layer counts and sizes."""
    with memory.reading("status (tiers)") as graph:
        tiers = graph.tier_counts()
        temps = graph.temperatures()
        types = graph.type_counts()
        provenance = graph.provenance_counts()
        relations = graph.relation_counts()
        # a missing time may read as "", which coalesce() would not skip
        dates = sorted((started or ingested)[:10] for started, ingested in graph.session_times() if started or ingested)
    sizes = memory.storage.footprint()
    raw_sessions = memory.raw.session_ids()
    contexts = len(list(memory.raw.contexts_dir.glob("*.json"))) if memory.raw.contexts_dir.is_dir() else 0
    access_lines = 0
    for log in [memory.dirs.access_log, *access.pending(memory)]:
        if log.exists():
            with open(log, "rb") as handle:
                access_lines += sum(1 for _ in handle)
    layers = {
        "L3": {"sessions": len(raw_sessions), "contexts": contexts, "bytes": sizes.l3},
        "L2": {"bytes": sizes.l2},
        "L1": {"bytes": sizes.l1},
        "state": {"bytes": sizes.state},
    }
    return {
        "cards_by_type": {t: int(n) for t, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0] or ""))},
        **provenance,
        "links_by_relation": dict(sorted(relations.items(), key=lambda kv: (-kv[1], kv[0]))),
        "sessions_span": {"oldest": dates[0] if dates else None, "newest": dates[-1] if dates else None},
        "tiers": {t: int(tiers.get(t, 0)) for t in ("HOT", "WARM", "COLD")},
        "temperature_histogram": histogram(temps),
        "access_log_unfolded": access_lines,
        "layers": layers,
        "bytes_total": sizes.total,
    }
