"""The integrated summary: what this memory is about, in a few lines, written from the cards
with no model (docs/architecture.md, "Plugins and hooks"; issue 33: it used to be a count of
card types and tags, "1 card. Active areas: concept 1; tags: concept 1, noted 1, …").

- working on: the topics of the newest conversations' cards (their entities and tags, a topic
  said in more of those sessions first), without speakers and roles (the names people speak
  under in recent sessions, role words, agent ids, card types);
- standing: the preferences and decisions the owner stated (`models.OWNER_STATED`) that still
  hold, most important first;
- changed: the facts superseded in the last `CHANGED_DAYS` (`valid_until`), each as the
  setting and its old and new value when the resolver's rules read them ("billing db pool
  size: 20 → 120"), else the old and the new card's titles;
- key topics: the most mentioned entities of all the cards, without speakers and without any
  entity that more than half of the cards mention (a speaker or the user rather than a topic);
- recent: the sessions captured last, with their date, title and most important cards (the
  short-term tier of the session-start text keeps those of the last `hook.short_term_days`);
  a title only when it comes from trusted text (`trusted_title`).

Only cards of the injectable origins count (`provenance.inject_origins`). Computed per scope
(an agent's cards plus shared ones) and cached in `state/summary.json` when a session ends;
recomputed when the cache is older than the newest ingest, when the number of cards changed,
or when it is older than `hook.summary_max_age_hours`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable

from .. import clock
from ..distill.cues import FILLER_WORDS, STOPWORDS, TITLE_VAGUE_WORDS
from ..distill.resolver import contradiction, profile
from ..llm.summaries import read_llm_summaries
from ..models import CARD_TYPES, OWNER_STATED, Card, trust_class
from ..safety.echo import Echoes
from ..safety.instructions import looks_like_instruction
from ..store.fsutil import atomic_write

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph

CACHE_VERSION = 4  # 2: recent sessions carry `ingested_at`, for the short-term window; 3: working on, standing, changed
# 4: and `at`, the session's own time (issue 31)
TOP = 8
RECENT_SESSIONS = 12
WORKING_SESSIONS = 5  # the newest conversations whose cards say what the user is working on
WORKING_CARDS = 40  # cards read per such session
WORKING_TOPICS = 6
STANDING_TYPES = ("preference", "decision")
STANDING = 5
CHANGED_DAYS = 30  # "recently", for what changed
CHANGED = 3
# not topics: how often, and the cue verbs a card's type already says (distill/cues.py)
_NOT_TOPICS = frozenset("every always never often usually sometimes still remember use uses used using decide decided"
                        " decision prefer prefers preferred like likes love loves hate want wants need needs raised"
                        " moved chose chosen picked agreed".split())
_FIRST_PERSON = re.compile(r"\b(?:I|I'[a-z]+|we|we'[a-z]+|my|our|me|us)\b|我", re.IGNORECASE)
_WORDS = re.compile(r"[\w][\w'.+/-]*[\w+]|\w")
_ROLE_WORDS = {"user", "assistant", "system", "tool", "agent", "bot", "ai", "human", "me", "you", "i", "shared"}


def scopes_for(agent_id: str) -> list[str]:
    return [agent_id] if agent_id == "shared" else [agent_id, "shared"]


def compute(graph: "CardGraph", memory: "Memory", agent_id: str) -> dict[str, Any]:
    """The summary for one scope, from an open graph (caller holds the read lock)."""
    origins = memory.config.provenance.inject_origins
    data = graph.overview(scopes_for(agent_id), top=TOP * 3, sessions=RECENT_SESSIONS, origins=origins)
    speakers = set(_ROLE_WORDS) | {agent_id.lower()}
    titles: dict[str, str | None] = {}
    last_turn: dict[str, str] = {}
    for row in data["sessions"]:
        try:
            session = memory.raw.load(row["id"])
        except Exception:  # noqa: BLE001 - a damaged raw file must not break the summary
            session = None
        if session is not None:
            speakers.update(t.name.lower() for t in session.turns if t.name)
            last_turn[row["id"]] = next((t.timestamp for t in reversed(session.turns) if t.timestamp), "")
        titles[row["id"]] = trusted_title(row["title"], session.turns if session is not None else [])
    ubiquitous = data["cards"] / 2 if data["cards"] >= 10 else float("inf")
    now = clock.now().isoformat(timespec="seconds")
    from ..redact import from_config  # (as inject's: not imported by commands that inject nothing)

    redactor = from_config(memory.config)
    clear = (lambda text: redactor.redact(text)[0]) if redactor is not None else (lambda text: text)
    working = working_on(graph, [r["id"] for r in data["sessions"][:WORKING_SESSIONS]], agent_id, speakers, now,
                         origins, clear)
    said = {t.lower() for t in working}
    topics = [[name, n] for name, n in data["entities"]
              if name.lower() not in speakers and n <= ubiquitous and name.lower() not in said]
    recent = []
    for row in data["sessions"]:
        date = (row["started_at"] or row["ingested_at"] or "")[:10]
        # when it happened, for the short-term window: an import of old sessions is not recent
        at = last_turn.get(row["id"]) or row["started_at"] or row["ingested_at"] or ""
        recent.append({"session_id": row["id"], "date": date, "ingested_at": row["ingested_at"] or "", "at": at,
                       "title": titles.get(row["id"]), "highlights": row["card_titles"][:3]})
    return {
        **_llm_part(memory, agent_id),
        "cards": data["cards"],
        "working_on": working,
        "standing": standing(graph, agent_id, now, origins),
        "changed": changed(graph, agent_id, now, origins),
        "topics": topics[:TOP],
        "recent": recent,
    }


def working_on(graph: "CardGraph", sessions: list[str], agent_id: str, speakers: set[str], now: str,
               origins: Any, clear: Callable[[str], str] = lambda text: text) -> list[str]:
    """The topics of these sessions' current cards: their entities (as written), then the tags
    that recur (in two cards or more: a one-off keyword is often a verb; on LoCoMo dev the
    recurring tags of chat were "photo, people, show"), a topic of more sessions first, then of
    more cards, then the newest session's; no speaker, role, card type, filler or stop word. Topics always said together become the phrase they are said in
    ("billing DB pool size", not "billing, pool, size"). Topics and phrases come from the card's
    text as `clear` (the redactor) leaves it, and a term it takes out is no topic: an entity
    distilled while redaction was off may be a bare secret ("Tr0ub4…"), which nothing around it
    in a topic list would give away as one."""
    skip = speakers | set(CARD_TYPES) | FILLER_WORDS | STOPWORDS | TITLE_VAGUE_WORDS | _NOT_TOPICS
    shown: dict[str, str] = {}
    entity: set[str] = set()
    in_sessions: Counter[str] = Counter()
    cards_of: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for session_id in sessions:
        seen: set[str] = set()
        for card in graph.session_cards(session_id, scopes_for(agent_id), limit=WORKING_CARDS, now=now, origins=origins):
            texts[card.id] = clear(card.content)
            said = f"{texts[card.id]} {clear(card.title)}".lower()
            terms = {t.lower(): t for t in card.tags if len(t) >= 3}
            terms.update({e.lower(): e for e in card.entities})  # an entity's own spelling ("DB", "pnpm")
            entity.update(e.lower() for e in card.entities)
            for key, term in terms.items():
                if key in skip or not any(ch.isalpha() for ch in key) or _nickname(key, speakers) or key not in said:
                    continue
                shown.setdefault(key, term)
                cards_of.setdefault(key, set()).add(card.id)
                seen.add(key)
        in_sessions.update(seen)
    order = {key: i for i, key in enumerate(shown)}  # first met: the newest session's, its newest card's
    kept = [k for k in shown if k in entity or len(cards_of[k]) >= 2]
    ranked = sorted(kept, key=lambda k: (k not in entity, -in_sessions[k], -len(cards_of[k]), order[k]))
    out: list[str] = []
    said: set[str] = set()
    for key in ranked:
        if key in said:
            continue
        group = [k for k in ranked if cards_of[k] == cards_of[key] and k not in said]
        phrase, words = _phrase(group, texts[min(cards_of[key])], set(shown)) if len(group) > 1 else (shown[key], {key})
        said |= words | {key}
        out.append(phrase)
        if len(out) == WORKING_TOPICS:
            break
    return out


def _nickname(key: str, speakers: set[str]) -> bool:
    """"mel" for Melanie, "caro" for Caroline: a speaker still, under a shorter name."""
    return len(key) >= 3 and any(name.startswith(key) for name in speakers if len(name) > len(key))


def _phrase(group: list[str], text: str, topics: set[str]) -> tuple[str, set[str]]:
    """The shortest run of words of `text` that holds every topic of `group` and nothing but
    `topics` (at most one more), and the words it holds; else the first topic alone."""
    words = _WORDS.findall(text)
    lower = [w.lower() for w in words]
    wanted = set(group)
    best: tuple[int, int] | None = None
    for i, w in enumerate(lower):
        if w not in wanted:
            continue
        found: set[str] = set()
        for j in range(i, min(len(lower), i + len(group) + 1)):
            if lower[j] not in topics:
                break
            found.add(lower[j])
            if wanted <= found:
                if best is None or j - i < best[1] - best[0]:
                    best = (i, j)
                break
    if best is None:
        return group[0], {group[0]}
    return " ".join(words[best[0]:best[1] + 1]), set(lower[best[0]:best[1] + 1])


def standing(graph: "CardGraph", agent_id: str, now: str, origins: Any) -> list[dict[str, str]]:
    """The owner's preferences and decisions that still hold, most important first, each said
    in the first person ("I prefer pnpm", "we decided"): on LoCoMo dev most cards typed a
    preference praise the other speaker ("Your drive to help is awesome!")."""
    cards = graph.top_cards(scopes_for(agent_id), by="importance", limit=STANDING * 4, now=now, origins=origins,
                            types=STANDING_TYPES)
    out: dict[str, dict[str, str]] = {}
    for card in cards:
        said = card.title.rpartition(" \u2014 ")[2]  # a question's card is titled "question — answer"
        if card.origin in OWNER_STATED and _FIRST_PERSON.search(said) and said not in out:
            out[said] = _brief(card)
    return list(out.values())[:STANDING]


def changed(graph: "CardGraph", agent_id: str, now: str, origins: Any) -> list[dict[str, str]]:
    """The facts superseded in the last `CHANGED_DAYS`, latest first, each with what replaced it
    (the card it is linked `CONTRADICTS` to that still holds)."""
    since = (clock.now() - timedelta(days=CHANGED_DAYS)).isoformat(timespec="seconds")
    old = graph.superseded_since(scopes_for(agent_id), since=since, now=now, limit=CHANGED * 4, origins=origins)
    if not old:
        return []
    ids = {c.id for c in old}
    newer: dict[str, str] = {}
    for src, _rel, dst, _weight in graph.neighbours(list(ids), ["CONTRADICTS"]):
        here, other = (src, dst) if src in ids else (dst, src)
        newer.setdefault(here, other)
    current = graph.get_cards(set(newer.values()))
    out = []
    for card in old:
        new = current.get(newer.get(card.id, ""))
        if new is None or (new.valid_until and new.valid_until <= now) or (new.origin or "unknown") not in [*origins, "unknown"]:
            continue
        out.append({"id": new.id, "was": card.id, "what": _change(card, new), "date": (card.valid_until or "")[:10]})
    return out[:CHANGED]


def _change(old: Card, new: Card) -> str:
    """"billing db pool size: 20 → 120" when the resolver's rules read the setting, else the
    two titles."""
    why = contradiction(profile(old), profile(new))
    if why and " → " in why:
        subject, _, rest = why.partition(" ")
        what, _, values = rest.rpartition(": ")
        setting = what.partition(":")[2] or what  # "value:billing db pool size" → its setting
        named = "" if subject in ("user", old.scope, new.scope) else f"{subject} "
        return f"{named}{setting}: {values}"
    return f"{old.title} → {new.title}"


def _brief(card: Card) -> dict[str, str]:
    return {"id": card.id, "type": card.type, "title": card.title, "content": card.content}


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
    key = _key(graph, memory)
    entry = _read(memory).get(agent_id)
    if entry and entry.get("key") == key and now - float(entry.get("computed_at", 0)) < max_age_hours * 3600:
        return entry["summary"]
    summary = compute(graph, memory, agent_id)
    _store(memory, agent_id, key, summary, now)
    return summary


def _key(graph: "CardGraph", memory: "Memory") -> list[Any]:
    """What a cached summary depends on: the graph's freshness and the redaction settings (with
    redaction turned on, a summary cached in the clear is computed again)."""
    section = getattr(memory.config, "redaction", None)
    redaction = json.dumps(section.model_dump(mode="json"), sort_keys=True) if section is not None else "default"
    return [*graph.freshness(), redaction]


def refresh(memory: "Memory", agent_ids: list[str]) -> dict[str, Any]:
    """Recompute and cache the summaries of these scopes (session end, introspect)."""
    now = clock.timestamp()
    with memory.reading("summary") as graph:
        key = _key(graph, memory)
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
