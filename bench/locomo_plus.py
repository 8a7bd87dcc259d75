"""LoCoMo-Plus cue recall on the development split, through the product (issue 32, must-show 1).

    .venv/bin/python bench/locomo_plus.py [--dataset ../shared/datasets/locomo-plus-dev.json]
        [--locomo ../shared/datasets/locomo-dev.json] [--half A|B|all] [--embedder local]
        [--set recall.vector_weight=1] [--json]

Each LoCoMo-Plus sample is a short cue dialogue and, weeks later, a trigger that shares none of
its words but only makes sense with it. As shared/datasets/README.md says (stitching and metric),
each dev conversation of LoCoMo (`bench/locomo.py`'s sessions: turn id = dia_id, session date)
is ingested with all the cue sessions stitched into it: sample *i*'s cue is its own session
(`cue_session_id`, at `cue_time`), turn *k* with id `plus<i>-c<k>`, spoken by the
conversation's speaker A or B as the line's `A:`/`B:` says. Sessions go in in time order into a
fresh data directory per conversation (default config, `--embedder` as embedding.provider), then
one distill. Each trigger (its text without the `A:`) is asked through `recall` with `now` = the
sample's `trigger_time`; the returned cards are walked in rank order under 500 / 1000 / 2000
tokens (characters / 4, `locomo.walk`):

- cue@B: the share of the cue's turn ids that the taken cards cite as sources;
- mrr: 1 / rank of the first card citing a cue turn among those taken within 2000 tokens (0 if
  none);
- inject: the cue@B share for the cards cited by id (`[card-id]`) in session-start's injected
  text (`bridge.inject.build`, the default hook config, the trigger as the prompt, `now` = the
  trigger time).

Halves (`--half`): A = even `plus_index`, B = odd (both draw from both conversations, ~40 each);
tune on one, quote the other. `all` (the default) prints both halves and the whole set.
Each trigger is asked in `plus_index` order; recall logs its accesses, as in bench/locomo.py.

Check against shared/datasets/README.md's "this project, offline default" row (0.037 / 0.080 /
0.099): this harness gives 0.037 / 0.074 / 0.105 with the default config, inject 0.037, i.e.
within one cue turn (1/162 = 0.006) at each budget; with the wall clock as recall's `now`
instead of the trigger time it gives 0.037 / 0.080 / 0.105.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from locomo import BUDGETS, DEFAULT_DATASET as LOCOMO_DATASET, bench_config, ingested, sessions_of, walk  # noqa: E402

from openclaw_alaya.bridge.inject import StartRequest, build  # noqa: E402
from openclaw_alaya.config import Config  # noqa: E402
from openclaw_alaya.models import Session, Turn  # noqa: E402

DEFAULT_DATASET = LOCOMO_DATASET.with_name("locomo-plus-dev.json")
HALVES = ("A", "B")
MRR_BUDGET = 2000
LINE = re.compile(r"^\s*([AB])\s*:\s*(.*)$")
CARD_ID = re.compile(r"^- \[([^\]\s]+)\] ", re.MULTILINE)  # an item of the injected block that is a card


def half_of(sample: dict) -> str:
    """'A' for an even plus_index, 'B' for an odd one: stable, and both halves span both conversations."""
    return HALVES[sample["plus_index"] % 2]


def when(text: str) -> datetime:
    """A dataset time ('2023-10-15 10:55', naive like LoCoMo's) as a datetime, UTC as the
    clock reads a time without a zone (clock.read_instant)."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)


def cue_session(sample: dict) -> Session:
    """The sample's cue dialogue as its own session, turn k (from 1) with id plus<i>-c<k>."""
    turns = []
    lines = [m for m in (LINE.match(raw) for raw in sample["cue_dialogue"].splitlines()) if m and m.group(2).strip()]
    for turn_id, match in zip(sample["cue_turn_ids"], lines):
        speaker = sample["speaker_a"] if match.group(1) == "A" else sample["speaker_b"]
        turns.append(Turn(id=turn_id, role="user", name=speaker, content=match.group(2).strip()))
    return Session(id=sample["cue_session_id"], started_at=when(sample["cue_time"]).replace(tzinfo=None).isoformat(),
                   title=f"{sample['conversation']} plus{sample['plus_index']}", turns=turns)


def trigger_text(sample: dict) -> str:
    """The trigger's words, without the speaker mark."""
    match = LINE.match(sample["trigger_query"])
    return (match.group(2) if match else sample["trigger_query"]).strip()


def score(nodes: list, cue: set[str]) -> dict:
    """cue@B per budget and the reciprocal rank of the first card citing a cue turn."""
    found = {b: len(cue & walk(nodes, b)[0]) / len(cue) for b in BUDGETS}
    rr, used = 0.0, 0.0
    for rank, node in enumerate(nodes, 1):
        used += len(node.content) / 4
        if used > MRR_BUDGET:
            break
        if any(cue & set(s.turn_ids) for s in node.sources):
            rr = 1 / rank
            break
    return {"cue": found, "rr": rr}


def injected_share(memory, sample: dict, cue: set[str]) -> float:
    """The share of the cue's turns cited by the cards the session-start block names."""
    cfg = memory.config.hook
    request = StartRequest(prompt=trigger_text(sample), budget=cfg.budget_tokens, max_cards=cfg.max_cards,
                           card_chars=cfg.card_chars, summary_max_age_hours=cfg.summary_max_age_hours,
                           short_term_days=cfg.short_term_days, tier_split=cfg.tier_split.model_dump(),
                           core_share=memory.config.core.inject_share, now=when(sample["trigger_time"]))
    ids = list(dict.fromkeys(CARD_ID.findall(build(memory, request))))
    cited = {t for card in (memory.get(ids) if ids else []) for s in card.sources for t in s.turn_ids}
    return len(cue & cited) / len(cue)


def summarise(rows: list[dict]) -> dict:
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    by_relation: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_relation[r["relation"]].append(r)
    return {
        "samples": len(rows),
        "cue": {b: mean([r["cue"][b] for r in rows]) for b in BUDGETS},
        "mrr": mean([r["rr"] for r in rows]),
        "inject": mean([r["inject"] for r in rows]),
        "cue@2000_by_relation": {k: mean([r["cue"][2000] for r in v]) for k, v in sorted(by_relation.items())},
    }


def run(dataset: Path, locomo: Path, top_k: int, config: Config) -> dict:
    samples = sorted(json.loads(dataset.read_text()), key=lambda s: s["plus_index"])
    conversations = {c["sample_id"]: c for c in json.loads(locomo.read_text())}
    rows: list[dict] = []
    turns = ingest_seconds = recall_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="alaya-locomo-plus-") as tmp:
        for conv_id in sorted({s["conversation"] for s in samples}):
            mine = [s for s in samples if s["conversation"] == conv_id]
            sessions = sessions_of(conversations[conv_id]["conversation"], conv_id) + [cue_session(s) for s in mine]
            sessions.sort(key=lambda s: s.started_at or "")
            memory, seconds = ingested(Path(tmp) / conv_id, sessions, config)
            ingest_seconds += seconds
            turns += sum(len(s.turns) for s in sessions)
            for sample in mine:
                cue = set(sample["cue_turn_ids"])
                start = time.perf_counter()
                nodes = memory.recall(trigger_text(sample), top_k=top_k, now=when(sample["trigger_time"])).nodes
                recall_seconds += time.perf_counter() - start
                rows.append({"plus_index": sample["plus_index"], "half": half_of(sample),
                             "relation": sample["relation_type"], **score(nodes, cue),
                             "inject": injected_share(memory, sample, cue)})
    return {
        "halves": {"all": summarise(rows), **{h: summarise([r for r in rows if r["half"] == h]) for h in HALVES}},
        "ingest_distill_turns_per_s": turns / ingest_seconds if ingest_seconds else 0.0,
        "recall_ms_mean": 1000 * recall_seconds / len(rows) if rows else 0.0,
        "embedder": config.embedding.provider,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DATASET, help="the LoCoMo dev conversations the cues stitch into")
    parser.add_argument("--top-k", type=int, default=100, help="cards asked of recall per trigger")
    parser.add_argument("--half", choices=(*HALVES, "all"), default="all",
                        help="A: even plus_index, B: odd; all: both halves and the whole set")
    parser.add_argument("--embedder", help="embedding.provider to use instead of the default (e.g. local)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="a config setting (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    for path in (args.dataset, args.locomo):
        if not path.exists():
            print(f"dataset not found: {path}", file=sys.stderr)
            return 1
    r = run(args.dataset, args.locomo, args.top_k, bench_config(args.embedder, args.set))
    halves = ("all", *HALVES) if args.half == "all" else (args.half,)
    if args.json:
        print(json.dumps({**r, "halves": {h: r["halves"][h] for h in halves}}, indent=1))
        return 0
    setup = " ".join([f"embedder {args.embedder}" if args.embedder else "offline default config", *(args.set or [])])
    print(f"LoCoMo-Plus dev samples, {setup}; half A = even plus_index, B = odd")
    print("| half | samples | cue@500 | cue@1000 | cue@2000 | mrr | inject |")
    print("|---|---|---|---|---|---|---|")
    for half in halves:
        h = r["halves"][half]
        c = h["cue"]
        print(f"| {half} | {h['samples']} | {c[500]:.3f} | {c[1000]:.3f} | {c[2000]:.3f} | {h['mrr']:.3f} | {h['inject']:.3f} |")
    print("\n| half | relation | cue@2000 |")
    print("|---|---|---|")
    for half in halves:
        for relation, value in r["halves"][half]["cue@2000_by_relation"].items():
            print(f"| {half} | {relation} | {value:.3f} |")
    print(f"\ningest + distill: {r['ingest_distill_turns_per_s']:.0f} turns/s; recall: {r['recall_ms_mean']:.1f} ms mean in process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
