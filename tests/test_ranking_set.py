"""The ranking test set of bench/ranking.py (issue 18) stays well-formed: enough questions of
every kind in both languages, and every expected answer names turns that exist in the sessions
the bench ingests, so that the set cannot silently rot when a fixture changes. How well recall
does on it is the bench's business, not a test's."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from openclaw_alaya.ingest.formats import parse_session

ROOT = Path(__file__).resolve().parents[1]
SPEC = json.loads((ROOT / "tests" / "fixtures" / "ranking" / "questions.json").read_text())
QUESTIONS = SPEC["questions"]
KINDS = {"preference", "decision", "time", "person", "how-to", "tag", "recency",  # tag, recency: issue 31
         "cause", "place", "exact"}  # issue 35's "answers first" cases
DEMO = {"which package manager?", "which graph database did we choose", "what did we decide last week",
        "why did the billing service run out of database connections?"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def session_files() -> dict[str, Path]:
    return {p.relative_to(ROOT).as_posix(): p for folder in SPEC["sessions"] for p in (ROOT / folder).iterdir()}


def test_enough_questions_of_every_kind_in_both_languages() -> None:
    assert len(QUESTIONS) >= 40
    assert {q["kind"] for q in QUESTIONS} == KINDS
    assert {q["lang"] for q in QUESTIONS} == {"en", "zh"}
    assert len({q["question"] for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:  # an exact name ("pg-pre-3") is asked of a Chinese note without Chinese words
        if q["kind"] != "exact":
            assert bool(CJK.search(q["question"])) == (q["lang"] == "zh"), q["question"]


def test_the_demo_questions_are_in_the_set() -> None:
    assert {q["question"] for q in QUESTIONS if q.get("demo")} == DEMO


def test_the_set_has_sessions_of_its_own_in_both_languages() -> None:
    own = [p for name, p in session_files().items() if not name.startswith("openclaw_alaya/")]
    assert any(CJK.search(p.read_text(encoding="utf-8")) for p in own)
    assert any(not CJK.search(p.read_text(encoding="utf-8")) for p in own)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q["question"])
def test_every_expected_answer_names_turns_that_exist(q: dict) -> None:
    datetime.fromisoformat(q.get("now", SPEC["now"]))
    expect = q["expect"]
    if "note" in expect:  # a note the bench remembers (issue 31's tag and recency questions)
        assert 0 <= expect["note"] < len(SPEC["notes"])
        return
    path = session_files().get(expect["file"])
    assert path is not None, f"{expect['file']} is not in the ingested folders {SPEC['sessions']}"
    turns = {t.id for t in parse_session(path.read_bytes(), source_name=path.name).turns}
    assert expect["turns"] and set(expect["turns"]) <= turns
