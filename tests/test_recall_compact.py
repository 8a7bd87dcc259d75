"""What recall returns carries no line twice (issue 18, recall/compact.py): a question/answer
card and the reply's own card are both returned, and the later one leaves out the reply the
earlier one already gave, keeping its sources."""

from __future__ import annotations

from helpers import session_json

from openclaw_alaya.recall.compact import Returned

QUESTION = "Which embedded database did we pick for the graph layer in the end?"
REPLY = ("We picked Kuzu for the graph layer, because it embeds in the process, needs no server "
         "to run and answers the multi-hop queries quickly enough.")


def test_a_reply_is_returned_once(memory):
    memory.ingest(session_json("s-db", [("user", QUESTION), ("assistant", REPLY)]))
    memory.distill()
    nodes = memory.recall("Kuzu embeds in the process, needs no server, multi-hop queries").nodes
    assert len(nodes) == 2 and {t for n in nodes for s in n.sources for t in s.turn_ids} == {"t1", "t2"}
    text = "\n".join(n.content for n in nodes)
    assert text.count("We picked Kuzu") == 1 and QUESTION in text
    assert all(n.sources for n in nodes)


def test_only_lines_already_returned_are_left_out():
    returned = Returned()
    returned.record("Ann (8 May 2023): We moved the launch to Friday because the audit slipped.")
    assert returned.without_repeats("Bob (8 May 2023): When is the launch?\nAnn: We moved the launch to Friday…") == (
        "Bob (8 May 2023): When is the launch?"
    )
    assert returned.without_repeats("Ann: We moved the launch to Friday…") == "Ann: We moved the launch to Friday…"
    assert returned.without_repeats("Bob: Thanks!\nAnn: Sure.") == "Bob: Thanks!\nAnn: Sure."  # too short to call a repeat
