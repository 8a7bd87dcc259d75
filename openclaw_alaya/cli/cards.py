"""Commands that read cards as they are stored: `alaya get` (whole cards by id) and `alaya list`
(pages of cards, newest first, by filter); the work is in recall/listing.py."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..text import one_line
from . import common

if TYPE_CHECKING:  # `alaya --help` need not load pydantic
    from ..models import Card, CardPage, CardRecord

_TITLE_CHARS = 80


def add_commands(sub: Any, command: Any) -> None:
    get = command("get", cmd_get, "show whole cards by id (the id of a card merged into another shows that card)")
    get.add_argument("card_ids", nargs="+", metavar="CARD")
    listing = command("list", cmd_list, "list cards newest first (by when they were created), optionally filtered")
    listing.add_argument("--type", help="card type (concept, pattern, gotcha, decision, preference, fact, …)")
    listing.add_argument("--tag", help="cards with this tag or one filed under it (any case): 技术/前端 also lists 技术/前端/React")
    listing.add_argument("--entity", metavar="NAME", help="cards that mention this entity, by name or alias (any case)")
    listing.add_argument("--since", metavar="WHEN", help="created from then on, as recall reads it: a date "
                         "(2026-03-01), an ISO time, 7d, last week, …")
    listing.add_argument("--until", metavar="WHEN", help="created until then: a date takes in that whole day")
    listing.add_argument("--tier", metavar="HOT|WARM|COLD", help="cards in this tier")
    listing.add_argument("--scope", metavar="AGENT", help="agent id: its cards plus shared ones")
    listing.add_argument("--limit", type=int, help="at most this many cards (default 20, at most 1000)")
    listing.add_argument("--offset", type=int, help="skip this many cards first (the next page)")


def cmd_get(args: argparse.Namespace) -> int:
    cards = common.memory(args.data_dir).get(args.card_ids)
    common.print_memory({"cards": [card.model_dump() for card in cards]} if args.json
                        else "\n---\n".join(_render_card(card) for card in cards), as_json=args.json)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    page = common.memory(args.data_dir).list_cards(
        type=args.type, tag=args.tag, entity=args.entity, since=args.since, until=args.until, tier=args.tier,
        scope=args.scope, limit=args.limit, offset=args.offset, now=common.fixed_now())
    common.print_memory(page.model_dump() if args.json else _render_page(page), as_json=args.json)
    return 0


def _render_card(card: "CardRecord") -> str:
    """Every field, then a blank line and the content in full (cards are separated by `---`)."""
    merged = f"  (merged from {card.forwarded_from})" if card.forwarded_from else ""
    validity = " · ".join(f"{label} {value}" for label, value in (("valid from", card.valid_from),
                                                                   ("valid until", card.valid_until)) if value)
    lines = [
        f"[{card.type}] {card.title}  ({card.id}){merged}",
        f"tier {card.tier} · temperature {card.temperature:.2f} · importance {card.importance:.2f} · "
        f"accessed {card.access_count}× · scope {card.scope}",
        f"created {card.created_at} · updated {card.updated_at}" + (f" · {validity}" if validity else ""),
    ]
    if card.tags:
        lines.append(f"tags: {', '.join(card.tags)}")
    if card.entities:
        lines.append(f"entities: {', '.join(card.entities)}")
    lines += [f"source: {s.session_id} turns {', '.join(s.turn_ids)}" for s in card.sources]
    return "\n".join([*lines, "", card.content])


def _render_page(page: "CardPage") -> str:
    """One line per card (id, type, tier, date, title), and where the page lies in the total."""
    if not page.cards:
        return f"{page.total} matching cards, none shown (offset {page.offset}, limit {page.limit})" \
            if page.total else "no matching cards"
    rows = [(c.id, c.type, c.tier, c.created_at[:10], _title(c)) for c in page.cards]
    widths = [max(len(row[i]) for row in [*rows, ("ID", "TYPE", "TIER", "DATE")]) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4]
             for row in [("ID", "TYPE", "TIER", "DATE", "TITLE"), *rows]]
    shown = f"{page.offset + 1}-{page.offset + len(page.cards)} of {page.total} cards"
    more = page.offset + len(page.cards) < page.total
    lines.append(shown + (f"; --offset {page.offset + len(page.cards)} for more" if more else ""))
    return "\n".join(lines)


def _title(card: "Card") -> str:
    return one_line(card.title, _TITLE_CHARS)
