"""Rules, preferences and decisions typed and titled by their point (issue 35), English and
Chinese, through the offline distiller: a team's rule ("Never deploy checkout on Fridays.",
告警只发到飞书群) is a `preference` (what someone insists on: intent.py answers "which …
do we use" with it, and session start shows it as one), and a decision's title keeps what was
chosen when a scope opens it (session start shortens cards to their titles first). The cases
are tests/fixtures/card_types.json, which bench/titles.py reports on as well."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_alaya.distill import HeuristicDistiller
from openclaw_alaya.models import Session, Turn

CASES = json.loads((Path(__file__).parent / "fixtures" / "card_types.json").read_text(encoding="utf-8"))["cases"]


def _card(text: str):
    session = Session(id="types", started_at="2026-03-01T09:00:00Z", turns=[Turn(id="t1", role="user", content=text)])
    return HeuristicDistiller().distill(session).cards[0]


@pytest.mark.parametrize("case", CASES, ids=[c["text"][:30] for c in CASES])
def test_rules_preferences_and_decisions_are_typed_and_titled_by_their_point(case):
    card = _card(case["text"])
    assert card.type == case["type"]
    assert all(word in card.title for word in case["keeps"]), card.title


def test_the_issue_statements():
    assert [_card(t).type for t in ("Never deploy checkout on Fridays.", "告警只发到飞书群，不要发邮件。",
                                    "We use pnpm for all JavaScript packages.")] == ["preference"] * 3
    title = _card("For the session cache of the checkout service: we decided NOT to use Redis; use Postgres instead.").title
    assert title == "We decided NOT to use Redis; use Postgres instead."


@pytest.mark.parametrize("text", ["Never mind, it works now.", "Do not use the old endpoint, it crashes.",
                                  "I went hiking yesterday with my dog."])
def test_what_is_no_rule_keeps_its_type(text):
    """"Never mind" is no rule, a warning stays a gotcha, a story is no preference."""
    assert _card(text).type != "preference"
