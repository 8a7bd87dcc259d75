"""Contentless card titles from the offline distiller, on the demo sessions and LoCoMo dev.

    .venv/bin/python bench/titles.py [--dataset ../shared/datasets/locomo-dev.json]
        [--save titles.json] [--against old-titles.json]

Distills every session in memory (no store) and counts the cards whose title says nothing
(openclaw_alaya/distill/titles.py has the rule). ``--save`` writes {card key: title};
``--against`` reads such a file from another version and reports how many titles changed and
how many of its titles were contentless by today's rule.

It also reports the rules, preferences and decisions of tests/fixtures/card_types.json (issue 35,
English and Chinese): how many get their card type and a title that keeps their point (a
decision's object: "… NOT to use Redis; use Postgres instead").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from locomo import DEFAULT_DATASET, sessions_of

import openclaw_alaya
from openclaw_alaya.distill import HeuristicDistiller
from openclaw_alaya.distill.heuristic import title_judge
from openclaw_alaya.ingest.formats import parse_session
from openclaw_alaya.models import Session, Turn

DEMO = Path(openclaw_alaya.__file__).resolve().parent / "demo"
TYPE_CASES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "card_types.json"


def corpora(dataset: Path) -> dict[str, list[Session]]:
    """The bundled demo sessions and the LoCoMo dev conversations, by corpus name."""
    demo = [parse_session(p.read_bytes(), source_name=p.name) for p in sorted(DEMO.iterdir()) if p.is_file()]
    locomo = [s for conv in json.loads(dataset.read_text()) for s in sessions_of(conv["conversation"], conv["sample_id"])]
    return {"demo": demo, "locomo-dev": locomo}


def titles_of(sessions: list[Session]) -> dict[str, tuple[str, Session]]:
    """Each card's title with its session (whose speakers the contentless rule leaves out)."""
    out: dict[str, tuple[str, Session]] = {}
    for session in sessions:
        for card in HeuristicDistiller().distill(session).cards:
            out[card.key] = (card.title, session)
    return out


def report(name: str, titles: dict[str, tuple[str, Session]], old: dict[str, str] | None) -> list[str]:
    """One line for a corpus: cards, contentless titles now, and against ``old`` if given."""
    judges = {id(s): title_judge(s) for _, s in titles.values()}
    empty = [t for t, s in titles.values() if judges[id(s)].contentless(t)]
    line = f"{name}: {len(titles)} cards, {len(empty)} contentless titles"
    if old is not None:
        shared = [k for k in titles if k in old]
        changed = sum(1 for k in shared if old[k] != titles[k][0])
        old_empty = sum(1 for k in shared if judges[id(titles[k][1])].contentless(old[k]))
        line += f"; against the saved titles: {changed} of {len(shared)} changed, {old_empty} were contentless"
    return [line] + [f"  contentless: {t!r}" for t in empty[:20]]


def typed(cases: list[dict]) -> list[str]:
    """Per language: the statements typed right, and those whose title keeps their point."""
    by_lang: dict[str, list[tuple[bool, bool]]] = {}
    wrong = []
    for case in cases:
        session = Session(id="types", started_at="2026-03-01T09:00:00Z",
                          turns=[Turn(id="t1", role="user", content=case["text"])])
        card = HeuristicDistiller().distill(session).cards[0]
        right = (card.type == case["type"], all(w in card.title for w in case["keeps"]))
        by_lang.setdefault(case["lang"], []).append(right)
        if not all(right):
            wrong.append(f"  not by its point: [{card.type}] {card.title!r}")
    return [f"types {lang}: {sum(t for t, _ in rows)} of {len(rows)} typed right, "
            f"{sum(k for _, k in rows)} of {len(rows)} titles keep their point" for lang, rows in sorted(by_lang.items())] + wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--save", type=Path, help="write {card key: title} here")
    parser.add_argument("--against", type=Path, help="a --save file from another version")
    args = parser.parse_args()
    if not args.dataset.exists():
        print(f"dataset not found: {args.dataset}", file=sys.stderr)
        return 1
    old = json.loads(args.against.read_text()) if args.against else None
    saved: dict[str, str] = {}
    for name, sessions in corpora(args.dataset).items():
        titles = titles_of(sessions)
        saved.update({k: t for k, (t, _) in titles.items()})
        print("\n".join(report(name, titles, old)))
    print("\n".join(typed(json.loads(TYPE_CASES.read_text(encoding="utf-8"))["cases"])))
    if args.save:
        args.save.write_text(json.dumps(saved, ensure_ascii=False, indent=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
