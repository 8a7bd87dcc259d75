"""What a model-backed configuration costs, on the LoCoMo development split, with a stub model.

    .venv/bin/python bench/llm_cost.py [--dataset ../shared/datasets/locomo-dev.json]

Every LoCoMo session is ingested into a fresh data directory per conversation configured with
the `openai` embedder and the `openai` distiller, both pointed at the local stub server
(`openclaw_alaya/llm/stub.py`: real HTTP on 127.0.0.1; it answers one card per turn and
hash-embedder vectors). We count, at the server:

- LLM tokens sent per ingested session token: every chat prompt token (system prompt, turns,
  summary so far, repair and resolver calls included) over the tokens of the ingested turns,
  both with the product's estimator (`text.estimate_tokens`); target ≤ 1.5;
- embedding requests per 1,000 cards: every `/embeddings` request during init and distill
  over the cards stored; target ≤ 12.

Two ways of distilling: `batch` (ingest everything, then `alaya distill`: sessions are
embedded together) and `per-session` (distill after each ingest, as the session-end hook does).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import DEFAULT_DATASET, sessions_of  # noqa: E402

from openclaw_alaya import Alaya  # noqa: E402
from openclaw_alaya.config import Config  # noqa: E402
from openclaw_alaya.llm.stub import StubServer  # noqa: E402
from openclaw_alaya.text import estimate_tokens  # noqa: E402

DIM = 256


def configured(stub: StubServer) -> Config:
    cfg = Config()
    cfg.embedding.provider = "openai"
    cfg.embedding.base_url = stub.url
    cfg.embedding.model = "stub-embedding"
    cfg.embedding.dimensions = DIM
    cfg.distill.llm_provider = "openai"
    cfg.distill.base_url = stub.url
    cfg.distill.model = "stub-chat"
    return cfg


def run(dataset: Path, mode: str) -> dict:
    data = json.loads(dataset.read_text())
    totals = {"session_tokens": 0, "prompt_tokens": 0, "chat_requests": 0, "judge_requests": 0,
              "embedding_requests": 0, "cards": 0, "merged": 0, "contradicted": 0, "sessions": 0}
    with tempfile.TemporaryDirectory(prefix="alaya-llm-cost-") as tmp:
        for conv in data:
            with StubServer(dim=DIM) as stub:
                memory = Alaya(Path(tmp) / f"{conv['sample_id']}-{mode}", config=configured(stub))
                memory.init()
                sessions = sessions_of(conv["conversation"], conv["sample_id"])
                reports = []
                for session in sessions:
                    memory.ingest(session)
                    if mode == "per-session":
                        reports.append(memory.distill(session.id))
                if mode == "batch":
                    reports.append(memory.distill())
                totals["session_tokens"] += sum(estimate_tokens(t.content) for s in sessions for t in s.turns)
                totals["sessions"] += len(sessions)
                totals["prompt_tokens"] += stub.counts["prompt_tokens"]
                totals["chat_requests"] += stub.counts["chat"]
                totals["judge_requests"] += stub.counts["judge"]
                totals["embedding_requests"] += stub.counts["embeddings"]
                for r in reports:
                    totals["cards"] += r.cards
                    totals["merged"] += r.merged
                    totals["contradicted"] += r.contradicted
    totals["tokens_per_session_token"] = totals["prompt_tokens"] / max(1, totals["session_tokens"])
    totals["embedding_requests_per_1000_cards"] = 1000 * totals["embedding_requests"] / max(1, totals["cards"])
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()
    if not args.dataset.exists():
        print(f"dataset not found: {args.dataset}", file=sys.stderr)
        return 1
    print("LoCoMo dev split, openai embedder + openai distiller against the local stub model")
    print("| mode | sessions | session tokens | LLM tokens sent | sent / session token | chat req | judge req "
          "| cards | merged | contradicted | embedding req | req / 1,000 cards |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in ("batch", "per-session"):
        r = run(args.dataset, mode)
        print(f"| {mode} | {r['sessions']} | {r['session_tokens']} | {r['prompt_tokens']} | "
              f"{r['tokens_per_session_token']:.2f} | {r['chat_requests']} | {r['judge_requests']} | {r['cards']} | "
              f"{r['merged']} | {r['contradicted']} | {r['embedding_requests']} | {r['embedding_requests_per_1000_cards']:.1f} |")
    print("targets: sent / session token ≤ 1.5 (prompts included); embedding requests per 1,000 cards ≤ 12")
    return 0


if __name__ == "__main__":
    sys.exit(main())
