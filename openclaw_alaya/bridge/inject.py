"""The text injected at the start of a session (docs/architecture.md, "Plugins and hooks").

Plugins contribute `Section`s through the `session_start` hook, each in one of three tiers,
rendered in this order under its own heading by `templates/session_start.md.j2`, inside an
`<alaya-memory untrusted="true">` block that tells the model this is historical data, not
instructions:

- core (`## Core memory (curated: promoted by use)`, first; issue 31): the cards introspect's
  `core` step promoted by evidence of use (maintenance/core.py, `state/core.json`), each said
  here once and left out of the tiers below;
- working (`## Working memory (this session)`): the current session's state, when the hook
  runs in a session already captured (a later turn, after compaction, a resumed session): the
  cards distilled from it, newest first, else its last turns, one line each;
- short_term (`## Recent sessions`): the other sessions captured in the last
  `hook.short_term_days`, newest first: date, title and the titles of their main cards;
- long_term (`## Long-term memory`): the cards relevant to the prompt (the hottest and newest
  without one) and the integrated overview (what the user is working on, standing preferences
  and decisions, what changed, key topics, the LLM summary). A plugin's section is long-term
  unless it says otherwise.

Memory text is made safe first (`clean`): one line, through the output sanitiser every surface
uses (`safety.output.for_model`: no control or invisible characters, no tag whose name could
close or reopen the block). An item that reads as an order to the agent (run a downloaded
script, wipe a disk, send credentials away, drop its instructions: safety/instructions.py) is
left out whatever its origin: injected unasked it would be a prompt injection; recall and
memory_search still find it (docs/provenance.md).

The budget (`fit`). The result never exceeds it, counted as the hook counts it: the whole
block, template included (`text.estimate_tokens`); "" when nothing fits.
1. Shares. What the block's frame leaves of the budget goes first to the core tier's
   `core.inject_share` (percent, default 20), and what is left is split between the other
   tiers by `hook.tier_split` (percent, default 50 / 30 / 20). A tier's allowance is what it needs when
   that is within its share; what it does not need is lent to the tiers that need more, in
   proportion to their shares (again, until nobody needs more or nothing is left). A tier's
   cost is what its part of the rendered block costs; the parts add up to the whole.
2. Degradation, one step at a time while the whole is over the budget. The steps, in order:
   (a) long-term items shortened (a card to its title: `Item.short`; last item first),
   (b) long-term items dropped (from the end, last section first, down to each section's
   `min_items`, then entirely), (c) short-term items shortened (highlights dropped, title
   cut), (d) short-term items dropped, (e) core items shortened, (f) core items dropped, (g) working
   items shortened, (h) working items dropped.
   Each time the first step whose tier is over its allowance is taken: the tiers over their
   allowance give way first, long-term first, each until it is within its allowance. Only when
   no tier is over its allowance and the whole still does not fit (a budget smaller than the
   block's frame) is the first step that can be taken at all. So a tier within its allowance
   is never cut to pay for another's excess, and the working tier gives way last.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import DamagedStoreError
from ..ingest.core_section import bootstrapped
from ..recall.periods import aware
from ..safety.instructions import looks_like_instruction
from ..safety.invisible import strip_invisible
from ..safety.output import for_model
from ..store.raw import FORGOTTEN
from ..text import CJK_CHAR, estimate_tokens

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Card

TEMPLATE = "session_start.md.j2"

CORE, WORKING, SHORT_TERM, LONG_TERM = "core", "working", "short_term", "long_term"
TIERS = (CORE, WORKING, SHORT_TERM, LONG_TERM)  # the order they are rendered in
HEADINGS = {CORE: "Core memory (curated: promoted by use)", WORKING: "Working memory (this session)",
            SHORT_TERM: "Recent sessions", LONG_TERM: "Long-term memory"}
DEGRADE = (LONG_TERM, SHORT_TERM, CORE, WORKING)  # the order they give up tokens in
DEFAULT_SPLIT = {WORKING: 50, SHORT_TERM: 30, LONG_TERM: 20}
WORKING_TURNS = 6  # a session without cards yet: its last turns, one line each
SHORT_CHARS = 80  # a shortened turn, session title or card without a title
# The integrated summary's most, in percent of the budget (issue 33), its last lines dropped
# first. On LoCoMo dev, each question as a new session's first prompt at 1200 tokens
# (bench/inject.py; runs differ by about 0.01): uncapped (14% of the block) the prompt's cards
# were cut to their titles, answer words 0.697 against 0.734 before issue 33; capped at 7%,
# 0.725-0.734 (at 9%, 0.726), evidence 0.770-0.772 as before. The smaller, as it costs the
# prompt's cards as little.
SUMMARY_SHARE = 7


@dataclass
class Item:
    text: str
    id: str | None = None
    short: str | None = None  # the item shortened (a card: its title only); None: it cannot be


@dataclass
class Section:
    key: str
    title: str  # "" renders the items straight under the tier's heading
    items: list[Item] = field(default_factory=list)
    order: int = 50  # within the tier
    min_items: int = 0  # kept while trimming other sections of the tier, dropped only as a last resort
    tier: str = LONG_TERM  # working | short_term | long_term (anything else: long-term)


@dataclass
class StartRequest:
    agent_id: str = "shared"
    session_id: str | None = None
    prompt: str = ""
    budget: int = 1200
    max_cards: int = 8
    card_chars: int = 320
    summary_max_age_hours: float = 24.0
    short_term_days: float = 7.0
    tier_split: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_SPLIT))
    core_share: int = 20  # percent of the budget kept for the core tier first (`core.inject_share`)
    now: datetime | None = None  # None: the clock (`ALAYA_NOW` fixes it in the CLI)
    workspace_dir: str | None = None  # the session's workspace: its MEMORY.md's core lines are not said twice


def clean(text: Any, limit: int | None = None) -> str:
    """Memory text made safe to place inside the block (`safety.output.for_model`), on one line."""
    text = " ".join(for_model(str(text or "")).split())
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


# --- building ---------------------------------------------------------------------------


def build(memory: "Memory", request: StartRequest) -> str:
    """The whole injected text ("" when there is nothing to say or no budget for it)."""
    if request.budget <= 0:
        return ""
    sections: list[Section] = []
    for result in memory.hooks.hook.session_start(memory=memory, request=request):
        for section in result if isinstance(result, list) else [result]:
            if isinstance(section, Section) and section.items:
                section.items = safe_items(memory, section.items)
                sections.append(section)
    return fit(sections, request.budget, request.tier_split, request.core_share)


def safe_items(memory: "Memory", items: list[Item]) -> list[Item]:
    """The items that may be injected unasked, redacted: none that reads as an order to the
    agent; secrets out of memories stored before redaction was on, or by plugins. Session
    start's sections and a turn's block (turn.py, issue 32) both go through here."""
    items = [i for i in items if not looks_like_instruction(strip_invisible(f"{i.text}\n{i.short or ''}"))]
    from ..redact import from_config

    redactor = from_config(memory.config)
    if redactor is None:
        return items

    def redacted(text: str) -> str:
        return redactor.redact(strip_invisible(text))[0]

    return [Item(redacted(i.text), i.id, redacted(i.short) if i.short else None) for i in items]


def fit(sections: list[Section], budget: int, split: Mapping[str, int] | None = None, core_share: int = 0) -> str:
    """Render under `budget` tokens, degrading the tiers as the module docstring says: each
    tier within its allowance (its share of `split`, plus what the others lend it) is left
    alone while another is over its own. "" when even one item does not fit."""
    shares = _shares(split, core_share)
    # Cleaned here as well as where items are made: a plugin's section is rendered safely too.
    sections = sorted(
        (Section(s.key, clean(s.title, 120),
                 [Item(clean(i.text), clean(i.id, 140) if i.id else None, clean(i.short) if i.short else None) for i in s.items],
                 s.order, s.min_items, tier_of(s)) for s in sections),
        key=lambda s: (TIERS.index(s.tier), s.order),
    )
    if budget <= 0:
        return ""
    # A tier's part of the block, as (CJK characters, other characters): the parts and the
    # frame add up to the whole, so the whole is counted without rendering it each step.
    frame = _chars(render([]))

    def measure(tier: str) -> tuple[int, int]:
        cjk, other = _chars(render([s for s in sections if s.tier == tier]))
        return cjk - frame[0], other - frame[1]

    parts = {t: measure(t) for t in TIERS}

    def over() -> bool:
        cjk = frame[0] + sum(p[0] for p in parts.values())
        other = frame[1] + sum(p[1] for p in parts.values())
        return cjk + math.ceil(other / 4) > budget or estimate_tokens(render(sections)) > budget

    # estimate_tokens rounds the other characters up to whole tokens: at most 3/4 of a token
    weight = {t: parts[t][0] + parts[t][1] / 4 for t in TIERS}
    allowance = allowances(weight, shares, budget - frame[0] - frame[1] / 4 - 0.75)
    steps = [(tier, shorten) for tier in DEGRADE for shorten in (True, False)]
    while over():
        step = next((s for s in steps if weight[s[0]] > allowance[s[0]] and _degrade(sections, *s)), None)
        step = step or next((s for s in steps if _degrade(sections, *s)), None)
        if step is None:
            return ""
        parts[step[0]] = measure(step[0])
        weight[step[0]] = parts[step[0]][0] + parts[step[0]][1] / 4
    text = render(sections)
    return text if any(s.items for s in sections) and estimate_tokens(text) <= budget else ""


def tier_of(section: Section) -> str:
    tier = getattr(section, "tier", LONG_TERM)  # a section made before tiers existed, or a look-alike
    return tier if tier in TIERS else LONG_TERM


def allowances(needs: Mapping[str, float], shares: Mapping[str, int], available: float) -> dict[str, float]:
    """Each tier's allowance of `available` tokens: its need when within its share (`shares`
    in percent); what a tier does not need goes to those that need more, in proportion to
    their shares (equally among tiers whose shares are all 0)."""
    available = max(available, 0.0)
    tiers = [t for t in TIERS if t in needs]
    allow = {t: min(needs[t], available * shares[t] / 100) for t in tiers}
    wanting = [t for t in tiers if needs[t] > allow[t]]
    while wanting:
        spare = available - sum(allow.values())
        if spare <= 1e-9:
            break
        weights = {t: shares[t] for t in wanting} if any(shares[t] for t in wanting) else {t: 1 for t in wanting}
        total = sum(weights.values())
        for t in wanting:
            allow[t] = min(needs[t], allow[t] + spare * weights[t] / total)
        wanting = [t for t in wanting if needs[t] > allow[t] + 1e-9]
    return allow


def _shares(split: Mapping[str, int] | None, core_share: int = 0) -> dict[str, float]:
    """{tier: percent}: the core's share first (issue 31), the split (checked; config.py's
    `hook.tier_split` checks it for users) sharing what is left."""
    tiers = TIERS[1:]
    shares = {t: (split or DEFAULT_SPLIT).get(t, 0) for t in tiers}
    if any(not isinstance(v, (int, float)) or v < 0 for v in shares.values()) or sum(shares.values()) != 100:
        raise ValueError(f"tier split: {', '.join(tiers)} must be 0 or more and add up to 100, got {dict(split or {})}")
    if not 0 <= core_share <= 100:
        raise ValueError(f"core share: 0 to 100, got {core_share}")
    return {CORE: core_share, **{t: v * (100 - core_share) / 100 for t, v in shares.items()}}


def _chars(text: str) -> tuple[int, int]:
    """(CJK characters, other characters): what `estimate_tokens` counts, in parts that add up."""
    cjk = len(CJK_CHAR.findall(text))
    return cjk, len(text) - cjk


def _degrade(sections: list[Section], tier: str, shorten: bool) -> bool:
    """One step for one tier: shorten its last item that can be, or drop its last item (last
    section first, down to each section's `min_items`, then entirely). False: nothing left."""
    mine = [s for s in sections if s.tier == tier]
    if shorten:
        for section in reversed(mine):
            for index in range(len(section.items) - 1, -1, -1):
                item = section.items[index]
                if item.short and item.short != item.text:
                    section.items[index] = Item(item.short, item.id)
                    return True
        return False
    for floor in (lambda s: s.min_items, lambda s: 0):
        for section in reversed(mine):
            if len(section.items) > floor(section):
                section.items.pop()
                return True
    return False


_template = None


def render(sections: list[Section]) -> str:
    global _template
    if _template is None:
        import jinja2

        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parents[1] / "templates")),
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,  # not HTML: memory text is made safe by clean()
            undefined=jinja2.StrictUndefined,
        )
        _template = env.get_template(TEMPLATE)
    tiers = []
    for tier in TIERS:
        mine = [s for s in sections if s.items and tier_of(s) == tier]
        if mine:
            tiers.append({"heading": HEADINGS[tier], "sections": mine})
    return _template.render(tiers=tiers).strip() + "\n"


# --- the built-in sections --------------------------------------------------------------


def default_sections(memory: "Memory", request: StartRequest) -> list[Section]:
    from . import summary as summary_mod

    if not memory.dirs.initialized():
        return []
    relevant: list[Item] = []
    prompt = " ".join((request.prompt or "").split())
    # the request's moment, a naive one read as UTC as recall reads it (issue 31): it raised a
    # TypeError against the stored, zoned stamps, and recall counted from the clock regardless
    clock = aware(request.now)
    damaged: DamagedStoreError | None = None
    if prompt and request.max_cards:
        try:
            result = memory.recall(prompt, scope=request.agent_id, top_k=request.max_cards, origins=injectable(memory),
                                   now=clock, log_access=False)  # exposure, not the agent's use (engine.recall, issue 31)
        except DamagedStoreError as exc:  # the index: the graph's hottest and newest cards stand in
            damaged, result = exc, None
        relevant = [_card_item(n.card_id, n.type, n.title, n.content, None, request.card_chars)
                    for n in (result.nodes if result else []) if not n.superseded]  # what is true now
    now = clock.isoformat(timespec="seconds")
    carried = bootstrapped(request.workspace_dir) if memory.config.core.writeback else set()
    with memory.reading("session-start") as graph:
        summary = summary_mod.get(graph, memory, request.agent_id, max_age_hours=request.summary_max_age_hours)
        core = core_section(graph, memory, request, carried)
        working = working_section(graph, memory, request, now)
        triggered = triggered_cards(graph, memory, request, prompt) if prompt and request.max_cards else []
        fallback: list["Card"] = []
        if not relevant and request.max_cards:
            scopes = summary_mod.scopes_for(request.agent_id)
            hot = graph.top_cards(scopes, by="hot", limit=request.max_cards, now=now, origins=injectable(memory))
            recent = graph.top_cards(scopes, by="recent", limit=request.max_cards, now=now, origins=injectable(memory))
            fallback = _interleave(hot, recent, request.max_cards)
    if damaged is not None:  # said once the graph answered (a damaged graph is the hook's one warning)
        print(f"alaya: warning: hook session-start: {damaged}", file=sys.stderr)
    shown = carried | ({i.id for i in core.items if i.id} if core else set())  # the core is said first, once
    if working is not None:
        working.items = [i for i in working.items if i.id not in shown]
        shown |= {i.id for i in working.items if i.id}  # the working tier has them already
    # a card is said once: the prompt's own cards stay with them, the others in the overview
    # capped beside the prompt's cards (SUMMARY_SHARE); without a prompt it is the best guide there is
    overview = summary_section(summary, shown | {i.id for i in relevant} | {c.id for c in triggered},
                               request.budget if relevant or triggered else 0)
    shown |= {i.id for i in overview.items if i.id}
    sections = [core, working, recent_sessions_section(summary, request, clock), overview]
    if triggered:
        items = [_card_item(c.id, c.type, c.title, c.content, None, request.card_chars) for c in triggered if c.id not in shown]
        sections.append(Section("triggered", "Cards this prompt triggers", items, order=15, min_items=len(items)))
        shown |= {c.id for c in triggered}
    if relevant:
        items = [i for i in relevant if i.id not in shown]
        sections.append(Section("cards", "Cards relevant to this prompt", items, order=20, min_items=3))
    elif fallback:
        items = [_card_item(c.id, c.type, c.title, c.content, c.valid_from or c.created_at, request.card_chars)
                 for c in fallback if c.id not in shown]
        sections.append(Section("cards", "Hottest and most recent cards", items, order=20, min_items=3))
    return [s for s in sections if s is not None and s.items]


def core_section(graph: Any, memory: "Memory", request: StartRequest, carried: set[str]) -> Section | None:
    """The core tier (issue 31): the cards introspect's `core` step promoted by evidence of use
    (maintenance/core.py), best first, read as `state/core.json` then the cards by id in one
    read; still valid, in the agent's scopes, of an injectable origin, and not `carried` (already
    in the part of the session's MEMORY.md that OpenClaw's bootstrap injects: the write-back put
    it there). None: no core."""
    from .core_state import ids as core_ids
    from .summary import scopes_for

    wanted = [i for i in core_ids(memory) if i not in carried]
    if not wanted:
        return None
    found = graph.get_cards(wanted)
    allowed, scopes = injectable(memory), scopes_for(request.agent_id)
    cards = [c for c in (found.get(i) for i in wanted) if c is not None and not c.valid_until
             and (c.origin or "unknown") in allowed and c.scope in scopes]
    items = [_card_item(c.id, c.type, c.title, c.content, None, request.card_chars) for c in cards]
    return Section("core", "", items, order=10, tier=CORE)


def triggered_cards(graph: Any, memory: "Memory", request: StartRequest, prompt: str) -> list["Card"]:
    """The curated workspace cards (MEMORY.md, USER.md) whose `<!-- trigger: … -->` phrases the
    prompt matches (docs/workspace.md), still valid, in the agent's scopes, of an injectable
    origin: the long-term tier's cards, ahead of the others."""
    from ..ingest.workspace_state import triggered
    from .summary import scopes_for

    ids = triggered(memory, request.agent_id, prompt)
    if not ids:
        return []
    found = graph.get_cards(ids)
    allowed, scopes = injectable(memory), scopes_for(request.agent_id)
    return [c for c in (found.get(i) for i in ids) if c is not None and not c.valid_until
            and (c.origin or "unknown") in allowed and c.scope in scopes][: request.max_cards]


def working_section(graph: Any, memory: "Memory", request: StartRequest, now: str) -> Section | None:
    """The working tier: this session's cards, newest first, else its last turns, newest first;
    None when the session is new (not captured yet) or belongs to another scope. The Session
    node stands for the L3 file (ingest writes both; recovery mends a missing node)."""
    from .summary import scopes_for

    if not request.session_id:
        return None
    scopes = scopes_for(request.agent_id)
    stored = graph.get_session(request.session_id)
    if stored is None or (stored.get("agent_id") or "shared") not in scopes:
        return None
    if request.max_cards:
        cards = graph.session_cards(request.session_id, scopes, limit=request.max_cards, now=now, origins=injectable(memory))
        if cards:
            items = [_card_item(c.id, c.type, c.title, c.content, None, request.card_chars) for c in cards]
            return Section("session-cards", "Cards from this session (newest first)", items, order=10, tier=WORKING)
    try:
        session = memory.raw.load(request.session_id)
    except Exception:  # noqa: BLE001 - a damaged raw file must not break the session start
        session = None
    allowed = injectable(memory)
    turns = [t for t in (session.turns if session else [])
             if t.role in ("user", "assistant") and (t.origin or "unknown") in allowed and clean(t.content)]
    items = [Item(f"{t.role}: {clean(t.content, request.card_chars)}", short=f"{t.role}: {clean(t.content, SHORT_CHARS)}")
             for t in reversed(turns[-WORKING_TURNS:])]
    return Section("session-turns", "Last turns of this session (newest first)", items, order=10, tier=WORKING)


def recent_sessions_section(summary: dict[str, Any], request: StartRequest, clock: datetime) -> Section:
    """The short-term tier: the summary's recent sessions, other than this one, held in the
    last `short_term_days` by their own time (`at`: the last turn's, else the start's, else
    when captured; issue 31: a bulk import of year-old sessions is not recent); each one line:
    date, title, the titles of its main cards."""
    since = (clock - timedelta(days=request.short_term_days)).isoformat(timespec="seconds")
    items: list[Item] = []
    for row in summary.get("recent", []):
        if row.get("session_id") == request.session_id or not _at_or_after(row.get("at") or row.get("ingested_at"), since):
            continue
        date = clean(row.get("date"), 10) or "(undated)"
        title = "" if row.get("title") == FORGOTTEN else clean(row.get("title"), 120)  # a purged turn's title says nothing
        # a card titled like its session (the heuristic distiller's first card often is) is said once
        highlights = "; ".join(h.rstrip(" .") for h in (clean(h, 80) for h in row.get("highlights", [])) if h and h != title)
        if not (title or highlights):
            continue
        full = f"{title} (cards: {highlights})" if title and highlights else title or highlights
        short = (title and clean(row.get("title"), SHORT_CHARS)) or clean((row.get("highlights") or [""])[0], SHORT_CHARS)
        items.append(Item(f"{date}: {full}", short=f"{date}: {short}"))
    return Section("recent-sessions", "", items, order=10, tier=SHORT_TERM)


def _at_or_after(stamp: Any, since: str) -> bool:
    """Whether an ISO time stamp is at or after `since` (both UTC, as stored: `models.now_iso`)."""
    if not isinstance(stamp, str) or not stamp:
        return False
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when >= datetime.fromisoformat(since)


def injectable(memory: "Memory") -> list[str]:
    """The origins a card may have to be injected on its own (docs/provenance.md): the
    configured ones, and cards stored before origins were recorded ("unknown")."""
    return [*memory.config.provenance.inject_origins, "unknown"]


def summary_section(summary: dict[str, Any], shown: set[str] | frozenset[str] = frozenset(), budget: int = 0) -> Section:
    """The long-term overview (bridge/summary.py; issue 33): the LLM summary, what the user is
    working on, the owner's standing preferences and decisions and what changed recently (each
    a card, by id, unless `shown` already), the key topics; never a count. After the prompt's
    cards (`order`), so that it gives way to them first within the tier's allowance; at most
    `SUMMARY_SHARE` of a `budget` when given, its last lines dropped first."""
    items: list[Item] = []
    llm = summary.get("llm") or {}  # written by an LLM distiller at session end, when configured
    if llm.get("recent"):
        items.append(Item(f"Recently: {clean(llm['recent'], 300)}"))
    if llm.get("active_areas"):
        items.append(Item("Active areas: " + ", ".join(clean(a, 60) for a in llm["active_areas"][:8])))
    if llm.get("key_topics"):
        items.append(Item("Key topics: " + ", ".join(clean(t, 60) for t in llm["key_topics"][:8])))
    if summary.get("working_on"):
        items.append(Item("Working on: " + ", ".join(clean(t, 60) for t in summary["working_on"])))
    topics = ", ".join(clean(t, 60) for t, _n in summary.get("topics", []))
    if topics:
        items.append(Item(f"Key topics: {topics}"))
    for change in summary.get("changed", []):  # what it was is news even beside the card (then without its id)
        items.append(Item(f"Changed {clean(change.get('date'), 10)}: {clean(change.get('what'), 160)}",
                          id=None if change.get("id") in shown else change.get("id")))
    for card in summary.get("standing", []):
        if card.get("id") not in shown:
            items.append(Item(f"Standing {clean(card.get('type'), 20)}: {clean(card.get('title'), 160)}", id=card.get("id")))
    while budget and len(items) > 1 and estimate_tokens(render([Section("summary", "Integrated summary", items)])) \
            - estimate_tokens(render([])) > budget * SUMMARY_SHARE / 100:
        items.pop()
    return Section("summary", "Integrated summary", items, order=30, min_items=1)


def _card_item(card_id: str, kind: str, title: str, content: str, date: str | None, limit: int) -> Item:
    """A card on one line, and its short form: the title alone (the start of its content
    when it has no title)."""
    title = clean(title, 160)
    body = clean(content, limit)
    head = f"({clean(kind, 20)}{', ' + clean(date)[:10] if date else ''})"
    short = f"{head} {title or clean(content, SHORT_CHARS)}"
    if title and title.rstrip(".…") in body:  # the content already says it
        return Item(f"{head} {body}", id=card_id, short=short)
    return Item(f"{head} {title}: {body}" if body else f"{head} {title}", id=card_id, short=short)


def _interleave(first: list[Any], second: list[Any], limit: int) -> list[Any]:
    seen: set[str] = set()
    out = []
    for pair in zip(first + [None] * len(second), second + [None] * len(first)):
        for card in pair:
            if card is not None and card.id not in seen and len(out) < limit:
                seen.add(card.id)
                out.append(card)
    return out
