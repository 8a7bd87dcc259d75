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
    returned.record("Ann (8 May 2023): We moved the launch to Friday because the audit slipped.", {("s", "t2")})
    assert returned.without_repeats("Bob (8 May 2023): When is the launch?\nAnn: We moved the launch to Friday…") == (
        "Bob (8 May 2023): When is the launch?"
    )
    assert returned.without_repeats("Ann: We moved the launch to Friday…") == "Ann: We moved the launch to Friday…"
    assert returned.without_repeats("Bob: Thanks!\nAnn: Sure.") == "Bob: Thanks!\nAnn: Sure."  # too short to call a repeat


LONG_QUESTION = "How do we rotate the staging database credentials without downtime?"
LONG_REPLY = (
    "Rotating the staging credentials takes three steps, and the order matters because the "
    "connection pool keeps old sessions open for a while after the password changes.\n\n"
    "First, create the new role password in the secrets store and let the deploy job pick it "
    "up, so that new pods start with the new password while the old pods keep theirs. Wait "
    "until the rollout reports every pod ready before you go on.\n\n"
    "Finally, revoke the old password with `vault write -f database/rotate-root/staging`, "
    "which the pgbouncer health check confirms within a minute."
)


def test_a_reply_returned_only_as_its_opening_is_returned_in_full(memory):
    """The question/answer card keeps the reply's opening (about 300 characters); the rest of
    the reply, in the reply's own cards, comes after it instead of being taken as returned."""
    memory.ingest(session_json("s-rotate", [("user", LONG_QUESTION), ("assistant", LONG_REPLY)]))
    memory.distill()
    nodes = memory.recall(LONG_QUESTION).nodes
    text = "\n".join(n.content for n in nodes)
    assert "\u2026" in nodes[0].content and LONG_QUESTION in nodes[0].content  # the pair, first
    assert "rotate-root/staging" in text and "every pod ready" in text
    assert text.count("Rotating the staging credentials takes three steps") == 1


def test_a_continuation_names_what_it_goes_on_from():
    returned = Returned()
    returned.record("Bob (8 May 2023): When is the launch of the billing service?\nAnn: We moved the launch to Friday because …", {("s", "t1"), ("s", "t2")})
    assert returned.cut_turns == {("s", "t1"), ("s", "t2")}
    assert returned.continued("Ann (8 May 2023): We moved the launch to Friday because the audit slipped.") == (
        "Ann (8 May 2023): … the audit slipped."
    )
    assert returned.continued("Bob (8 May 2023): When is the launch of the billing service?") is None
