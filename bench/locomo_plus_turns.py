"""Per-turn recall on LoCoMo-Plus (issue 32, must-show 2): does a later message bring its cue back,
and how often does the gate speak when nothing was needed?

    .venv/bin/python bench/locomo_plus_turns.py [--embedder local] [--set KEY=VALUE] [--tune A|B] [--json]

The stores are bench/locomo_plus.py's (each dev conversation of LoCoMo with all its stitched cue
sessions, default config, one distill). Each message goes through `bridge.turn` exactly as
`alaya hook turn` (what the plugin asks the daemon on every later user message) runs it: `gate`
once per message, then `turn` for each similarity floor tried, on those candidates. A message
is asked in a session that is not stored yet, with the cards of session start's block for an
empty first message (the hottest and newest: what a session opened with a greeting shows) as
`exclude`, and `now` = the trigger's time.

- triggers: each sample's trigger as the message. reach = the share of triggers whose turn
  block cites a cue turn (the cue reaches the model's request); injected = the share that got a
  block at all; precision = of those, the share that cite the cue.
- ordinary turns, LoCoMo's own (those of the last `--ordinary-sessions` sessions with
  `turn_min_words` content words): injected = the share that got a block. Those of the same
  conversation are asked in their own session (its cards are left out, as the conversation
  holds them); many of them do continue earlier sessions, so theirs is an upper bound on
  needless injections. Those of the other dev conversation (other people, other lives) need
  nothing of this store: every block they get is needless.
- candidates: the share of triggers whose cue any of the gate's candidates cites, whatever the
  floor: what recall lets the gate reach at all.

The floor is tuned on one half (`--tune`, default A: even plus_index, and every other ordinary
turn) as the highest reach with at most `--max-ordinary` of the other conversation's turns
injected, then reported on the other half.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from locomo import DEFAULT_DATASET as LOCOMO_DATASET, bench_config, ingested, sessions_of  # noqa: E402
from locomo_plus import CARD_ID, DEFAULT_DATASET, HALVES, cue_session, half_of, trigger_text, when  # noqa: E402

from openclaw_alaya.bridge.inject import StartRequest, build  # noqa: E402
from openclaw_alaya.bridge.turn import TurnRequest, gate, request_for, turn  # noqa: E402
from openclaw_alaya.text import content_words, estimate_tokens  # noqa: E402

FLOORS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9)  # e5 cosines sit high
ASKED_IN = "perturn-bench-session"  # the session the triggers are asked in: not stored


def opening_cards(memory, now) -> frozenset[str]:
    """The cards session start's block names for an empty first message (default hook config)."""
    cfg = memory.config.hook
    request = StartRequest(prompt="", budget=cfg.budget_tokens, max_cards=cfg.max_cards, card_chars=cfg.card_chars,
                           summary_max_age_hours=cfg.summary_max_age_hours, short_term_days=cfg.short_term_days,
                           tier_split=cfg.tier_split.model_dump(), core_share=memory.config.core.inject_share, now=now)
    return frozenset(CARD_ID.findall(build(memory, request)))


def per_floor(memory, request: TurnRequest) -> tuple[set[str], dict[float, tuple[set[str], int]]]:
    """(the turn ids all the gate's candidates cite, {floor: (the turn ids the block's cards
    cite, the block's tokens)}): one gate, then `turn` at each floor on its candidates."""
    scored = gate(memory, request)
    out = {}
    for floor in FLOORS:
        result = turn(memory, replace(request, min_similarity=floor), scored)
        out[floor] = (cited_by(result.nodes) if result.text else set(), estimate_tokens(result.text) if result.text else 0)
    return cited_by([n for n, _ in scored]), out


def cited_by(nodes) -> set[str]:
    return {t for node in nodes for s in node.sources for t in s.turn_ids}


def ordinary_turns(sessions, count: int, min_words: int):
    """(session id, text) of the turns of the last `count` sessions with `min_words` content words."""
    return [(s.id, t.content) for s in sessions[-count:] for t in s.turns if len(content_words(t.content)) >= min_words]


def run(dataset: Path, locomo: Path, config, ordinary_sessions: int) -> dict:
    samples = sorted(json.loads(dataset.read_text()), key=lambda s: s["plus_index"])
    conversations = {c["sample_id"]: c for c in json.loads(locomo.read_text())}
    conv_ids = sorted({s["conversation"] for s in samples})
    plain = {c: sessions_of(conversations[c]["conversation"], c) for c in conv_ids}
    triggers: list[dict] = []
    ordinary: dict[str, list[dict]] = {"same": [], "other": []}
    asked, seconds = 0, 0.0

    def ask(text: str, session_id: str, now) -> tuple[set[str], dict]:
        nonlocal asked, seconds
        start = time.perf_counter()
        found = per_floor(memory, request_for(memory, text, session_id=session_id, exclude=exclude, now=now))
        seconds, asked = seconds + time.perf_counter() - start, asked + 1
        return found

    with tempfile.TemporaryDirectory(prefix="alaya-locomo-plus-turns-") as tmp:
        for conv_id in conv_ids:
            mine = [s for s in samples if s["conversation"] == conv_id]
            sessions = sorted(plain[conv_id] + [cue_session(s) for s in mine], key=lambda s: s.started_at or "")
            memory, _ = ingested(Path(tmp) / conv_id, sessions, config)
            now = when(mine[0]["trigger_time"])
            exclude = opening_cards(memory, now)
            min_words = memory.config.hook.turn_min_words
            for sample in mine:
                cue = set(sample["cue_turn_ids"])
                candidates, floors = ask(trigger_text(sample), ASKED_IN, when(sample["trigger_time"]))
                triggers.append({"half": half_of(sample), "relation": sample["relation_type"], "candidates": bool(cue & candidates),
                                 "floors": {f: (bool(cited), bool(cue & cited), tokens) for f, (cited, tokens) in floors.items()}})
            others = [c for c in conv_ids if c != conv_id]
            # the same conversation's turns, in their own session (its cards are left out); the
            # other conversation's, which this store knows nothing of
            for kind, texts in (("same", ordinary_turns(plain[conv_id], ordinary_sessions, min_words)),
                                ("other", [(ASKED_IN, t) for c in others for _, t in ordinary_turns(plain[c], ordinary_sessions, min_words)])):
                for session_id, text in texts:
                    _, floors = ask(text, session_id, now)
                    ordinary[kind].append({"half": HALVES[len(ordinary[kind]) % 2],
                                           "floors": {f: (bool(cited), tokens) for f, (cited, tokens) in floors.items()}})
    return {"triggers": triggers, "ordinary": ordinary, "ms_per_message": 1000 * seconds / max(asked, 1),
            "embedder": config.embedding.provider}


def figures(triggers: list[dict], ordinary: dict[str, list[dict]], floor: float) -> dict:
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    rows = [t["floors"][floor] for t in triggers]
    injected = [r for r in rows if r[0]]
    out = {"triggers": len(rows), "reach": mean([r[1] for r in rows]), "injected": mean([r[0] for r in rows]),
           "precision": mean([r[1] for r in injected]), "trigger_tokens": mean([r[2] for r in rows]),
           "candidates_reach": mean([t["candidates"] for t in triggers])}
    for kind, messages in ordinary.items():
        plain = [o["floors"][floor] for o in messages]
        out.update({f"{kind}_turns": len(plain), f"{kind}_injected": mean([r[0] for r in plain]),
                    f"{kind}_tokens": mean([r[1] for r in plain])})
    return out


def halved(result: dict, half: str, floor: float) -> dict:
    return figures([t for t in result["triggers"] if t["half"] == half],
                   {k: [o for o in v if o["half"] == half] for k, v in result["ordinary"].items()}, floor)


def tuned(result: dict, half: str, max_ordinary: float) -> float:
    """The floor with the highest reach on `half` whose messages from the other conversation
    (which need nothing of this store) got a block at most `max_ordinary` of the time; on a tie
    the lowest: the needless injections are bounded already, and a lower floor lets more of the
    messages that do name an old memory bring it back."""
    allowed = [f for f in FLOORS if halved(result, half, f)["other_injected"] <= max_ordinary] or [max(FLOORS)]
    return max(allowed, key=lambda f: (halved(result, half, f)["reach"], -f))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DATASET)
    parser.add_argument("--embedder", help="embedding.provider to use instead of the default (e.g. local)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="a config setting (repeatable), as bench/locomo_plus.py")
    parser.add_argument("--tune", choices=HALVES, default="A", help="the half the floor is chosen on")
    parser.add_argument("--max-ordinary", type=float, default=0.1,
                        help="share of the other conversation's turns that may get a block, at most")
    parser.add_argument("--ordinary-sessions", type=int, default=3, help="last sessions per conversation whose turns are the ordinary messages")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for path in (args.dataset, args.locomo):
        if not path.exists():
            print(f"dataset not found: {path}", file=sys.stderr)
            return 1
    result = run(args.dataset, args.locomo, bench_config(args.embedder, args.set), args.ordinary_sessions)
    floor = tuned(result, args.tune, args.max_ordinary)
    other = next(h for h in HALVES if h != args.tune)
    table = {f: {h: halved(result, h, f) for h in HALVES} for f in FLOORS}
    if args.json:
        print(json.dumps({"embedder": result["embedder"], "tuned_on": args.tune, "floor": floor,
                          "reported": table[floor][other], "ms_per_message": result["ms_per_message"],
                          "by_floor": {str(f): v for f, v in table.items()}}, indent=1))
        return 0
    x = table[floor][other]
    print(f"LoCoMo-Plus dev, per-turn recall (bridge/turn.py), embedder {result['embedder']}; floor tuned on half "
          f"{args.tune} (other-conversation turns injected <= {args.max_ordinary}): {floor}; cue among the gate's "
          f"candidates: {x['candidates_reach']:.3f} of half {other}'s triggers")
    print("| floor | half | reach | injected | precision | tokens/trigger | same-conv. turns injected | other-conv. turns injected | tokens/other |")
    print("|---|---|---|---|---|---|---|---|---|")
    for f in FLOORS:
        for h in HALVES:
            y = table[f][h]
            mark = " **" if f == floor and h == other else ""
            print(f"| {f}{mark} | {h} | {y['reach']:.3f} | {y['injected']:.3f} | {y['precision']:.3f} | {y['trigger_tokens']:.0f} | "
                  f"{y['same_injected']:.3f} | {y['other_injected']:.3f} | {y['other_tokens']:.0f} |")
    print(f"\nreported on half {other} at floor {floor}: reach {x['reach']:.3f}, injected {x['injected']:.3f}, "
          f"precision {x['precision']:.3f} ({x['triggers']} triggers); turns injected: same conversation "
          f"{x['same_injected']:.3f} ({x['same_turns']}), other conversation {x['other_injected']:.3f} ({x['other_turns']}); "
          f"{result['ms_per_message']:.0f} ms per message in process (gate + {len(FLOORS)} floors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
