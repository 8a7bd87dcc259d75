"""`alaya cron run`: run the maintenance jobs that are due (docs/architecture.md, "The lock
protocol").

One OS crontab line or OpenClaw automation calls `alaya cron run --once` often (every 15
minutes, see cron.example.json); alaya decides from `config.cron.jobs` (cron expressions,
croniter, in the machine's local time) and the last runs in `state/cron.json` which jobs are
due. Defaults: `introspect` every 4 hours, `backup` daily at 03:30.

When is a job due? When its next scheduled time after its last run has come
(`next_fire(schedule, last_run) <= now`). Missed ticks (machine asleep, scheduler down) are
caught up once, not once per missed tick. A job that never ran counts from when the scheduler
first saw it (`first_seen`, recorded on the first pass), so it runs at its first scheduled
time after installation rather than at once: a fresh install does not start with a backup,
and adding a job does not fire it in the middle of the day. (`alaya backup` and
`alaya introspect` run a job by hand.) A failed run counts as a run: it is reported (exit 1,
`last_error` in the state file) and tried again at the next scheduled time, not every tick.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..store.fsutil import atomic_write

if TYPE_CHECKING:
    from ..config import CronJobConfig
    from ..memory import Memory

Job = Callable[["Memory"], dict[str, Any]]


def _introspect(memory: "Memory") -> dict[str, Any]:
    from .introspect import run

    report = run(memory)
    if not report["ok"]:
        failed = [s for s in report["steps"] if not s["ok"]]
        raise RuntimeError(f"introspect step {failed[0]['step']} failed: {failed[0]['error']}")
    return report


def _backup(memory: "Memory") -> dict[str, Any]:
    from .backup import backup

    return backup(memory, format=memory.config.backup.format)


JOBS: dict[str, Job] = {"introspect": _introspect, "backup": _backup}


# --- the pure part: which jobs are due -------------------------------------------------------


def next_fire(schedule: str, after: datetime) -> datetime:
    from croniter import croniter

    return croniter(schedule, after).get_next(datetime)


def is_due(schedule: str, now: datetime, *, last_run: datetime | None, first_seen: datetime | None) -> bool:
    reference = last_run or first_seen or now
    return next_fire(schedule, reference) <= now


def due_jobs(jobs: dict[str, "CronJobConfig"], state: dict[str, dict[str, Any]], now: datetime) -> list[str]:
    """Names of the enabled jobs due at `now`, in config order. `state` is name -> {last_run,
    first_seen} as ISO strings; a job missing from it has just been seen (not due)."""
    due = []
    for name, job in jobs.items():
        if not job.enabled:
            continue
        entry = state.get(name, {})
        if is_due(job.schedule, now, last_run=_parse(entry.get("last_run")), first_seen=_parse(entry.get("first_seen"))):
            due.append(name)
    return due


def next_due(jobs: dict[str, "CronJobConfig"], state: dict[str, dict[str, Any]], now: datetime) -> datetime | None:
    times = []
    for name, job in jobs.items():
        if job.enabled:
            entry = state.get(name, {})
            reference = _parse(entry.get("last_run")) or _parse(entry.get("first_seen")) or now
            times.append(next_fire(job.schedule, reference))
    return min(times) if times else None


def validate(jobs: dict[str, "CronJobConfig"]) -> None:
    from croniter import croniter

    for name, job in jobs.items():
        if not croniter.is_valid(job.schedule):
            raise ConfigError(f"cron.jobs.{name}.schedule: not a valid cron expression: {job.schedule!r}")


def _parse(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


def local_now() -> datetime:
    return datetime.now().astimezone()


# --- running --------------------------------------------------------------------------------


def _state_path(memory: "Memory"):
    return memory.dirs.state / "cron.json"


def load_state(memory: "Memory") -> dict[str, dict[str, Any]]:
    try:
        doc = json.loads(_state_path(memory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    return {k: v for k, v in (jobs or {}).items() if isinstance(v, dict)}


def save_state(memory: "Memory", state: dict[str, dict[str, Any]]) -> None:
    atomic_write(_state_path(memory), json.dumps({"version": 1, "jobs": state}, indent=1, sort_keys=True) + "\n")


def run_once(memory: "Memory", now: datetime | None = None, jobs: dict[str, Job] | None = None) -> dict[str, Any]:
    """One pass: run what is due, remember it. Two passes never run at once (state/cron.lock)."""
    from filelock import FileLock, Timeout

    memory.dirs.require()
    now = now or local_now()
    registry = JOBS if jobs is None else jobs
    config_jobs = memory.config.cron.jobs
    validate(config_jobs)
    lock = FileLock(str(memory.dirs.state / "cron.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return {"ok": True, "busy": True, "ran": [], "message": "another `alaya cron run` is running"}
    try:
        state = load_state(memory)
        for name, job in config_jobs.items():
            if job.enabled:
                state.setdefault(name, {}).setdefault("first_seen", now.isoformat(timespec="seconds"))
        save_state(memory, state)
        ran = []
        for name in due_jobs(config_jobs, state, now):
            started = time.monotonic()
            entry: dict[str, Any] = {"job": name}
            try:
                job = registry.get(name)
                if job is None:
                    raise ConfigError(f"cron.jobs.{name}: unknown job (known: {', '.join(sorted(registry))})")
                entry.update(ok=True, result=job(memory))
            except Exception as exc:  # noqa: BLE001 - one job's failure must not stop the others
                entry.update(ok=False, error=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            entry["seconds"] = round(time.monotonic() - started, 3)
            state[name].update(
                last_run=now.isoformat(timespec="seconds"), last_ok=entry["ok"],
                last_error=entry.get("error"), last_seconds=entry["seconds"],
            )
            save_state(memory, state)
            ran.append(entry)
        upcoming = next_due(config_jobs, state, now)
        return {
            "ok": all(e["ok"] for e in ran),
            "ran": ran,
            "next": upcoming.isoformat(timespec="seconds") if upcoming else None,
        }
    finally:
        lock.release()


def run_forever(make_memory: Callable[[], "Memory"], report: Callable[[dict[str, Any]], None],
                stop: threading.Event | None = None, max_sleep: float = 300.0) -> None:
    """Pass after pass until SIGINT/SIGTERM (a running job finishes first). Config is re-read
    every pass; sleeps until the next job is due, at most `max_sleep` seconds."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    while not stop.is_set():
        memory = make_memory()
        result = run_once(memory)
        if result["ran"] or result.get("busy"):
            report(result)
        upcoming = _parse(result.get("next"))
        wait = max_sleep if upcoming is None else (upcoming - local_now()).total_seconds()
        stop.wait(min(max(wait, 1.0), max_sleep))
    print("alaya cron: stopped", file=sys.stderr)
