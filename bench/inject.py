"""What session start injects, against plain recall, on the LoCoMo development split (issue 33).

    .venv/bin/python bench/inject.py [--dataset ../shared/datasets/locomo-dev.json] [--budget 1200]

Each conversation is ingested and distilled as bench/locomo.py does (`ingested`);
each question of categories 1–4 is then the first prompt of a new session: the block that
`alaya hook session-start` would inject (`bridge.inject.build`, with the hook's configured
settings) at `--budget` tokens (default: `hook.budget_tokens`). Reported, as shares of the
questions' evidence turns and of their gold answers' content words (shared/datasets/README.md):

- inject: the evidence turns the block's cards cite (the `[card-…]` ids in it) and the answer
  words in the block's text;
- recall: recall's cards walked in rank order to the same budget (bench/locomo.py `walk`);
- summary: what the integrated summary section alone holds (its cards and text), and its
  share of the block's tokens, to see whether it earns its place.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from locomo import CATEGORIES, DEFAULT_DATASET, answer_share, bench_config, evidence_ids, ingested, sessions_of, walk

from openclaw_alaya.bridge.inject import StartRequest, build
from openclaw_alaya.text import estimate_tokens

_CARD_ID = re.compile(r"\[(card-[^\]]+)\]")
_SUMMARY = "### Integrated summary"


def request_for(memory, prompt: str, budget: int | None) -> StartRequest:
    """The request the hook makes for a new session's first prompt (cli/hook.py), from config."""
    cfg = memory.config.hook
    return StartRequest(agent_id="shared", session_id=None, prompt=prompt,
                        budget=cfg.budget_tokens if budget is None else budget, max_cards=cfg.max_cards,
                        card_chars=cfg.card_chars, summary_max_age_hours=cfg.summary_max_age_hours,
                        short_term_days=cfg.short_term_days, tier_split=cfg.tier_split.model_dump(),
                        core_share=memory.config.core.inject_share)


def summary_part(block: str) -> str:
    """The integrated summary section of a block ("" when it has none)."""
    if _SUMMARY not in block:
        return ""
    rest = block.split(_SUMMARY, 1)[1]
    return re.split(r"\n#{2,3} |\n</alaya-memory>", rest, maxsplit=1)[0]


def cited(memory, text: str) -> set[str]:
    """The turns the cards named in `text` cite."""
    ids = list(dict.fromkeys(_CARD_ID.findall(text)))
    return {t for card in (memory.get(ids) if ids else []) for s in card.sources for t in s.turn_ids}


def run(dataset: Path, budget: int | None) -> dict:
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="alaya-inject-") as tmp:
        for conv in json.loads(dataset.read_text()):
            sessions = sessions_of(conv["conversation"], conv["sample_id"])
            memory, _ = ingested(Path(tmp) / conv["sample_id"], sessions, bench_config())
            for qa in conv["qa"]:
                gold = evidence_ids(qa.get("evidence", []))
                if qa.get("category") not in CATEGORIES or not gold:
                    continue
                request = request_for(memory, qa["question"], budget)
                block = build(memory, request)
                summary = summary_part(block)
                taken, text = walk(memory.recall(qa["question"], top_k=100, log_access=False).nodes, request.budget)
                answer = str(qa.get("answer", ""))
                rows.append({
                    "inject_evidence": len(gold & cited(memory, block)) / len(gold),
                    "inject_answer": answer_share(answer, block),
                    "recall_evidence": len(gold & taken) / len(gold),
                    "recall_answer": answer_share(answer, text),
                    "summary_evidence": len(gold & cited(memory, summary)) / len(gold),
                    "summary_answer": answer_share(answer, summary) if summary else 0.0,
                    "summary_tokens_share": estimate_tokens(summary) / max(estimate_tokens(block), 1),
                    "block_tokens": estimate_tokens(block),
                })
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]} if rows else {}
    return {"questions": len(rows), "budget": request.budget if rows else budget, **mean}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--budget", type=int, help="tokens (default: the configured hook.budget_tokens)")
    args = parser.parse_args()
    if not args.dataset.exists():
        print(f"dataset not found: {args.dataset}", file=sys.stderr)
        return 1
    r = run(args.dataset, args.budget)
    print(f"{r['questions']} questions, budget {r['budget']} tokens (block {r.get('block_tokens', 0):.0f} on average)")
    for what in ("inject", "recall", "summary"):
        print(f"  {what:8} evidence {r.get(what + '_evidence', 0):.3f}  answer words {r.get(what + '_answer', 0):.3f}")
    print(f"  summary share of the block's tokens: {r.get('summary_tokens_share', 0):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
