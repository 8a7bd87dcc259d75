"""bench/locomo_plus.py (issue 32) stitches and scores as shared/datasets/README.md says, on a
made-up conversation and two made-up samples (the real ones may not be copied into tests): a
cue is its own session of the conversation's speakers with ids plus<i>-c<k>, halves go by
plus_index parity, and a cue that the trigger can reach is counted at every budget, in mrr and in
the session-start block."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import locomo_plus  # noqa: E402
from locomo import bench_config  # noqa: E402

CONVERSATION = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Ben",
        "session_1_date_time": "10:00 am on 1 May, 2023",
        "session_1": [{"speaker": "Ada", "dia_id": "D1:1", "text": "We painted the fence blue on Sunday."},
                      {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice, the garden looks brighter now."}],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "My bike got a flat tyre on the way to work."}],
    },
    "qa": [],
}]


def sample(index: int, cue: str, trigger: str, cue_time: str) -> dict:
    return {"plus_index": index, "conversation": "conv-x", "relation_type": "state", "time_gap": "two weeks later",
            "cue_dialogue": cue, "trigger_query": trigger, "speaker_a": "Ada", "speaker_b": "Ben",
            "cue_time": cue_time, "trigger_time": "2023-06-08 10:00", "cue_session_id": f"conv-x-plus{index}",
            "cue_turn_ids": [f"plus{index}-c{k}" for k in range(1, cue.count("\n") + 2)]}


def test_a_cue_session_is_the_conversations_speakers_with_plus_ids_at_cue_time():
    s = sample(3, "A: I started learning the cello in March.\nB: That takes patience!", "A: My fingers hurt.", "2023-05-20 11:00")
    session = locomo_plus.cue_session(s)
    assert session.id == "conv-x-plus3" and session.started_at == "2023-05-20T11:00:00"
    assert [(t.id, t.name, t.content) for t in session.turns] == [
        ("plus3-c1", "Ada", "I started learning the cello in March."), ("plus3-c2", "Ben", "That takes patience!")]
    assert locomo_plus.trigger_text(s) == "My fingers hurt."
    assert [locomo_plus.half_of({"plus_index": i}) for i in (0, 1, 2)] == ["A", "B", "A"]


def test_a_reachable_cue_is_found_at_every_budget_in_mrr_and_in_the_injected_block(tmp_path):
    samples = [sample(0, "A: I adopted a grey kitten named Pixel.", "A: Pixel the kitten knocked my grey mug over.", "2023-05-15 09:00"),
               sample(1, "A: I signed up for a marathon in October.", "A: What should I cook tonight?", "2023-05-16 09:00")]
    dataset, conversations = tmp_path / "plus.json", tmp_path / "locomo.json"
    dataset.write_text(json.dumps(samples))
    conversations.write_text(json.dumps(CONVERSATION))
    r = locomo_plus.run(dataset, conversations, 100, bench_config())
    a, b = r["halves"]["A"], r["halves"]["B"]
    assert a["samples"] == 1 and b["samples"] == 1 and r["halves"]["all"]["samples"] == 2
    assert a["cue"] == {500: 1.0, 1000: 1.0, 2000: 1.0} and a["mrr"] == 1.0 and a["inject"] == 1.0
    assert b["cue"][2000] < 1.0  # a trigger with nothing of its cue is not handed the cue
