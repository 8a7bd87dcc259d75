"""The maintenance steps of `alaya introspect` (contributed through the `introspect` hook by
the built-in plugin), in the order they run:

    10 distill-pending   (introspect.py)   sessions still waiting to be distilled
    15 workspace-sync    (introspect.py)   the OpenClaw workspaces' Markdown memory (workspace.py)
    16 reflect           (introspect.py)   entity and opinion pages in bank/, opinions weighed (reflect.py)
    20 consolidate                          merge duplicates, link similar cards, review relation names
    30 fold-access                          the recall access log → access_count / last_accessed
    40 cool-down                            temperatures and tiers (every tier keeps its L1 row)
    50 forget                               filler, superseded and unused cards (never owner-stated by age),
                                            restorable until their saved copies are purged (forget.py)
    55 core                                 the curated core promoted by recall evidence, MEMORY.md (core.py)
    70 optimize                             compact LanceDB, fold new rows into its indexes
    80 time-buckets                         daily / weekly / monthly summaries in state/buckets.json
    85 metrics                              today's health snapshot in state/metrics.jsonl (metrics.py)
    90 refresh-summary   (introspect.py)   the integrated summary per scope

The access log is folded before cooling down so that temperatures see the latest recalls.
When a run has two or more of consolidate … forget (and is not a dry run), they are planned
from one snapshot and applied in one write-lock hold (batch.py): the first of them does it and
each reports its own part.
`now` and `dry_run` come from `introspect.run(...)` through `current()`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from . import access, batch, buckets, consolidate, core, forget, metrics_history, temperature

if TYPE_CHECKING:
    from ..memory import Memory


@dataclass(frozen=True)
class Options:
    now: Any = None
    dry_run: bool = False
    steps: frozenset[str] | None = None  # the steps this run will run (None: not known)
    shared: dict[str, Any] = field(default_factory=dict)  # batch.py's reports, once it ran


_options: contextvars.ContextVar[Options] = contextvars.ContextVar("alaya_introspect_options", default=Options())


def current() -> Options:
    return _options.get()


@contextmanager
def using(*, now: Any = None, dry_run: bool = False, steps: Any = None) -> Iterator[Options]:
    token = _options.set(Options(now=now, dry_run=dry_run, steps=frozenset(steps) if steps is not None else None))
    try:
        yield _options.get()
    finally:
        _options.reset(token)


@dataclass
class Step:
    name: str
    run: Callable[["Memory"], dict[str, Any] | None]
    order: int = 50


def _batched(memory: "Memory", name: str) -> dict[str, Any] | None:
    """When introspect runs two or more of consolidate, fold-access, cool-down and forget (and
    not as a dry run), the first of them plans and applies them all in one write-lock hold
    (batch.py) and each step reports its own part; None: run the step on its own."""
    o = current()
    names = (o.steps or frozenset()) & set(batch.STEPS)
    if o.dry_run or len(names) < 2 or name not in names:
        return None
    if not o.shared:
        try:
            o.shared["reports"] = batch.run(memory, set(names), now=o.now)
        except Exception as exc:
            o.shared["error"] = exc
            raise
    if "error" in o.shared:
        raise o.shared["error"]
    return o.shared["reports"][name]


def _batchable(name: str, function: Callable[..., dict[str, Any]]) -> Callable[["Memory"], dict[str, Any]]:
    """A step that takes its report from the shared one-hold batch when the run has one, and
    otherwise runs `function(memory, now=…, dry_run=…)` on its own."""

    def run(memory: "Memory") -> dict[str, Any]:
        batched = _batched(memory, name)
        if batched is not None:
            return batched
        options = current()
        return function(memory, now=options.now, dry_run=options.dry_run)

    return run


_consolidate = _batchable("consolidate", consolidate.consolidate)
_fold = _batchable("fold-access", access.fold)
_cool = _batchable("cool-down", temperature.cool_down)
_forget = _batchable("forget", forget.forget)


def _optimize(memory: "Memory") -> dict[str, Any]:
    """Compaction under the shared lock: readers go on (LanceDB is versioned), writers wait, and
    versions younger than an hour are kept for readers that opened them."""
    if current().dry_run:
        return {"dry_run": True}
    with memory.reading("introspect optimize"):
        memory.index.optimize(cleanup_older_than=timedelta(hours=1))
        rows = memory.index.card_count()
    return {"tables": 2, "card_rows": rows}


def _core(memory: "Memory") -> dict[str, Any]:
    """After the fold (fresh evidence) and forget (no departed card promoted); never batched."""
    o = current()
    return core.run(memory, now=o.now, dry_run=o.dry_run)


def _buckets(memory: "Memory") -> dict[str, Any]:
    o = current()
    return buckets.refresh(memory, now=o.now, dry_run=o.dry_run)


def _metrics(memory: "Memory") -> dict[str, Any]:
    o = current()
    return metrics_history.keep(memory, now=o.now, dry_run=o.dry_run)


def maintenance_steps() -> list[Step]:
    return [
        Step("consolidate", _consolidate, order=20),
        Step("fold-access", _fold, order=30),
        Step("cool-down", _cool, order=40),
        Step("forget", _forget, order=50),
        Step("core", _core, order=55),
        Step("optimize", _optimize, order=70),
        Step("time-buckets", _buckets, order=80),
        Step("metrics", _metrics, order=85),
    ]


DRY_RUN_STEPS = frozenset({"consolidate", "fold-access", "cool-down", "forget", "core", "optimize", "time-buckets",
                           "metrics"})
