"""`alaya introspect`: scheduled maintenance as a sequence of steps (docs/architecture.md, "The
lock protocol" and "Plugins and hooks").

Steps come from the `introspect` hook, so a plugin (or the full maintenance of a later issue:
consolidate, cool, forget) adds its own. Built in: distill the sessions left pending (one by
one, so one bad session does not stop the others) and refresh the integrated summaries. Each
step is timed and reported; a failing step does not stop the next ones.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..bridge import summary
from ..errors import InputError
from .steps import DRY_RUN_STEPS, Step, using

if TYPE_CHECKING:
    from ..memory import Memory


def default_steps() -> list[Step]:
    return [Step("distill-pending", distill_pending, order=10), Step("workspace-sync", workspace_sync, order=15),
            Step("reflect", reflect_step, order=16),
            Step("refresh-summary", refresh_summary, order=90)]


def reflect_step(memory: "Memory") -> dict[str, Any]:
    """Entity and opinion pages in each known workspace's bank/, opinions' confidence weighed
    (reflect.py), when `workspace.reflect_on_introspect` is on. No workspace: says so."""
    from .common import as_datetime
    from .reflect import reflect
    from .steps import current

    if not memory.config.workspace.reflect_on_introspect:
        return {"workspaces": 0, "note": "off (workspace.reflect_on_introspect)"}
    report = reflect(memory, now=as_datetime(current().now))
    out: dict[str, Any] = {"workspaces": report["workspaces"]}
    if "note" in report:
        out["note"] = report["note"]
    for key in ("updated", "written", "kept"):
        out[key] = sum(len(r[key]) for r in report["reports"])
    for r in report["reports"]:
        for kept in r["kept"]:  # a race lost to a human is news; a page edited by hand is in the report
            if "meanwhile" in kept["why"]:
                print(f"alaya: reflect: {r['workspace']}/{kept['page']}: {kept['why']}", file=sys.stderr)
    return out


def workspace_sync(memory: "Memory") -> dict[str, Any]:
    """The workspaces synced before and `workspace.dir` (docs/workspace.md), when
    `workspace.sync_on_introspect` is on: a stat per unchanged file."""
    from .workspace import known_workspaces, sync_quietly

    if not memory.config.workspace.sync_on_introspect:
        return {"workspaces": 0}
    done = [r for folder, agent in known_workspaces(memory) if (r := sync_quietly(memory, folder, agent)) is not None]
    return {"workspaces": len(done), "stored": sum(r["stored"] for r in done), "cards": sum(r["cards"] for r in done),
            "superseded": sum(r["superseded"] for r in done)}


def distill_pending(memory: "Memory") -> dict[str, Any]:
    done, cards, failed = 0, 0, []
    for row in memory.pending_sessions():
        try:
            cards += memory.distill(row["id"]).cards
            done += 1
        except Exception as exc:  # noqa: BLE001 - reported; the session stays pending
            failed.append({"session_id": row["id"], "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"})
    if failed and not done:
        raise RuntimeError(f"{len(failed)} sessions failed to distill, e.g. {failed[0]['session_id']}: {failed[0]['error']}")
    return {"sessions": done, "cards": cards, "failed": failed}


def refresh_summary(memory: "Memory") -> dict[str, Any]:
    with memory.reading("introspect (agents)") as graph:
        agents = sorted({s["agent_id"] or "shared" for s in graph.sessions()})
    scopes = sorted(set(agents) | set(summary.cached_scopes(memory)) | {"shared"})
    refreshed = summary.refresh(memory, scopes)
    return {"scopes": len(refreshed)}


def run(memory: "Memory", *, steps: list[str] | None = None, dry_run: bool = False, now: Any = None,
        on_step: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run every step in order (or only the named `steps`); the report says what each did or
    why it failed. `dry_run`: steps that support it report what they would do, others are
    skipped; `now` (datetime, timestamp or ISO string) is the clock the maintenance steps use;
    `on_step` gets each step's entry as soon as the step ends (a terminal shows progress)."""
    memory.dirs.require()
    found: list[Step] = []
    for result in memory.hooks.hook.introspect(memory=memory):
        found.extend(s for s in (result if isinstance(result, list) else [result]) if isinstance(s, Step))
    if steps:
        unknown = sorted(set(steps) - {s.name for s in found})
        if unknown:
            raise InputError(f"unknown introspect step {unknown[0]!r} (steps: {', '.join(s.name for s in sorted(found, key=lambda s: s.order))})")
        found = [s for s in found if s.name in steps]
    report: list[dict[str, Any]] = []
    with using(now=now, dry_run=dry_run, steps=[s.name for s in found]):
        for step in sorted(found, key=lambda s: s.order):
            started = time.monotonic()
            entry: dict[str, Any] = {"step": step.name}
            if dry_run and step.name not in DRY_RUN_STEPS:
                entry.update(ok=True, result={"skipped": "no dry run for this step"})
            else:
                try:
                    entry.update(ok=True, result=step.run(memory) or {})
                except Exception as exc:  # noqa: BLE001 - one step's failure must not stop the others
                    entry.update(ok=False, error=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            entry["seconds"] = round(time.monotonic() - started, 3)
            report.append(entry)
            if on_step is not None:
                on_step(entry)
    return {"ok": all(e["ok"] for e in report), "dry_run": dry_run, "steps": report}
