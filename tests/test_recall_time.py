"""Time in recall and `alaya summary` (issue 13): `--since`/`--until` keep the cards dated in a
range, a time phrase in the query ("last week", 上周) ranks the cards of its period first, and
the summary shows a period's time bucket. "Now" is fixed (`now=`, `ALAYA_NOW`), so every date
below is a fixed one: 2026-11-30 is a Monday, and "last week" is 2026-11-23 to 2026-11-29."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from helpers import session_json

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)

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


@pytest.fixture(scope="module")
def weeks(tmp_path_factory):
    """Three decisions in three weeks, and two in Chinese; read-only for the tests that use it."""
    from openclaw_alaya import Alaya

    memory = Alaya(tmp_path_factory.mktemp("time") / "data")
    memory.init()
    _fill(memory, {**DECISIONS, **ZH_DECISIONS})
    return memory


def test_the_in_memory_snapshot_dates_cards_as_the_graph_does(weeks):
    from openclaw_alaya.store.snapshot import GraphSnapshot

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
