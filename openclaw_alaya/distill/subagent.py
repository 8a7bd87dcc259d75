"""A sub-agent's session becomes one card for its parent (docs/provenance.md).

A sub-agent works for its parent: its transcript is the parent's detour (tool output, drafts,
retries), not something the parent's later sessions should recall turn by turn. So its session
is kept whole in L3 (`alaya trace` and `memory_get` reach every turn of it), and distilled into
one bounded summary: the task it was given and what it reported back. At most
`provenance.subagent_read_tokens` of the transcript is read: the task, then its last turns back
from the end (a sub-agent's final turns are its report). The card's id is fixed per session, so
a sub-agent that runs again updates its summary instead of adding another.
"""

from __future__ import annotations

from ..models import CardDraft, DistillResult, Session, Turn
from ..text import estimate_tokens
from .entities import extract_entities
from .heuristic import trim_title

SUMMARY_TAG = "subagent-summary"
TASK_CHARS = 400
RESULT_CHARS = 1600
SUMMARY_IMPORTANCE = 0.6


def window(session: Session, read_tokens: int) -> tuple[Turn | None, list[Turn]]:
    """(the task, the last turns within the budget, in session order): what the summary reads."""
    task = next((t for t in session.turns if t.role == "user"), None)
    left = read_tokens - (estimate_tokens(task.content[:TASK_CHARS * 4]) if task else 0)
    tail: list[Turn] = []
    for turn in reversed(session.turns):
        if turn is task:
            break
        cost = estimate_tokens(turn.content)
        if cost > left:
            break
        tail.append(turn)
        left -= cost
    return task, tail[::-1]


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3].rstrip()
    return f"{head} … {text[-(limit - len(head) - 3):].lstrip()}"


class SubagentSummary:
    """One `subagent-summary` card: "Task: … Result: …", bounded (`TASK_CHARS`, `RESULT_CHARS`)."""

    name = "subagent-summary"

    def __init__(self, read_tokens: int) -> None:
        self.read_tokens = read_tokens

    def distill(self, session: Session, start: int = 0) -> DistillResult:
        """The whole session is summarised again whatever `start` is: the summary card replaces
        the one made from fewer turns."""
        task, tail = window(session, self.read_tokens)
        reports = [t for t in tail if t.role == "assistant"] or tail
        if task is None and not reports:
            return DistillResult()
        task_text = _cut(task.content, TASK_CHARS) if task else ""
        result = _cut(reports[-1].content, RESULT_CHARS) if reports else "(no report yet)"
        parent = f" for session {session.parent}" if session.parent else ""
        content = f"Sub-agent{parent}. Task: {task_text or '(not recorded)'} Result: {result}"
        cited = ([task.id] if task else []) + [t.id for t in reports[-1:]]
        return DistillResult(cards=[CardDraft(
            key=SUMMARY_TAG,
            title=trim_title(f"Sub-agent: {task_text or result}"),
            content=content,
            type="concept",
            tags=[SUMMARY_TAG],
            entities=extract_entities(f"{task_text} {result}", set()),
            importance=SUMMARY_IMPORTANCE,
            turn_ids=cited,
        )])
