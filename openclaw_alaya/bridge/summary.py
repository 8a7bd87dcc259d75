"""The integrated summary: what this memory is about, in a few lines (docs/architecture.md,
"Plugins and hooks").

- active areas: card types and the most used tags, with counts;
- key topics: the most mentioned entities, without speakers and roles (the names people
  speak under in recent sessions, role words, agent ids, and any entity that more than half
  of the cards mention, which is a speaker or the user rather than a topic);
- recent: the sessions captured last, with their date, title and most important cards (the
  short-term tier of the session-start text keeps those of the last `hook.short_term_days`);
  a title only when it comes from trusted text (`trusted_title`).

Computed per scope (an agent's cards plus shared ones) and cached in `state/summary.json`
when a session ends; recomputed when the cache is older than the newest ingest, when the
number of cards changed, or when it is older than `hook.summary_max_age_hours`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .. import clock
from ..llm.summaries import read_llm_summaries
from ..models import trust_class
from ..safety.echo import Echoes
from ..safety.instructions import looks_like_instruction
from ..store.fsutil import atomic_write

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

CACHE_VERSION = 2  # 2: recent sessions carry `ingested_at`, for the short-term window
TOP = 8
RECENT_SESSIONS = 12
_ROLE_WORDS = {"user", "assistant", "system", "tool", "agent", "bot", "ai", "human", "me", "you", "i", "shared"}


def scopes_for(agent_id: str) -> list[str]:
    return [agent_id] if agent_id == "shared" else [agent_id, "shared"]


def compute(graph: "CardGraph", memory: "Memory", agent_id: str) -> dict[str, Any]:
    """The summary for one scope, from an open graph (caller holds the read lock)."""
    data = graph.overview(scopes_for(agent_id), top=TOP * 3, sessions=RECENT_SESSIONS,
                          origins=memory.config.provenance.inject_origins)
    speakers = set(_ROLE_WORDS) | {agent_id.lower()}
    titles: dict[str, str | None] = {}
    for row in data["sessions"]:
        try:
            session = memory.raw.load(row["id"])
        except Exception:  # noqa: BLE001 - a damaged raw file must not break the summary
            session = None
        if session is not None:
            speakers.update(t.name.lower() for t in session.turns if t.name)
        titles[row["id"]] = trusted_title(row["title"], session.turns if session is not None else [])
    ubiquitous = data["cards"] / 2 if data["cards"] >= 10 else float("inf")
    topics = [[name, n] for name, n in data["entities"] if name.lower() not in speakers and n <= ubiquitous]
    recent = []
    for row in data["sessions"]:
        date = (row["started_at"] or row["ingested_at"] or "")[:10]
        recent.append({"session_id": row["id"], "date": date, "ingested_at": row["ingested_at"] or "",
                       "title": titles.get(row["id"]), "highlights": row["card_titles"][:3]})
    return {
        **_llm_part(memory, agent_id),
        "cards": data["cards"],
        "types": [[t, n] for t, n in data["types"]],
        "tags": [[t, n] for t, n in data["tags"][:TOP]],
        "topics": topics[:TOP],
        "recent": recent,
    }


def trusted_title(title: str | None, turns: list) -> str | None:
    """A session's title as the summary may show it: only from a session with trusted turns
    (models.trust_class), never repeating its untrusted turns, never an order
    (safety/instructions.py); titles stored before these rules (or by a file) are checked too."""
    if not title or not any(trust_class(t.origin) == "injectable" for t in turns):
        return None
    if looks_like_instruction(title) or Echoes([t.content for t in turns if trust_class(t.origin) == "reachable"]).repeated_in(title):
        return None
    return title


def _llm_part(memory: "Memory", agent_id: str) -> dict[str, Any]:
    """The summary an LLM distiller keeps up to date at each session end (llm/distiller.py)."""
    entry = read_llm_summaries(memory.dirs.state).get(agent_id)
    if not isinstance(entry, dict):
        return {}
    return {"llm": {k: entry.get(k) for k in ("active_areas", "key_topics", "recent", "updated_at")}}


def get(graph: "CardGraph", memory: "Memory", agent_id: str, *, max_age_hours: float, now: float | None = None) -> dict[str, Any]:
    """The cached summary when fresh, else a recomputed (and re-cached) one."""
    now = clock.timestamp() if now is None else now
    key = graph.freshness()
    entry = _read(memory).get(agent_id)
    if entry and entry.get("key") == key and now - float(entry.get("computed_at", 0)) < max_age_hours * 3600:
        return entry["summary"]
    summary = compute(graph, memory, agent_id)
    _store(memory, agent_id, key, summary, now)
    return summary


def refresh(memory: "Memory", agent_ids: list[str]) -> dict[str, Any]:
    """Recompute and cache the summaries of these scopes (session end, introspect)."""
    now = clock.timestamp()
    with memory.reading("summary") as graph:
        key = graph.freshness()
        summaries = {agent: compute(graph, memory, agent) for agent in dict.fromkeys(agent_ids)}
    for agent, summary in summaries.items():
        _store(memory, agent, key, summary, now)
    return summaries


def cached_scopes(memory: "Memory") -> list[str]:
    return list(_read(memory))


def _path(memory: "Memory"):
    return memory.dirs.state / "summary.json"


def _read(memory: "Memory") -> dict[str, Any]:
    try:
        doc = json.loads(_path(memory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION or not isinstance(doc.get("scopes"), dict):
        return {}
    return doc["scopes"]


def _store(memory: "Memory", agent_id: str, key: list[Any], summary: dict[str, Any], now: float) -> None:
    """Re-read, then replace this scope's entry (a cache: losing a race costs a recompute)."""
    scopes = _read(memory)
    scopes[agent_id] = {"key": key, "computed_at": now, "summary": summary}
    try:
        atomic_write(_path(memory), json.dumps({"version": CACHE_VERSION, "scopes": scopes}, ensure_ascii=False))
    except OSError:
        pass  # a read-only data directory still gets its summary, just not cached
