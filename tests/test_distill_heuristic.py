"""The offline heuristic distiller: types, content, dates, merging, links, determinism."""

from __future__ import annotations

from datetime import date

import pytest

from openclaw_alaya.distill import HeuristicDistiller
from openclaw_alaya.distill.dates import resolve_relative
from openclaw_alaya.models import CARD_TYPES, DistillResult, Session, Turn


def _distill(session: Session, start: int = 0) -> DistillResult:
    return HeuristicDistiller().distill(session, start)


def _by_turn(result: DistillResult, turn_id: str):
    cards = [c for c in result.cards if turn_id in c.turn_ids]
    assert cards, f"no card cites {turn_id}: {[c.turn_ids for c in result.cards]}"
    return cards[0]


@pytest.fixture
def ops() -> Session:
    return Session(
        id="ops-1",
        started_at="2024-03-12T09:30:00Z",
        turns=[
            Turn(id="t1", role="user", content="Hi! Thanks for joining."),
            Turn(
                id="t2",
                role="user",
                content=(
                    "Last night the deploy of billing-api v2.3.1 failed: pgbouncer refused connections "
                    "with 'sorry, too many clients already' after 500 clients. Config is "
                    "/etc/pgbouncer/pgbouncer.ini."
                ),
            ),
            Turn(
                id="t3",
                role="assistant",
                content=(
                    "The root cause was max_client_conn = 500 in /etc/pgbouncer/pgbouncer.ini because each "
                    "of the 20 workers opens a pool of 30 connections. Watch out: raise max_client_conn to "
                    "1000 before scaling the workers."
                ),
            ),
            Turn(id="t4", role="user", content="ok"),
            Turn(
                id="t5",
                role="user",
                content="We decided to go with PgBouncer transaction pooling instead of session pooling.",
            ),
            Turn(id="t6", role="user", content="I prefer short answers, and please always show the exact command."),
            Turn(id="t7", role="assistant", content="Which region is the database in?"),
            Turn(id="t8", role="user", content="Frankfurt, eu-central-1."),
            Turn(
                id="t9",
                role="user",
                content="To reload pgbouncer, run `sudo systemctl reload pgbouncer`; it requires the pgbouncer.ini change to be saved first.",
            ),
        ],
    )


def test_api_and_card_shape(ops: Session) -> None:
    d = HeuristicDistiller()
    assert d.name == "heuristic"
    r = d.distill(ops)
    assert r.cards
    keys = [c.key for c in r.cards]
    assert len(keys) == len(set(keys))
    for c in r.cards:
        assert c.type in CARD_TYPES
        assert 0.0 <= c.importance <= 1.0
        assert 0 < len(c.title) <= 80
        assert c.key.startswith(f"{ops.id}:{c.turn_ids[0]}:")
        assert c.type in c.tags
        assert all(t == t.lower() for t in c.tags)
        assert c.valid_from and c.valid_from.startswith("2024-03-12")


def test_ops_incident_gotcha_keeps_numbers_and_paths_and_links_cause(ops: Session) -> None:
    r = _distill(ops)
    failure = _by_turn(r, "t2")
    cause = _by_turn(r, "t3")
    assert failure.type == "gotcha" and cause.type == "gotcha"
    assert failure.turn_ids == ["t2"] and cause.turn_ids == ["t3"]
    for needle in ("v2.3.1", "500", "/etc/pgbouncer/pgbouncer.ini", "too many clients already"):
        assert needle in failure.content
    for needle in ("max_client_conn = 500", "20 workers", "1000"):
        assert needle in cause.content
    assert "/etc/pgbouncer/pgbouncer.ini" in cause.entities
    assert "max_client_conn" in cause.entities
    assert {"billing-api", "v2.3.1", "pgbouncer"} <= {e for e in failure.entities}
    caused = [(l.src, l.dst) for l in r.links if l.rel == "CAUSED_BY"]
    assert any({s, t} == {failure.key, cause.key} for s, t in caused)
    # "Last night" is resolved against the session date.
    assert "11 March 2024" in failure.content
    assert failure.content.startswith("user (12 March 2024): ")
    assert cause.importance > 0.6


def test_decision_preference_pattern_and_depends(ops: Session) -> None:
    r = _distill(ops)
    assert _by_turn(r, "t5").type == "decision"
    pref = _by_turn(r, "t6")
    assert pref.type == "preference"
    assert "please always show the exact command" in pref.content
    reload = _by_turn(r, "t9")
    assert "`sudo systemctl reload pgbouncer`" in reload.content
    assert any(l.src == reload.key and l.rel == "DEPENDS_ON" for l in r.links)


def test_links_are_clean(ops: Session) -> None:
    r = _distill(ops)
    keys = {c.key for c in r.cards}
    seen = set()
    for l in r.links:
        assert l.src in keys and l.dst in keys
        assert l.src != l.dst
        assert l.rel not in ("TEMPORAL_NEXT", "EXTRACTED_FROM")
        k = (l.src, l.dst, l.rel) if l.rel != "SIMILAR_TO" else (frozenset((l.src, l.dst)), l.rel)
        assert k not in seen
        seen.add(k)


def test_greetings_and_acknowledgements_dropped(ops: Session) -> None:
    r = _distill(ops)
    cited = {t for c in r.cards for t in c.turn_ids}
    assert "t1" not in cited and "t4" not in cited
    chat = Session(
        id="chat",
        turns=[
            Turn(id="a", name="Ann", content="Hey Bob! Good to see you!"),
            Turn(id="b", name="Bob", content="Wow, that's great, Ann!"),
            Turn(id="c", name="Ann", content="haha 😂😂"),
            Turn(id="d", name="Bob", content="Thanks!"),
            Turn(id="e", name="Ann", content="ok"),
            Turn(id="f", name="Bob", content="I'm 32."),
            Turn(id="g", name="Ann", content="Lisbon."),
            Turn(id="h", name="Bob", content="好的，谢谢！"),
        ],
    )
    r = _distill(chat)
    cited = [t for c in r.cards for t in c.turn_ids]
    assert cited == ["f", "g"]
    assert "32" in _by_turn(r, "f").content
    assert _by_turn(r, "g").content == "Ann: Lisbon."
    assert "Lisbon" in _by_turn(r, "g").entities


def test_short_answer_merged_with_question(ops: Session) -> None:
    r = _distill(ops)
    card = _by_turn(r, "t8")
    assert card.turn_ids == ["t7", "t8"]
    assert "Which region is the database in?" in card.content
    assert "Frankfurt, eu-central-1." in card.content
    assert "Frankfurt" in card.title
    chat = Session(
        id="qa",
        started_at="2023-06-01",
        turns=[
            Turn(id="1", name="Ann", content="When did you move to Porto?"),
            Turn(id="2", name="Bob", content="Yes, in May 2022."),
            Turn(id="3", name="Ann", content="What are you up to these days?"),
            Turn(
                id="4",
                name="Bob",
                content="I'm restoring an old sailboat with my brother in the harbour every weekend, it takes forever.",
            ),
        ],
    )
    r = _distill(chat)
    # A short answer is merged (no card of its own); a long one pairs with the question and keeps its card.
    assert [c.turn_ids for c in r.cards] == [["1", "2"], ["3", "4"], ["4"]]
    assert "May 2022" in r.cards[0].content and "Porto" in r.cards[0].content


def test_question_answer_card() -> None:
    long_answer = (
        "Use transaction pooling in PgBouncer and set default_pool_size to 20 per database. "
        "Session pooling pins one server connection per client, so with 20 workers you run out at 500. "
        "Also raise max_client_conn to 1000. " + "Then watch SHOW POOLS for a day to confirm the numbers. " * 6
        + "\n\n```ini\n[pgbouncer]\npool_mode = transaction\n```"
    )
    s = Session(
        id="qa-card",
        started_at="2024-03-12",
        turns=[
            Turn(id="u1", role="user", content="Our API keeps timing out under load. How should I size the pgbouncer pool?"),
            Turn(id="a1", role="assistant", content=long_answer),
            Turn(id="u2", role="user", content="Does it work with prepared statements?"),
            Turn(id="u3", role="user", content="We use them everywhere in the billing service."),
        ],
    )
    r = _distill(s)
    by = {tuple(c.turn_ids): c for c in r.cards}
    qa = by[("u1", "a1")]
    assert qa.key == "qa-card:u1:0"
    assert qa.content.startswith("user (12 March 2024): Our API keeps timing out under load. How should I size")
    assert "\nassistant: Use transaction pooling in PgBouncer" in qa.content
    # The reply is cut to its opening sentences, marked with …, and leaves the code to its own card.
    assert qa.content.rstrip().endswith("\u2026") and "pool_mode" not in qa.content
    assert len(qa.content) < len(long_answer)
    assert "timing out" in qa.title or "pgbouncer" in qa.title.lower()
    # The reply keeps its own, complete card(s).
    assert "pool_mode = transaction" in "\n".join(c.content for c in r.cards if c.turn_ids == ["a1"])
    # A question followed by the same speaker is not paired.
    assert not any("u2" in c.turn_ids and len(c.turn_ids) > 1 for c in r.cards)
    # `start` at the answer: the question is never cited.
    r = _distill(s, start=1)
    assert all("u1" not in c.turn_ids for c in r.cards)
    assert _distill(s).model_dump() == _distill(s.model_copy(deep=True)).model_dump()


def test_relative_dates_resolved() -> None:
    s = Session(
        id="dates",
        started_at="1:56 pm on 8 May, 2023",
        turns=[
            Turn(id="D1:1", name="Caroline", content="I went to a support group yesterday and it was so powerful."),
            Turn(id="D1:2", name="Melanie", content="I painted that lake sunrise last year!"),
            Turn(id="D1:3", name="Caroline", content="Last Saturday I ran a charity race, two days ago I signed up for a pottery class."),
            Turn(id="D1:4", name="Melanie", content="We went camping last week and we're moving next month."),
            Turn(id="D1:5", name="Caroline", content="我昨天去了杭州，上周买了新相机，去年换了工作。", timestamp="2023-05-10T08:00:00"),
        ],
    )
    r = _distill(s)
    c1 = _by_turn(r, "D1:1")
    assert c1.content.startswith("Caroline (8 May 2023): I went to a support group yesterday")
    assert "[yesterday = 7 May 2023]" in c1.content
    assert c1.valid_from == "2023-05-08T13:56:00"
    assert "last year = 2022" in _by_turn(r, "D1:2").content
    c3 = _by_turn(r, "D1:3").content
    assert "Last Saturday = 6 May 2023" in c3 and "two days ago = 6 May 2023" in c3
    c4 = _by_turn(r, "D1:4").content
    assert "last week = the week before 8 May 2023" in c4 and "next month = June 2023" in c4
    c5 = _by_turn(r, "D1:5")
    assert c5.content.startswith("Caroline (10 May 2023): 我昨天去了杭州")
    assert "昨天 = 2023年5月9日" in c5.content and "去年 = 2022年" in c5.content
    assert c5.valid_from == "2023-05-10T08:00:00"


def test_how_long_something_has_gone_on_says_since_when() -> None:
    """ "Seven years now" answers "since when?" and "how long … 7 years?"; a duration that may
    lie ahead ("moving there for two years") says nothing."""
    day = date(2023, 8, 14)
    assert resolve_relative("Seven years now, and I've found my muses.", day) == ["Seven years now = 7 years, since 2016"]
    assert resolve_relative("We've been married for 5 years!", day) == ["5 years = since 2018"]
    assert resolve_relative("I have been doing this for the past two months.", day) == ["two months = 2 months, since June 2023"]
    assert resolve_relative("We're moving there for two years.", day) == []
    assert resolve_relative("我学画画三年了。", day) == ["三年了 = 2020年起"]
    card = _by_turn(_distill(Session(id="since", started_at="2023-08-14", turns=[
        Turn(id="t1", name="Melanie", content="I've been painting for seven years and it still calms me.")])), "t1")
    assert "[seven years = 7 years, since 2016]" in card.content


def test_chinese_session() -> None:
    s = Session(
        id="zh-1",
        started_at="2024-05-20",
        turns=[
            Turn(id="z1", role="user", content="你好！"),
            Turn(id="z2", role="user", content="注意：Kuzu 数据库同一时间只能有一个读写进程，否则会报错。"),
            Turn(id="z3", role="assistant", content="好的，收到。"),
            Turn(id="z4", role="user", content="我们决定采用 LanceDB 作为向量索引，因为它不需要单独的服务。"),
            Turn(id="z5", role="user", content="我更喜欢用中文回答，请用简洁的「要点列表」。"),
            Turn(id="z6", role="user", content="通常每次发布前先跑 pytest，步骤：先备份 graph.kuzu，再执行 alaya rebuild。"),
            Turn(id="z7", role="user", content="根因是文件锁冲突：两个进程同时以读写方式打开了 graph.kuzu。"),
            Turn(id="z8", role="user", content="谢谢"),
        ],
    )
    r = _distill(s)
    cited = {t for c in r.cards for t in c.turn_ids}
    assert not cited & {"z1", "z3", "z8"}
    assert _by_turn(r, "z2").type == "gotcha"
    assert "只能有一个读写进程" in _by_turn(r, "z2").content
    assert "Kuzu" in _by_turn(r, "z2").entities
    assert _by_turn(r, "z4").type == "decision"
    assert "LanceDB" in _by_turn(r, "z4").entities
    pref = _by_turn(r, "z5")
    assert pref.type == "preference" and "要点列表" in pref.entities
    assert _by_turn(r, "z6").type == "pattern"
    assert "graph.kuzu" in _by_turn(r, "z6").entities
    root = _by_turn(r, "z7")
    assert root.type == "gotcha"
    assert any(l.rel == "CAUSED_BY" and root.key in (l.src, l.dst) for l in r.links)
    # "不需要" is not a dependency.
    assert not any(l.rel == "DEPENDS_ON" and l.src == _by_turn(r, "z4").key for l in r.links)
    for c in r.cards:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in c.title)


def test_start_respected(ops: Session) -> None:
    r = _distill(ops, start=5)
    cited = {t for c in r.cards for t in c.turn_ids}
    assert cited and cited <= {"t6", "t7", "t8", "t9"}
    full = _distill(ops)
    # Keys of cards from the same turns do not depend on `start`.
    assert {c.key for c in r.cards} <= {c.key for c in full.cards}
    # A question before `start` is never cited by the answer's card.
    r = _distill(ops, start=7)
    assert [c.turn_ids for c in r.cards][0] == ["t8"]
    assert _distill(ops, start=99).cards == []


def test_deterministic(ops: Session) -> None:
    a = _distill(ops).model_dump()
    b = HeuristicDistiller().distill(ops.model_copy(deep=True)).model_dump()
    assert a == b


def test_sources_only_the_right_turns() -> None:
    s = Session(
        id="src",
        turns=[
            Turn(id="q", name="Ann", content="How's the new job at Acme going?"),
            Turn(
                id="a",
                name="Bob",
                content="Really well, I lead the data platform team at Acme now and we ship every Tuesday.",
            ),
            Turn(id="x", name="Ann", content="Nice!"),
        ],
    )
    r = _distill(s)
    by = {tuple(c.turn_ids): c for c in r.cards}
    assert ("a",) in by and "Acme" in by[("a",)].entities
    # The question is answered by another speaker: its card carries the answer and cites both.
    assert ("q", "a") in by and ("q",) not in by
    assert "Acme going?" in by[("q", "a")].content and "data platform team" in by[("q", "a")].content
    for c in r.cards:
        for tid in c.turn_ids:
            turn = next(t for t in s.turns if t.id == tid)
            assert turn.content.split()[-1].strip("?!.") in c.content


def test_long_turn_splits_into_cards_citing_it() -> None:
    long = (
        "Here is the runbook for the Kuzu migration.\n\n"
        "First, stop every agent that holds graph.kuzu open; Kuzu allows one read-write opener "
        "or several readers, and a second writer fails at once with a lock error. Check with "
        "`lsof ~/.alaya/graph.kuzu` before going on, and wait for the scheduler to finish.\n\n"
        "Second, export the cards with `alaya export --format jsonl > cards.jsonl` and keep the "
        "file until the rebuild is verified; the export takes about 40 seconds for 100k cards "
        "on the small VM and needs roughly 2 GB of free disk.\n\n"
        "Third, we decided to go with LanceDB 0.25 for the index and to rebuild it from L3 with "
        "`alaya rebuild`, because the old index used a different embedder dimension (384 vs 1024)."
    )
    s = Session(id="long", started_at="2024-01-02", turns=[Turn(id="L1", role="assistant", content=long)])
    r = _distill(s)
    assert len(r.cards) >= 3
    assert all(c.turn_ids == ["L1"] for c in r.cards)
    assert [c.key for c in r.cards] == [f"long:L1:{i}" for i in range(len(r.cards))]
    joined = "\n".join(c.content for c in r.cards)
    for needle in ("`lsof ~/.alaya/graph.kuzu`", "40 seconds", "100k", "384 vs 1024", "LanceDB 0.25"):
        assert needle in joined
    assert {"decision"} <= {c.type for c in r.cards}


def test_similar_cards_linked() -> None:
    s = Session(
        id="sim",
        turns=[
            Turn(id="1", role="user", content="Kuzu and LanceDB both live under ~/.alaya in our setup."),
            Turn(id="2", role="user", content="The weather in Lisbon was lovely today, sunny and warm."),
            Turn(id="3", role="user", content="Backups must copy Kuzu files and LanceDB tables together."),
        ],
    )
    r = _distill(s)
    k = {c.turn_ids[0]: c.key for c in r.cards}
    sims = [{l.src, l.dst} for l in r.links if l.rel == "SIMILAR_TO"]
    assert {k["1"], k["3"]} in sims
    assert all(k["2"] not in pair for pair in sims)


def test_empty_and_throughput_smoke() -> None:
    assert _distill(Session(id="empty")).cards == []
    turns = [
        Turn(id=f"t{i}", name="Ann" if i % 2 else "Bob", content=f"I moved to Lisbon in {2000 + i % 20} and work at Acme on the billing-api.")
        for i in range(400)
    ]
    r = _distill(Session(id="big", started_at="2024-01-01", turns=turns))
    assert len(r.cards) == 400
    assert len({c.key for c in r.cards}) == 400


def test_a_leading_no_that_negates_stays_in_title_and_content() -> None:
    session = Session(id="neg-1", turns=[
        Turn(id="t1", role="user", content="No npm please. I prefer pnpm over npm, always."),
        Turn(id="t2", role="user", content="No, the staging database stays on Postgres 15."),
    ])
    result = _distill(session)
    negated = _by_turn(result, "t1")
    assert negated.title.lower().startswith("no npm")  # not "Npm please."
    assert "No npm please" in negated.content
    answer = _by_turn(result, "t2")
    assert not answer.title.lower().startswith("no")  # "No," alone is an interjection: dropped from the title
    assert "Postgres 15" in answer.title
