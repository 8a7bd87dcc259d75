"""Time in recall and `alaya summary` (issue 13): `--since`/`--until` keep the cards dated in a
range, a time phrase or date in the query ("last week", 上周, "around Nov 27", 2023年5月) ranks the
cards of its period first, a "when" question the cards that state a date (issue 18), and the
summary shows a period's time bucket. "Now" is fixed (`now=`, `ALAYA_NOW`), so every date
below is a fixed one: 2026-11-30 is a Monday, and "last week" is 2026-11-23 to 2026-11-29."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers import session_json

from openclaw_alaya.cli.client import fast_path
from openclaw_alaya.errors import InputError
from openclaw_alaya.maintenance import buckets
from openclaw_alaya.config import RecallConfig
from openclaw_alaya.recall.periods import Period, containing, find_phrase, period_of, window
from openclaw_alaya.recall.timing import asks_when, states_date

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
NOW_TEXT = "2026-11-30T09:00:00Z"

# one decision about the gateway in each of three weeks, each worded its own way
DECISIONS = {
    "s-early": ("2026-11-03T10:00:00+00:00", "We decided to route the API gateway through nginx with a static upstream list."),
    "s-mid": ("2026-11-12T10:00:00+00:00", "We decided the API gateway should move to Traefik with automatic service discovery."),
    "s-late": ("2026-11-24T10:00:00+00:00", "We decided to replace the API gateway with Envoy and keep rate limits in a sidecar."),
}
ZH_DECISIONS = {
    "zh-early": ("2026-11-03T10:00:00+08:00", "我们决定了：网关先用 nginx 做反向代理，上游列表写死在配置里。"),
    "zh-late": ("2026-11-25T10:00:00+08:00", "网关换成 Envoy，限流放到 sidecar 里，这是大家的决定。"),
}


def _fill(memory, sessions: dict[str, tuple[str, str]]) -> None:
    for sid, (started, text) in sessions.items():
        memory.ingest(session_json(sid, [("user", text)], started_at=started))
    memory.distill()


def _sessions(result) -> list[str]:
    """The session each recalled card came from, best first."""
    return [node.sources[0].session_id for node in result.nodes]


@pytest.fixture(scope="module")
def weeks(tmp_path_factory):
    """Three decisions in three weeks, and two in Chinese; read-only for the tests that use it."""
    from openclaw_alaya import Alaya

    memory = Alaya(tmp_path_factory.mktemp("time") / "data")
    memory.init()
    _fill(memory, {**DECISIONS, **ZH_DECISIONS})
    return memory


def alaya(data_dir: Path, *args: str, now: str | None = NOW_TEXT, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_NOW"}
    if now is not None:
        env["ALAYA_NOW"] = now
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data_dir), *args],
                          input=stdin, capture_output=True, timeout=120, env=env)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def one_line_error(result: subprocess.CompletedProcess) -> str:
    err = result.stderr.decode()
    assert result.returncode == 1 and err.startswith("alaya: error:") and err.count("\n") == 1, err
    return err


# --- periods ------------------------------------------------------------------------------


def test_phrases_name_calendar_days_weeks_and_months_around_now():
    def days(value: str) -> tuple[str, str]:
        period = period_of(value, NOW, "since")
        return period.start.date().isoformat(), period.end.date().isoformat()

    assert days("today") == ("2026-11-30", "2026-12-01")
    assert days("yesterday") == days("昨天") == ("2026-11-29", "2026-11-30")
    assert days("last week") == days("上周") == days("Last  Week") == ("2026-11-23", "2026-11-30")
    assert days("this week") == days("本周") == days("这周") == ("2026-11-30", "2026-12-07")
    assert days("last month") == days("上个月") == ("2026-10-01", "2026-11-01")
    assert days("this month") == days("本月") == ("2026-11-01", "2026-12-01")
    assert days("2026-11-02") == ("2026-11-02", "2026-11-03")
    assert containing("month", datetime(2026, 12, 31, tzinfo=timezone.utc), 1) == Period(
        datetime(2027, 1, 1, tzinfo=timezone.utc), datetime(2027, 2, 1, tzinfo=timezone.utc))


def test_spans_and_times_are_instants():
    assert period_of("7d", NOW, "since").start == datetime(2026, 11, 23, 9, tzinfo=timezone.utc)
    assert period_of("2w", NOW, "since").start == datetime(2026, 11, 16, 9, tzinfo=timezone.utc)
    march_end = datetime(2026, 3, 31, tzinfo=timezone.utc)
    assert period_of("1m", march_end, "since").start == datetime(2026, 2, 28, tzinfo=timezone.utc)
    assert period_of("1y", NOW, "since").start == datetime(2025, 11, 30, 9, tzinfo=timezone.utc)
    moment = period_of("2026-11-02T08:30:00+08:00", NOW, "until")
    assert moment.start == moment.end == datetime(2026, 11, 2, 0, 30, tzinfo=timezone.utc)
    assert period_of("2026-11-02T08:30:00Z", NOW, "until").start == datetime(2026, 11, 2, 8, 30, tzinfo=timezone.utc)


def test_until_keeps_the_whole_day_or_period_it_names():
    kept = window("2026-11-02", "last week", NOW)
    assert kept == Period(datetime(2026, 11, 2, tzinfo=timezone.utc), datetime(2026, 11, 30, tzinfo=timezone.utc))
    assert window(None, None, NOW) is None
    assert window(None, "2026-11-29", NOW).end == datetime(2026, 11, 30, tzinfo=timezone.utc)


def test_a_phrase_is_found_in_a_query_and_taken_out_of_it():
    period, rest = find_phrase("what did we decide about the gateway last week?", NOW)
    assert rest == "what did we decide about the gateway ?"
    assert period == containing("week", NOW, -1)
    period, rest = find_phrase("上周我们决定了什么", NOW)
    assert rest == "我们决定了什么" and period == containing("week", NOW, -1)
    period, _ = find_phrase("what happened yesterday and today", NOW)
    assert (period.start.day, period.end.day) == (29, 1)  # both days
    assert find_phrase("last week", NOW)[1] == "last week"  # nothing else to search for: kept
    assert find_phrase("the weekly report and lastweek", NOW) is None
    assert find_phrase("what did we decide about the gateway", NOW) is None


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


@pytest.mark.parametrize("query, start, end", [
    ("what did we ship on 8 May 2023?", _day(2023, 5, 8), _day(2023, 5, 9)),
    ("the 1st of February, 2023", _day(2023, 2, 1), _day(2023, 2, 2)),
    ("what happened on October 13, 2023", _day(2023, 10, 13), _day(2023, 10, 14)),
    ("the plan in May 2023", _day(2023, 5, 1), _day(2023, 6, 1)),
    ("Nov 2025 budget", _day(2025, 11, 1), _day(2025, 12, 1)),
    ("what happened in 2023", _day(2023, 1, 1), _day(2024, 1, 1)),
    ("deploys on 2026-11-02", _day(2026, 11, 2), _day(2026, 11, 3)),
    ("what happened around Nov 27", _day(2026, 11, 24), _day(2026, 12, 1)),  # three days either side
    ("the Dec 5 release", _day(2025, 12, 5), _day(2025, 12, 6)),  # no year: the latest not after now
    ("what did we decide in June", _day(2026, 6, 1), _day(2026, 7, 1)),
    ("since last week", _day(2026, 11, 23), None),
    ("before 8 May 2023", None, _day(2023, 5, 8)),
    ("after May 2023", _day(2023, 6, 1), None),
    ("until May 2023", None, _day(2023, 6, 1)),
    ("2023年5月发生了什么", _day(2023, 5, 1), _day(2023, 6, 1)),
    ("2023年5月8日的会议", _day(2023, 5, 8), _day(2023, 5, 9)),
    ("5月8日我们决定了什么", _day(2026, 5, 8), _day(2026, 5, 9)),
    ("十一月份的部署", _day(2026, 11, 1), _day(2026, 12, 1)),
    ("2023年的计划", _day(2023, 1, 1), _day(2024, 1, 1)),
    ("11月27日前后", _day(2026, 11, 24), _day(2026, 12, 1)),
    ("上周以来的决定", _day(2026, 11, 23), None),
    ("2023年5月之前", None, _day(2023, 5, 1)),
])
def test_dates_in_a_query_name_periods(query, start, end):
    assert find_phrase(query, NOW)[0] == Period(start, end)


def test_dates_stay_in_the_searched_words_and_nothing_else_is_a_date():
    assert find_phrase("what did we ship on 8 May 2023?", NOW)[1] == "what did we ship on 8 May 2023?"
    assert find_phrase("昨天 deploy", NOW)[1] == "deploy"  # relative to now: no word a card contains
    for query in ("you may 5 times retry", "we may need it", "read 3 chapters", "31 February",
                  "a 3 month plan", "port 2023", "三个月的计划"):
        assert find_phrase(query, NOW) is None, query
    assert period_of("8 May 2023", NOW, "since") == Period(_day(2023, 5, 8), _day(2023, 5, 9))
    assert period_of("2023年5月", NOW, "until").end == _day(2023, 6, 1)


def test_when_questions_and_cards_that_state_a_date():
    for question in ("When did Caroline go to the support group?", "when is the talk", "What year did we move?",
                     "How long ago was the launch?", "我们什么时候上线的", "发布是哪天"):
        assert asks_when(question), question
    for question in ("Who helps Caroline when she is sad?", "what did we decide", "网关用什么"):
        assert not asks_when(question), question
    may8 = datetime(2023, 5, 8).date()
    assert not states_date("Caroline (8 May 2023): I love the support group.", may8)  # only its own day
    assert states_date("Caroline (8 May 2023): I went yesterday. [yesterday = 7 May 2023]", may8)
    assert states_date("Melanie (8 May 2023): I painted that sunrise in 2022.", may8)
    assert states_date("我们上周把网关换了", may8)
    assert not states_date("We use pnpm.", None)


def test_time_weights_are_bounded():
    from pydantic import ValidationError

    for bad in ({"outside_period": 0}, {"outside_period": 1.5}, {"dated_boost": -0.1}, {"dated_boost": 2}):
        with pytest.raises(ValidationError):
            RecallConfig(**bad)


@pytest.mark.parametrize("since, until, message", [
    ("next tuesday", None, "since: cannot read 'next tuesday' as a time"),
    (None, "2026-13-45", "until: cannot read '2026-13-45' as a time"),
    ("9999y", None, "since: cannot read '9999y'"),
    ("2026-11-20", "2026-11-10", "since '2026-11-20' is not before until '2026-11-10'"),
])
def test_bad_ranges_are_one_line_input_errors_naming_the_value(since, until, message):
    with pytest.raises(InputError, match=message) as error:
        window(since, until, NOW)
    assert "\n" not in str(error.value)


# --- recall -------------------------------------------------------------------------------


def test_last_week_in_the_query_ranks_that_weeks_decision_first(weeks):
    plain = weeks.recall("what did we decide about the gateway", now=NOW)
    assert _sessions(plain)[0] != "s-late"  # on words alone another decision wins…
    timed = weeks.recall("what did we decide about the gateway last week", now=NOW)
    assert _sessions(timed)[0] == "s-late"  # …the phrase puts last week's first
    assert set(_sessions(timed)) == set(_sessions(plain))  # and drops none: a phrase may be loose
    assert _sessions(weeks.recall("what did we decide last week", now=NOW))[0] == "s-late"
    # counted from another now, "last week" is another week
    earlier = datetime(2026, 11, 18, tzinfo=timezone.utc)
    assert _sessions(weeks.recall("what did we decide last week", now=earlier))[0] == "s-mid"


def test_a_chinese_phrase_ranks_its_week_first(weeks):
    # words that favour the early decision; 上周 (last week) puts the late one first anyway
    assert _sessions(weeks.recall("网关的上游列表我们决定了什么", now=NOW))[0] == "zh-early"
    assert _sessions(weeks.recall("上周网关的上游列表我们决定了什么", now=NOW))[0] == "zh-late"
    assert set(_sessions(weeks.recall("网关 决定", since="上周", now=NOW))) == {"zh-late"}


# one move of the billing service in each of two months, and a "when" question's two cards
DAYS = {
    "d-nov27": ("2026-11-27T10:00:00+00:00", "We moved the billing service to the new Postgres cluster and ran the migration."),
    "d-oct": ("2026-10-15T10:00:00+00:00", "We moved the billing service to the new Postgres cluster and checked the backups."),
    "w-event": ("2026-11-20T10:00:00+00:00", "Caroline went to the LGBTQ support group yesterday and found it powerful."),
    "w-other": ("2026-11-22T10:00:00+00:00",
                "Caroline says the LGBTQ support group is powerful and she loves going to the support group."),
}


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    from openclaw_alaya import Alaya

    memory = Alaya(tmp_path_factory.mktemp("days") / "data")
    memory.init()
    _fill(memory, DAYS)
    return memory


def test_a_date_in_the_query_ranks_that_days_card_first_and_drops_none(days):
    about = "what happened with the billing service Postgres cluster"
    assert _sessions(days.recall(f"{about} around Nov 27", now=NOW))[:2] == ["d-nov27", "d-oct"]
    assert _sessions(days.recall(f"{about} on 15 October 2026", now=NOW))[:2] == ["d-oct", "d-nov27"]
    assert _sessions(days.recall(f"{about} 2026年10月", now=NOW))[:2] == ["d-oct", "d-nov27"]
    plain = set(_sessions(days.recall(about, now=NOW)))
    for phrase in ("around Nov 27", "in May 2023", "yesterday", "since last week", "before 2020", "上周"):
        assert set(_sessions(days.recall(f"{about} {phrase}", now=NOW))) == plain, phrase  # a phrase drops none


def test_a_when_question_prefers_the_card_that_says_when(days, monkeypatch):
    question = "When did Caroline go to the LGBTQ support group?"
    monkeypatch.setattr(days.config.recall, "dated_boost", 0.0)
    monkeypatch.setattr(days.config.recall.intent, "answer", 0.0)  # a time question also favours facts
    unboosted = _sessions(days.recall(question, now=NOW))
    assert unboosted[0] == "w-other"  # on words alone the card that never says when wins…
    monkeypatch.undo()
    monkeypatch.setattr(days.config.recall.intent, "answer", 0.0)
    boosted = _sessions(days.recall(question, now=NOW))
    assert boosted[0] == "w-event"  # …the card saying "yesterday = 19 November 2026" answers when
    assert set(boosted) == set(unboosted)


def test_since_and_until_keep_only_cards_dated_in_the_range(weeks):
    def recalled(**range_) -> set[str]:
        return set(_sessions(weeks.recall("we decided the API gateway", now=NOW, **range_)))

    assert recalled() == set(DECISIONS)
    assert recalled(since="2026-11-10", until="2026-11-20") == {"s-mid"}
    assert recalled(since="7d") == {"s-late"}
    assert recalled(until="2026-11-03") == {"s-early"}  # the day --until names is kept
    assert recalled(since="last month") == set(DECISIONS)
    assert recalled(since="last week", until="last week") == {"s-late"}
    assert recalled(since="2026-11-25") == set()
    # an explicit range wins over the query's phrase
    assert set(_sessions(weeks.recall("what did we decide about the gateway last week", since="2026-11-01",
                                      until="2026-11-15", now=NOW))) == {"s-early", "s-mid"}


def test_the_in_memory_snapshot_dates_cards_as_the_graph_does(weeks):
    from openclaw_alaya.store.embedded.snapshot import GraphSnapshot

    with weeks.reading("test") as graph:
        times = graph.card_times()
        assert {t.session_start for t in times.values()} == {s for s, _ in [*DECISIONS.values(), *ZH_DECISIONS.values()]}
        assert GraphSnapshot(graph).card_times([*times, "card-not-there"]) == times
        assert graph.card_times([*times][:2]) == {cid: times[cid] for cid in [*times][:2]}

def test_time_buckets_file_each_card_in_the_week_of_its_session(weeks):
    from openclaw_alaya.recall.buckets import compute, read

    with weeks.reading("test") as graph:
        sessions, cards = read(graph)
    weekly = compute(sessions, cards, NOW, weeks.config.introspect)["weekly"]
    assert {b["period"]: (b["sessions"], b["cards"]) for b in weekly} == {
        "2026-W48": (2, 2), "2026-W46": (1, 1), "2026-W45": (2, 2)}


def _card_of(memory, session_id: str) -> str:
    """The card distilled from a session of DECISIONS."""
    found = memory.recall(DECISIONS[session_id][1], top_k=1, now=NOW).nodes
    assert found and found[0].sources[0].session_id == session_id
    return found[0].card_id


def test_a_range_filters_the_graph_walk_too(memory):
    _fill(memory, DECISIONS)
    late, early = _card_of(memory, "s-late"), _card_of(memory, "s-early")
    memory.link(late, early, "DEPENDS_ON")
    query = "Envoy rate limits sidecar"
    walked = memory.recall(query, relations=["DEPENDS_ON"], depth=1, now=NOW)
    assert [(n.card_id, n.matched_rel) for n in walked.nodes] == [(late, None), (early, "DEPENDS_ON")]
    for _ in range(2):  # from the second recall on, the process answers from its snapshot of the graph
        kept = memory.recall(query, relations=["DEPENDS_ON"], depth=1, since="2026-11-20", now=NOW)
        assert [n.card_id for n in kept.nodes] == [late]
    assert [n.card_id for n in memory.recall(from_nodes=[late], relations=["DEPENDS_ON"], now=NOW).nodes] == [early]
    assert memory.recall(from_nodes=[late], relations=["DEPENDS_ON"], since="last week", now=NOW).nodes == []


def test_recall_bad_times_are_one_line_errors(weeks):
    with pytest.raises(InputError, match=r"^recall: since: cannot read 'someday' as a time; use a date"):
        weeks.recall("gateway", since="someday")
    with pytest.raises(InputError, match="^recall: since '7d' is not before until '2w'"):
        weeks.recall("gateway", since="7d", until="2w")


# --- the command line ------------------------------------------------------------------------


def test_cli_recall_with_a_fixed_now(weeks):
    data = weeks.dirs.root
    out = json.loads(ok(alaya(data, "recall", "what did we decide last week", "--json")))
    assert out["nodes"][0]["sources"][0]["session_id"] == "s-late"
    out = json.loads(ok(alaya(data, "recall", "we decided the API gateway", "--since", "2026-11-10",
                              "--until", "2026-11-20", "--json")))
    assert [n["sources"][0]["session_id"] for n in out["nodes"]] == ["s-mid"]
    request = {"query": "we decided the API gateway", "since": "last week"}
    out = json.loads(ok(alaya(data, "recall", "--json", stdin=json.dumps(request).encode())))
    assert [n["sources"][0]["session_id"] for n in out["nodes"]] == ["s-late"]
    out = json.loads(ok(alaya(data, "recall", "上周我们决定了什么", "--json")))
    assert out["nodes"][0]["sources"][0]["session_id"] == "zh-late"


def test_cli_bad_times_exit_1_with_one_line(weeks):
    data = weeks.dirs.root
    err = one_line_error(alaya(data, "recall", "gateway", "--since", "the other day"))
    assert "since: cannot read 'the other day' as a time" in err
    err = one_line_error(alaya(data, "recall", "gateway", "--until", "2026-11-01", "--since", "2026-11-05"))
    assert "is not before until" in err
    err = one_line_error(alaya(data, "recall", "--json", stdin=b'{"query": "gateway", "since": 7}'))
    assert "since must be a string" in err
    err = one_line_error(alaya(data, "recall", "gateway", now="soon"))
    assert "ALAYA_NOW: cannot read 'soon'" in err
    err = one_line_error(alaya(data, "summary", "--period", "fortnight"))
    assert err == "alaya: error: unknown period 'fortnight' (day, week, month)\n"
    err = one_line_error(alaya(data, "summary", "--at", "whenever"))
    assert "at: cannot read 'whenever' as a time" in err


def test_a_range_value_is_not_taken_for_the_query_by_the_daemon_client():
    """`alaya recall --since 7d` with JSON on stdin: 7d is the option's value, not a query."""
    _dir, argv, needs_stdin, _hook = fast_path(["recall", "--since", "7d", "--until", "today"])
    assert needs_stdin and argv[-4:] == ["--since", "7d", "--until", "today"]
    assert not fast_path(["recall", "--since", "7d", "gateway"])[2]


# --- summary ---------------------------------------------------------------------------------


def test_summary_of_a_week(weeks):
    week = weeks.summary("week", "2026-11-24", now=NOW)
    assert (week["bucket"], week["first_day"], week["last_day"]) == ("2026-W48", "2026-11-23", "2026-11-29")
    assert (week["sessions"], week["cards"], week["types"]) == (2, 2, {"decision": 2})
    assert any("Envoy" in title for title in week["highlights"]) and "envoy" in week["tags"]
    assert weeks.summary("week", "last week", now=NOW) == week
    assert weeks.summary("week", now=datetime(2026, 11, 26, tzinfo=timezone.utc)) == week
    assert weeks.summary("week", now=NOW)["cards"] == 0  # this week: nothing yet
    month = weeks.summary("month", "2026-11-15", now=NOW)
    assert (month["bucket"], month["sessions"], month["cards"], month["last_day"]) == ("2026-11", 5, 5, "2026-11-30")
    day = weeks.summary("day", "2026-11-12", now=NOW)
    assert (day["bucket"], day["cards"]) == ("2026-11-12", 1)


def test_cli_summary(weeks):
    data = weeks.dirs.root
    week = json.loads(ok(alaya(data, "summary", "--period", "week", "--at", "last week", "--json")))
    assert (week["bucket"], week["cards"]) == ("2026-W48", 2)
    text = ok(alaya(data, "summary", "--period", "week", "--at", "2026-11-24"))
    assert text.startswith("week 2026-W48 (2026-11-23 to 2026-11-29): 2 sessions, 2 cards (decision 2)")
    assert "Envoy" in text


def test_summary_reads_introspects_buckets_until_the_graph_changes(memory):
    _fill(memory, DECISIONS)
    assert memory.summary("week", "2026-11-24", now=NOW)["cached"] is False  # no buckets yet
    buckets.refresh(memory, now=NOW)
    cached = memory.summary("week", "2026-11-24", now=NOW)
    assert cached["cached"] is True and cached["cards"] == 1
    assert memory.summary("week", "2025-11-24", now=NOW)["cached"] is False  # older than introspect keeps
    _fill(memory, {"s-more": ("2026-11-26T10:00:00+00:00", "We decided the gateway keeps access logs for 30 days.")})
    fresh = memory.summary("week", "2026-11-24", now=NOW)
    assert fresh["cached"] is False and fresh["cards"] == 2 and fresh["sessions"] == 2
