"""`alaya export [--dest DIR]`: the memory as files people and tools read.

    DIR/index.md                       every card by type, with tier and a link to its file
    DIR/cards/<type>/<card-id>.md      front matter (id, title, type, tags, tier, temperature,
                                       sources…), the content, and its links as relative links
    DIR/graph.graphml                  cards and card→card edges (attribute `rel`), for
                                       networkx, Gephi, yEd

A read (shared lock) followed by file writes outside the lock.
"""

from __future__ import annotations

import json
import re
from collections import Counter
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write, ensure_dir

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Card

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_NODE_KEYS = [("title", "string"), ("type", "string"), ("tier", "string"), ("temperature", "double"),
              ("importance", "double"), ("scope", "string"), ("tags", "string"), ("created_at", "string"),
              ("access_count", "long"), ("origin", "string"), ("session_kind", "string")]
_EDGE_KEYS = [("rel", "string"), ("weight", "double")]
_SAFE_TYPE = re.compile(r"[^a-z0-9_-]+")


def export(memory: "Memory", dest: str | Path | None = None) -> dict[str, Any]:
    memory.dirs.require()
    out = Path(dest).expanduser() if dest else memory.dirs.root / "export"
    with memory.reading("export") as graph:
        cards = graph.titled_cards()
        reasons: dict = {}
        edges = graph.card_edges(reasons=reasons)
    by_id = {c.id: c for c in cards}
    edges = [e for e in edges if e[0] in by_id and e[2] in by_id]
    ensure_dir(out)
    folder = {c.id: _SAFE_TYPE.sub("-", c.type.lower()) or "concept" for c in cards}
    outgoing: dict[str, list[tuple[str, str, str]]] = {}
    for src, rel, dst, _w, _c in edges:
        outgoing.setdefault(src, []).append((rel, dst, reasons.get((src, rel, dst), "")))
    for card in cards:
        atomic_write(out / "cards" / folder[card.id] / f"{card.id}.md", card_markdown(card, outgoing.get(card.id, []), by_id, folder))
    atomic_write(out / "graph.graphml", graphml(cards, edges))
    atomic_write(out / "index.md", index_markdown(cards, folder, memory))
    return {"dest": str(out), "cards": len(cards), "edges": len(edges), "types": len(set(folder.values())),
            "cards_by_origin": dict(Counter(c.origin or "unknown" for c in cards)),
            "cards_by_session_kind": dict(Counter(c.session_kind or "unknown" for c in cards))}


def card_markdown(card: "Card", links: list[tuple[str, str, str]], by_id: dict[str, "Card"], folder: dict[str, str]) -> str:
    meta = {
        "id": card.id, "title": card.title, "type": card.type, "tags": card.tags, "entities": card.entities,
        "importance": card.importance, "tier": card.tier, "temperature": card.temperature, "scope": card.scope,
        "created_at": card.created_at, "updated_at": card.updated_at, "valid_from": card.valid_from,
        "valid_until": card.valid_until, "access_count": card.access_count, "last_accessed": card.last_accessed,
        "origin": card.origin, "session_kind": card.session_kind, "sources": [s.model_dump() for s in card.sources],
    }
    lines = ["---", *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items() if v not in (None, [])), "---", "",
             f"# {card.title}", "", card.content.strip(), ""]
    if links:
        lines += ["## Links", ""]
        for rel, dst, reason in sorted(links):
            target = by_id[dst]
            why = f" ({reason})" if reason else ""
            lines.append(f"- {rel} → [{target.title}](../{folder[dst]}/{dst}.md){why}")
        lines.append("")
    return "\n".join(lines)


def index_markdown(cards: list["Card"], folder: dict[str, str], memory: "Memory") -> str:
    lines = ["# Alaya memory export", "", f"{len(cards)} cards from `{memory.dirs.root}`.", ""]
    for label, field in (("origin", "origin"), ("session kind", "session_kind")):
        counts = Counter(getattr(card, field) or "unknown" for card in cards)
        lines.append(f"By {label}: " + ", ".join(f"{value} {n}" for value, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))
    lines.append("")
    by_type: dict[str, list["Card"]] = {}
    for card in cards:
        by_type.setdefault(folder[card.id], []).append(card)
    for kind in sorted(by_type):
        lines += [f"## {kind} ({len(by_type[kind])})", ""]
        for card in sorted(by_type[kind], key=lambda c: (-c.temperature, c.title)):
            lines.append(f"- [{card.title}](cards/{kind}/{card.id}.md) · {card.tier}")
        lines.append("")
    return "\n".join(lines)


def graphml(cards: list["Card"], edges: list[tuple]) -> bytes:
    root = ET.Element("graphml", {"xmlns": GRAPHML_NS})
    for name, kind in _NODE_KEYS:
        ET.SubElement(root, "key", {"id": name, "for": "node", "attr.name": name, "attr.type": kind})
    for name, kind in _EDGE_KEYS:
        ET.SubElement(root, "key", {"id": name, "for": "edge", "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", {"id": "alaya", "edgedefault": "directed"})
    for card in cards:
        node = ET.SubElement(graph, "node", {"id": card.id})
        values = {"title": card.title, "type": card.type, "tier": card.tier, "temperature": card.temperature,
                  "importance": card.importance, "scope": card.scope, "tags": ",".join(card.tags),
                  "created_at": card.created_at, "access_count": card.access_count, "origin": card.origin,
                  "session_kind": card.session_kind}
        for name, _kind in _NODE_KEYS:
            if values[name] is not None:
                ET.SubElement(node, "data", {"key": name}).text = _xml_text(str(values[name]))
    for i, (src, rel, dst, weight, _created) in enumerate(edges):
        edge = ET.SubElement(graph, "edge", {"id": f"e{i}", "source": src, "target": dst})
        ET.SubElement(edge, "data", {"key": "rel"}).text = rel
        ET.SubElement(edge, "data", {"key": "weight"}).text = str(weight)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _xml_text(text: str) -> str:
    """XML 1.0 cannot carry most control characters: drop them."""
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)
