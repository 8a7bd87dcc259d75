"""The text injected at the start of a session (docs/architecture.md, "Plugins and hooks").

Plugins contribute `Section`s through the `session_start` hook; the built-in one gives the
integrated summary and the cards most relevant to the first prompt (the hottest and newest
ones when there is no prompt). They are rendered with `templates/session_start.md.j2` inside
an `<alaya-memory untrusted="true">` block that tells the model this is historical data, not
instructions. Memory text is made safe first (`clean`): one line, no control or invisible
characters (`safety.invisible`: format characters, tag characters, variation selectors,
fillers), and then no tag whose name could close or reopen the block. The result never exceeds
the token budget (`text.estimate_tokens`): items are dropped from the end, last section first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..safety.invisible import strip_invisible
from ..text import estimate_tokens

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Card

TEMPLATE = "session_start.md.j2"
# Control characters and line/paragraph separators: a space (the item stays one line).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Chat-template control tokens (`<|im_start|>`, `<|eot_id|>`, …) are never memory.
_CHAT_TOKEN = re.compile(r"<\s*\|")
# `<`, an entity or escape for it, an optional `/`, then a tag name mentioning memory or alaya.
_SPOOF_TAG = re.compile(r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?|\\u003c|\\x3c|＜|﹤)(\s*/?\s*[\w:.-]*(?:memor|alaya))", re.I)
_BLOCK_NAME = re.compile(r"alaya-memory", re.I)


@dataclass
class Item:
    text: str
    id: str | None = None


@dataclass
class Section:
    key: str
    title: str
    items: list[Item] = field(default_factory=list)
    order: int = 50
    min_items: int = 0  # kept while trimming other sections, dropped only as a last resort


@dataclass
class StartRequest:
    agent_id: str = "shared"
    session_id: str | None = None
    prompt: str = ""
    budget: int = 1200
    max_cards: int = 8
    card_chars: int = 320
    summary_max_age_hours: float = 24.0


def clean(text: Any, limit: int | None = None) -> str:
    """Memory text made safe to place inside the block: one line, nothing that can end it."""
    text = _CONTROL.sub(" ", strip_invisible(str(text or "")))  # before the tag patterns: a disguised tag is matched
    text = _SPOOF_TAG.sub(lambda m: "‹" + m.group(1), text)
    text = _CHAT_TOKEN.sub("‹|", text)
    text = _BLOCK_NAME.sub("alaya memory", text)
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


# --- building ---------------------------------------------------------------------------


def build(memory: "Memory", request: StartRequest) -> str:
    """The whole injected text ("" when there is nothing to say or no budget for it)."""
    from ..plugins import get_plugin_manager

    if request.budget <= 0:
        return ""
    sections: list[Section] = []
    for result in get_plugin_manager().hook.session_start(memory=memory, request=request):
        for section in result if isinstance(result, list) else [result]:
            if isinstance(section, Section) and section.items:
                sections.append(section)
    from ..redact import from_config

    redactor = from_config(memory.config)  # memories stored before redaction was on, or by plugins
    if redactor is not None:
        for section in sections:
            section.items = [Item(redactor.redact(strip_invisible(i.text))[0], i.id) for i in section.items]
    return fit(sections, request.budget)


def fit(sections: list[Section], budget: int) -> str:
    """Render under `budget` tokens, dropping items from the end (last section first): first
    down to each section's `min_items`, then entirely. "" when even one item does not fit."""
    # Cleaned here as well as where items are made: a plugin's section is rendered safely too.
    sections = [Section(s.key, clean(s.title, 120), [Item(clean(i.text), clean(i.id, 140) if i.id else None) for i in s.items],
                        s.order, s.min_items) for s in sorted(sections, key=lambda s: s.order)]
    if budget <= 0:
        return ""

    def over() -> bool:
        return estimate_tokens(render(sections)) > budget

    for floor in (lambda s: s.min_items, lambda s: 0):
        for section in reversed(sections):
            while len(section.items) > floor(section) and over():
                section.items.pop()
    sections = [s for s in sections if s.items]
    if not sections or over():
        return ""
    return render(sections)


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
    return _template.render(sections=[s for s in sections if s.items]).strip() + "\n"


# --- the built-in sections --------------------------------------------------------------


def default_sections(memory: "Memory", request: StartRequest) -> list[Section]:
    from . import summary as summary_mod

    if not memory.dirs.initialized():
        return []
    relevant: list[Item] = []
    prompt = " ".join((request.prompt or "").split())
    if prompt and request.max_cards:
        result = memory.recall(prompt, scope=request.agent_id, top_k=request.max_cards, origins=injectable(memory))
        relevant = [_card_item(n.card_id, n.type, n.title, n.content, None, request.card_chars) for n in result.nodes]
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with memory.reading("session-start") as graph:
        summary = summary_mod.get(graph, memory, request.agent_id, max_age_hours=request.summary_max_age_hours)
        fallback: list["Card"] = []
        if not relevant and request.max_cards:
            scopes = summary_mod.scopes_for(request.agent_id)
            hot = graph.top_cards(scopes, by="hot", limit=request.max_cards, now=now, origins=injectable(memory))
            recent = graph.top_cards(scopes, by="recent", limit=request.max_cards, now=now, origins=injectable(memory))
            fallback = _interleave(hot, recent, request.max_cards)
    sections = [summary_section(summary)]
    if relevant:
        sections.append(Section("cards", "Cards relevant to this prompt", relevant, order=20, min_items=3))
    elif fallback:
        items = [_card_item(c.id, c.type, c.title, c.content, c.valid_from or c.created_at, request.card_chars) for c in fallback]
        sections.append(Section("cards", "Hottest and most recent cards", items, order=20, min_items=3))
    return [s for s in sections if s.items]


def injectable(memory: "Memory") -> list[str]:
    """The origins a card may have to be injected on its own (docs/provenance.md): the
    configured ones, and cards stored before origins were recorded ("unknown")."""
    return [*memory.config.provenance.inject_origins, "unknown"]


def summary_section(summary: dict[str, Any]) -> Section:
    items: list[Item] = []
    llm = summary.get("llm") or {}  # written by an LLM distiller at session end, when configured
    if llm.get("recent"):
        items.append(Item(f"Recently: {clean(llm['recent'], 300)}"))
    if llm.get("active_areas"):
        items.append(Item("Active areas: " + ", ".join(clean(a, 60) for a in llm["active_areas"][:8])))
    if llm.get("key_topics"):
        items.append(Item("Key topics: " + ", ".join(clean(t, 60) for t in llm["key_topics"][:8])))
    if summary.get("cards"):
        types = ", ".join(f"{clean(t, 40)} {n}" for t, n in summary.get("types", []))
        tags = ", ".join(f"{clean(t, 40)} {n}" for t, n in summary.get("tags", []))
        items.append(Item(f"{summary['cards']} cards. Active areas: {types}" + (f"; tags: {tags}" if tags else "")))
    topics = ", ".join(f"{clean(t, 60)} ({n})" for t, n in summary.get("topics", []))
    if topics:
        items.append(Item(f"Key topics: {topics}"))
    for row in summary.get("recent", []):
        what = clean(row.get("title"), 120) or "; ".join(clean(h, 80) for h in row.get("highlights", []))
        if what:
            items.append(Item(f"Recent session {clean(row.get('date'), 10) or '(undated)'}: {what}"))
    return Section("summary", "Integrated summary", items, order=10, min_items=1)


def _card_item(card_id: str, kind: str, title: str, content: str, date: str | None, limit: int) -> Item:
    title = clean(title, 160)
    body = clean(content, limit)
    head = f"({clean(kind, 20)}{', ' + clean(date, 10) if date else ''})"
    if title and title.rstrip(".…") in body:  # the content already says it
        return Item(f"{head} {body}", id=card_id)
    return Item(f"{head} {title}: {body}" if body else f"{head} {title}", id=card_id)


def _interleave(first: list[Any], second: list[Any], limit: int) -> list[Any]:
    seen: set[str] = set()
    out = []
    for pair in zip(first + [None] * len(second), second + [None] * len(first)):
        for card in pair:
            if card is not None and card.id not in seen and len(out) < limit:
                seen.add(card.id)
                out.append(card)
    return out
