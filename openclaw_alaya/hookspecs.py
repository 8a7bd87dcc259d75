"""Hook specifications: what a plugin can contribute to alaya (docs/architecture.md, "Plugins
and hooks").

Plugins are modules or objects with functions marked `@hookimpl`, registered through the
entry-point group `openclaw_alaya` (or `$ALAYA_PLUGINS`, a comma-separated list of module
names). The built-in behaviour is itself a plugin: `openclaw_alaya.default_plugin` (and
`redaction_plugin`), named by the package top. The manager (plugins.py) is handed down to the
code that calls the hooks as `memory.hooks`: `Alaya(dir, hooks=manager)`, else the process's.

    from openclaw_alaya.hookspecs import hookimpl

    @hookimpl
    def register_distillers(register):
        register("mine", lambda config: MyDistiller())
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "openclaw_alaya"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_embedders(register: Any) -> None:
    """Make embedders available to `embedding.provider` in config.

    Call `register(name, factory)` for each; `factory(config)` returns an object with `id`,
    `dim` and `embed(texts) -> vectors`. A later registration of the same name wins, so a
    plugin can replace a built-in one.
    """


@hookspec
def register_distillers(register: Any) -> None:
    """Make distillers available to `distill.llm_provider` in config.

    Call `register(name, factory)`; `factory(config)` returns an object with `name` and
    `distill(session, start) -> DistillResult`.
    """


@hookspec
def register_stores(register: Any) -> None:
    """Make storage backends available to `storage.backend` in config (store/backends.py).

    Call `register(name, factory)`; `factory(dirs, config, embedder=…, recover=…)` returns a
    `store.ports.backend.Backend` for that data directory (`embedder`: a callable giving the
    engine's embedder; `recover`: what the outermost write hold runs first); the built-in is
    `embedded` (Kuzu + LanceDB + file locks). A later registration of the same name wins.
    """


@hookspec
def store_filter(session: Any, memory: Any) -> Any:
    """Filter a session before anything of it is stored, embedded or injected (e.g. redact
    secrets). Runs on every ingest path (`Alaya.ingest`: CLI, stdin, session-end hook, API)
    and again on a session loaded from L3 for distilling.

    `memory` is the engine (a `memory.Memory`; its `config`). Return a changed `Session` (same
    id and agent) or None to leave it as it is. Filters run one after another, each on the
    previous one's output (`redact.apply_store_filters`); the built-in one is
    `openclaw_alaya.redaction_plugin`. Filters must be idempotent: stored text passes again.
    """


@hookspec
def session_start(memory: Any, request: Any) -> Any:
    """Contribute parts of the text injected at the start of a session.

    `memory` is the engine (a `memory.Memory`), `request` a `bridge.inject.StartRequest` (agent
    id, session id, prompt, budget). Return a `bridge.inject.Section`, a list of them, or None.
    A section belongs to a tier (`Section.tier`: `working`, `short_term` or `long_term`, the
    default) and is rendered under that tier's heading, in `order`, inside the untrusted-memory
    block. Over budget, each tier gives up tokens as `bridge/inject.py` says: items shortened
    to their `Item.short` form, then dropped from the end, last section first, down to each
    section's `min_items`, then entirely; long-term first, the working tier last, and a tier
    within its share of `hook.tier_split` only once no tier is over its own.
    """


@hookspec
def session_end(memory: Any, event: Any) -> Any:
    """Capture a session when OpenClaw reports one (each turn, reset, compaction, end).

    `event` is a `bridge.capture.EndEvent` (agent id, session id, reason, turns). The built-in
    plugin ingests the new turns (L3 first) and distills them. Return a dict merged into the JSON
    the hook prints, or None.
    """


@hookspec
def introspect(memory: Any) -> Any:
    """Contribute maintenance steps to `alaya introspect` (and the scheduled introspect job).

    Return a `maintenance.steps.Step` (name, order, run(memory) -> dict) or a list of them. Steps run
    in `order`; a failing step is reported and the next one still runs.
    """
