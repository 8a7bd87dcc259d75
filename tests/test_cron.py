"""Which jobs are due, with an injected clock (no sleeping, no real time)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from openclaw_alaya.config import Config, CronJobConfig
from openclaw_alaya.maintenance import cron

UTC = timezone.utc


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


JOBS = {
    "introspect": CronJobConfig(schedule="0 */4 * * *"),
    "backup": CronJobConfig(schedule="30 3 * * *"),
    "quarter": CronJobConfig(schedule="*/15 * * * *"),
    "off": CronJobConfig(schedule="* * * * *", enabled=False),
}


def state(**entries: tuple[str | None, str | None]) -> dict:
    return {name: {"last_run": last, "first_seen": seen} for name, (last, seen) in entries.items()}


def test_due_after_the_next_fire_time_following_the_last_run():
    s = state(introspect=("2026-03-01T08:00:00+00:00", None), backup=("2026-03-01T03:30:00+00:00", None),
              quarter=("2026-03-01T11:50:00+00:00", None))
    assert cron.due_jobs(JOBS, s, at("2026-03-01T11:59:59")) == []
    assert cron.due_jobs(JOBS, s, at("2026-03-01T12:00:00")) == ["introspect", "quarter"]
    assert cron.due_jobs(JOBS, s, at("2026-03-02T03:30:00")) == ["introspect", "backup", "quarter"]


def test_missed_ticks_run_once():
    s = state(introspect=("2026-03-01T08:00:00+00:00", None))
    jobs = {"introspect": JOBS["introspect"]}
    later = at("2026-03-03T09:17:00")  # two days asleep: a dozen ticks missed
    assert cron.due_jobs(jobs, s, later) == ["introspect"]
    s["introspect"]["last_run"] = later.isoformat()
    assert cron.due_jobs(jobs, s, later + timedelta(minutes=30)) == []
    assert cron.due_jobs(jobs, s, at("2026-03-03T12:00:00")) == ["introspect"]


def test_never_run_jobs_wait_for_their_first_time_after_being_seen():
    jobs = {"backup": JOBS["backup"]}
    assert cron.due_jobs(jobs, {}, at("2026-03-01T10:00:00")) == []  # just installed
    seen = state(backup=(None, "2026-03-01T10:00:00+00:00"))
    assert cron.due_jobs(jobs, seen, at("2026-03-02T03:29:00")) == []
    assert cron.due_jobs(jobs, seen, at("2026-03-02T03:30:00")) == ["backup"]


def test_disabled_jobs_are_never_due():
    s = state(off=("2020-01-01T00:00:00+00:00", "2020-01-01T00:00:00+00:00"))
    assert cron.due_jobs({"off": JOBS["off"]}, s, at("2026-03-01T10:00:00")) == []
    assert cron.next_due({"off": JOBS["off"]}, s, at("2026-03-01T10:00:00")) is None


def test_next_due_is_the_earliest_enabled_job():
    s = state(introspect=("2026-03-01T08:00:00+00:00", None), backup=("2026-03-01T03:30:00+00:00", None))
    jobs = {"introspect": JOBS["introspect"], "backup": JOBS["backup"]}
    assert cron.next_due(jobs, s, at("2026-03-01T09:00:00")) == at("2026-03-01T12:00:00")


def test_invalid_schedule_is_a_config_error_naming_the_job():
    from openclaw_alaya.errors import ConfigError

    with pytest.raises(ConfigError, match=r"cron\.jobs\.nightly\.schedule"):
        cron.validate({"nightly": CronJobConfig(schedule="every night")})


def test_default_jobs_in_config():
    jobs = Config().cron.jobs
    assert {name: job.schedule for name, job in jobs.items()} == {"introspect": "0 */4 * * *", "backup": "30 3 * * *"}


def test_run_once_records_runs_and_survives_a_failing_job(memory):
    calls = []

    def good(mem):
        calls.append("good")
        return {"done": True}

    def bad(mem):
        calls.append("bad")
        raise RuntimeError("disk full")

    memory.config.cron.jobs = {"bad": CronJobConfig(schedule="0 * * * *"), "good": CronJobConfig(schedule="0 * * * *")}
    registry = {"good": good, "bad": bad}
    first = cron.run_once(memory, now=at("2026-03-01T10:05:00"), jobs=registry)
    assert first["ran"] == [] and first["next"].startswith("2026-03-01T11:00:00")
    result = cron.run_once(memory, now=at("2026-03-01T11:00:00"), jobs=registry)
    assert calls == ["bad", "good"] and result["ok"] is False
    assert [(r["job"], r["ok"]) for r in result["ran"]] == [("bad", False), ("good", True)]
    saved = cron.load_state(memory)
    assert saved["bad"]["last_error"].endswith("disk full") and saved["good"]["last_ok"] is True
    assert cron.run_once(memory, now=at("2026-03-01T11:10:00"), jobs=registry)["ran"] == []
