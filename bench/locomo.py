"""Retrieval benchmark on the LoCoMo development split, through the product.

    .venv/bin/python bench/locomo.py [--dataset ../shared/datasets/locomo-dev.json] [--half held] [--embedder local]

Each LoCoMo session is ingested as one session (turn id = dia_id, name = speaker, session date
as timestamp) into a fresh data directory per conversation, distilled with the configured
(default: offline) distiller, and each question of categories 1–4 is asked through `recall`.
The returned cards are walked in rank order, counting content tokens (characters / 4) until
the budget; we report the share of the question's evidence turns that the taken cards cite
(evidence @500/@1000/@2000) and the share of the gold answer's content words present in the
text taken within 1000 tokens (answer words @1000). Definitions: shared/datasets/README.md.

The questions are split into two halves by a hash of conversation id and question (`half_of`):
tune ranking on the `tune` half only and quote the `held` half, whose gap to `tune` is the
generalisation check. `--half` picks which of whole / tune / held to print (default: all three);
each row also gives evidence @500 / @1000 and answer words @1000 per category.

`--ceiling` adds what the metrics allow, to tell a ranking loss from a limit of the metric:
"gold first" walks the same returned cards with those citing an evidence turn moved ahead (a
perfect ranking of what recall found), and "evidence in full first" takes the evidence turns'
own text ("Speaker (date): text") before the returned cards (a perfect retriever of whole
turns). Answer words count the gold answer's words, and many answers are inferred ("Likely
no", a count, a word the speakers never used), so even the second stays well under 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.distill.dates import render_date
from openclaw_alaya.models import Session, Turn

BUDGETS = (500, 1000, 2000)
ANSWER_BUDGET = 1000
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# the whole split, the half ranking may be tuned on, and the half kept to check that it generalises
HALVES = ("whole", "tune", "held")
CEILINGS = ("gold_first_evidence@500", "gold_first_answer", "evidence_first_answer")
DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo-dev.json"
# A plain English stop list for the answer-words metric (the metric's, not the product's).
STOP = set(
    "a an the and or but if of at by for with about against between into through during before after"
    " above below to from up down in out on off over under again further then once here there when where"
    " why how all any both each few more most other some such no nor not only own same so than too very"
    " s t can will just don should now i me my myself we our ours ourselves you your yours yourself"
    " yourselves he him his himself she her hers herself it its itself they them their theirs themselves"
    " what which who whom this that these those am is are was were be been being have has had having do"
    " does did doing would could".split()
)


def parse_date(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' → ISO timestamp."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def sessions_of(conversation: dict, sample_id: str) -> list[Session]:
    keys = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    sessions = []
    for key in keys:
        turns = [
            Turn(id=t["dia_id"], role="user", name=t["speaker"], content=_turn_text(t))
            for t in conversation[key]
            if t.get("text")
        ]
        sessions.append(
            Session(
                id=f"{sample_id}-{key.replace('_', '')}",
                started_at=parse_date(conversation.get(f"{key}_date_time", "")),
                title=f"{sample_id} {key}",
                turns=turns,
            )
        )
    return sessions


def _turn_text(turn: dict) -> str:
    caption = turn.get("blip_caption")
    return turn["text"] + (f" [shared a photo: {caption}]" if caption else "")


def evidence_ids(raw: list) -> set[str]:
    found = set()
    for item in raw:
        found.update(re.findall(r"D\d+:\d+", str(item)))
    return found


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if w not in STOP}


def walk(nodes, budget: int) -> tuple[set[str], str]:
    """Cards taken in rank order while their content fits the budget (chars / 4)."""
    cited: set[str] = set()
    texts: list[str] = []
    used = 0.0
    for node in nodes:
        cost = len(node.content) / 4
        if used + cost > budget:
            break
        used += cost
        texts.append(node.content)
        for source in node.sources:
            cited.update(source.turn_ids)
    return cited, "\n".join(texts)


def half_of(sample_id: str, question: str) -> str:
    """'tune' or 'held', by a hash of the question: stable across runs and machines, and both
    halves draw from both conversations."""
    digest = hashlib.sha256(f"{sample_id}\n{question}".encode()).digest()
    return HALVES[1 + digest[0] % 2]


def summarise(scores: list[dict]) -> dict:
    """The figures of a set of scored questions, overall and per category."""
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    by_category: dict[int, list[dict]] = defaultdict(list)
    for s in scores:
        by_category[s["category"]].append(s)
    return {
        "questions": len(scores),
        "evidence": {b: mean([s["evidence"][b] for s in scores]) for b in BUDGETS},
        "answer_words@1000": mean([s["answer"] for s in scores]),
        "evidence@500_by_category": {
            CATEGORIES[c]: mean([s["evidence"][500] for s in v]) for c, v in sorted(by_category.items())
        },
        "evidence@1000_by_category": {
            CATEGORIES[c]: mean([s["evidence"][ANSWER_BUDGET] for s in v]) for c, v in sorted(by_category.items())
        },
        "answer_words@1000_by_category": {
            CATEGORIES[c]: mean([s["answer"] for s in v]) for c, v in sorted(by_category.items())
        },
        "ceiling": {key: mean([s[key] for s in scores]) for key in CEILINGS},
    }


def _day(iso: str | None) -> str:
    """A session's date as the cards write it ("8 May 2023")."""
    return render_date(datetime.fromisoformat(iso).date()) if iso else ""


def answer_share(answer: str, text: str) -> float:
    """The share of the answer's content words present in the text (1 for an answer with none)."""
    words = content_words(answer)
    return len(words & content_words(text)) / len(words) if words else 1.0


def ceilings(nodes, gold: set[str], answer: str, turn_text: dict[str, str]) -> dict[str, float]:
    """The `--ceiling` figures of one question (see the module docstring)."""
    first = sorted(nodes, key=lambda n: not any(gold & set(s.turn_ids) for s in n.sources))
    evidence_text = [turn_text[t] for t in sorted(gold) if t in turn_text]
    used = sum(len(t) / 4 for t in evidence_text)
    _, rest = walk(nodes, max(0, ANSWER_BUDGET - used))
    return {
        "gold_first_evidence@500": len(gold & walk(first, 500)[0]) / len(gold),
        "gold_first_answer": answer_share(answer, walk(first, ANSWER_BUDGET)[1]),
        "evidence_first_answer": answer_share(answer, "\n".join([*evidence_text, rest])),
    }


def bench_config(embedder: str | None = None, settings: list[str] | None = None) -> Config:
    """The default config with `embedder` as embedding.provider and each `KEY=VALUE` of
    `settings` (`--set recall.vector_weight=1`) applied as `alaya config set` would."""
    config = Config()
    if embedder:
        config = config.with_value("embedding.provider", embedder)
    for item in settings or []:
        key, _, value = item.partition("=")
        config = config.with_value(key.strip(), value.strip())
    return config


def ingested(folder: Path, sessions: list[Session], config: Config) -> tuple[Alaya, float]:
    """A fresh data directory at `folder` with `config` and `sessions` ingested in order and
    distilled, and the seconds that took (shared with bench/locomo_plus.py)."""
    memory = Alaya(folder, config=config)
    memory.init()
    start = time.perf_counter()
    for session in sessions:
        memory.ingest(session)
    memory.distill()
    return memory, time.perf_counter() - start


def run(dataset: Path, top_k: int, config: Config) -> dict:
    data = json.loads(dataset.read_text())
    scores: list[dict] = []
    turns = ingest_seconds = recall_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="alaya-locomo-") as tmp:
        for conv in data:
            sessions = sessions_of(conv["conversation"], conv["sample_id"])
            turn_text = {t.id: f"{t.name} ({_day(s.started_at)}): {t.content}" for s in sessions for t in s.turns}
            # a memory of its own per conversation, in one database on the postgres backend
            memory, seconds = ingested(Path(tmp) / conv["sample_id"], sessions,
                                       config.with_value("storage.store", conv["sample_id"]))
            ingest_seconds += seconds
            turns += sum(len(s.turns) for s in sessions)
            for qa in conv["qa"]:
                if qa.get("category") not in CATEGORIES:
                    continue
                gold = evidence_ids(qa.get("evidence", []))
                if not gold:
                    continue
                start = time.perf_counter()
                nodes = memory.recall(qa["question"], top_k=top_k).nodes
                recall_seconds += time.perf_counter() - start
                evidence = {b: len(gold & walk(nodes, b)[0]) / len(gold) for b in BUDGETS}
                _, text = walk(nodes, ANSWER_BUDGET)
                answer = str(qa.get("answer", ""))
                scores.append({"category": qa["category"], "half": half_of(conv["sample_id"], qa["question"]),
                               "evidence": evidence, "answer": answer_share(answer, text),
                               **ceilings(nodes, gold, answer, turn_text)})
    questions = len(scores)
    return {
        "halves": {
            half: summarise([s for s in scores if half == "whole" or s["half"] == half]) for half in HALVES
        },
        "ingest_distill_turns_per_s": turns / ingest_seconds if ingest_seconds else 0.0,
        "recall_ms_mean": 1000 * recall_seconds / questions if questions else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--top-k", type=int, default=100, help="cards asked of recall per question")
    parser.add_argument("--half", choices=HALVES, action="append",
                        help="which questions to report (repeatable; default: whole, tune and held)")
    parser.add_argument("--embedder", help="embedding.provider to use instead of the default (e.g. local)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="a config setting (repeatable)")
    parser.add_argument("--backend", choices=("embedded", "postgres"), default="embedded",
                        help="storage.backend (postgres: the database at ALAYA_DATABASE_URL, issue 34)")
    parser.add_argument("--ceiling", action="store_true",
                        help="also print what a perfect ranking and a perfect retriever would score")
    args = parser.parse_args()
    if not args.dataset.exists():
        print(f"dataset not found: {args.dataset}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    r = run(args.dataset, args.top_k, bench_config(args.embedder, [f"storage.backend={args.backend}", *(args.set or [])]))
    halves = args.half or HALVES
    setup = " ".join([f"embedder {args.embedder}" if args.embedder else "offline default config",
                      f"backend {args.backend}", *(args.set or [])])
    print(f"LoCoMo dev split, categories 1-4, {setup}; halves by question hash")
    print("| half | questions | evidence @500 | evidence @1000 | evidence @2000 | answer words @1000 |")
    print("|---|---|---|---|---|---|")
    for half in halves:
        h = r["halves"][half]
        e = h["evidence"]
        print(f"| {half} | {h['questions']} | {e[500]:.3f} | {e[1000]:.3f} | {e[2000]:.3f} | {h['answer_words@1000']:.3f} |")
    print("\n| half | category | evidence @500 | evidence @1000 | answer words @1000 |")
    print("|---|---|---|---|---|")
    for half in halves:
        h = r["halves"][half]
        for category, evidence in h["evidence@1000_by_category"].items():
            print(f"| {half} | {category} | {h['evidence@500_by_category'][category]:.3f} | {evidence:.3f} | "
                  f"{h['answer_words@1000_by_category'][category]:.3f} |")
    if args.ceiling:
        print("\n| half | gold first: evidence @500 | gold first: answer words @1000 | evidence in full first: answer words @1000 |")
        print("|---|---|---|---|")
        for half in halves:
            c = r["halves"][half]["ceiling"]
            print(f"| {half} | {c[CEILINGS[0]]:.3f} | {c[CEILINGS[1]]:.3f} | {c[CEILINGS[2]]:.3f} |")
    print(f"\ningest + distill: {r['ingest_distill_turns_per_s']:.0f} turns/s; recall: {r['recall_ms_mean']:.1f} ms mean in process;"
          f" {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
