"""`Alaya`: the memory engine behind the CLI and the Python API.

It owns one data directory's storage backend (`storage`, picked by `storage.backend`; the
built-in one pairs the lock with Kuzu: store/embedded/backend.py) and its lock idiom
(`reading`, `writing`; docs/architecture.md, "The lock protocol"): parse and compute outside
the lock, take the shared lock to read or the exclusive lock to apply, and write L3 → L2 → L1
in that order. Reads write nothing; `upgrade` (init, the daemon's warm-up) and every write hold
bring a stale store up to date. The modules below it are handed the engine as a `memory.Memory`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from . import redact
from .config import Config
from .errors import UNWRITABLE, InputError, NotFoundError
from .ingest.sessions import parse_source, session_row
from .models import (
    CARD_TYPES,
    CORE_RELATIONS,
    ORIGINS,
    DistillReport,
    IngestResult,
    LinkResult,
    RecallNode,
    RecallResult,
    Session,
    TraceResult,
    check_choice,
    check_id,
    expand_link,
    is_custom,
    normalise_relation,
    now_iso,
    query_key,
    relation_description,
)
from .progress import progress
from .providers import bind, make_distiller, make_embedder
from .store import generation, tombstones
from .store.datadir import DataDir, resolve_data_dir
from .store.fsutil import append_line
from .store.raw import LINKS_LOG

if TYPE_CHECKING:
    import pluggy

    from .curate.forget import Forgotten
    from .curate.restore import Restored
    from .distill.plan import DistillPlan
    from .curate.notes import Remembered
    from .curate.triplets import Committed
    from .embedding import Embedder
    from .models import CardPage, CardRecord
    from .store.ports.backend import Backend
    from .store.ports.coordinator import Coordinator
    from .store.ports.graph import CardGraph, GraphReads, GraphViews
    from .store.ports.index import CardIndex
    from .store.ports.raw import RawSessions

_APPLY_BATCH_CARDS = 1000  # cards applied per write-lock hold when distilling a backlog (about 2 s at 10k cards)


class Alaya:
    """Long-term memory over one data directory. Cheap to construct; nothing opens until used."""

    def __init__(self, data_dir: str | Path | None = None, *, config: Config | None = None,
                 hooks: "pluggy.PluginManager | None" = None) -> None:
        self.dirs = DataDir(resolve_data_dir(data_dir))
        self._config = config
        self._hooks = hooks

    @property
    def hooks(self) -> "pluggy.PluginManager":
        """The plugin manager this engine calls (its providers, store filters, session-start
        sections, introspect steps): the one handed in, else the process's own."""
        if self._hooks is None:
            from .plugins import get_plugin_manager

            self._hooks = get_plugin_manager()
        return self._hooks

    # --- wiring ---------------------------------------------------------------------------

    @cached_property
    def config(self) -> Config:
        return self._config or Config.load(self.dirs.config)

    @cached_property
    def storage(self) -> "Backend":
        """The storage backend this data directory is kept in: `storage.backend` in config,
        from the `register_stores` registry (store/backends.py)."""
        from .curate.purge import finish_cut_off
        from .ingest.recovery import recover
        from .plugins import registry
        from .store.backends import open_backend

        return open_backend(self.config.storage.backend, registry("register_stores", self.hooks), self.dirs,
                            self.config, embedder=lambda: self.embedder,
                            recover=lambda: recover(self, finish_cut_off))

    @property
    def lock(self) -> "Coordinator":
        return self.storage.lock

    @property
    def raw(self) -> "RawSessions":
        return self.storage.raw

    @cached_property
    def embedder(self) -> "Embedder":
        return bind(self, make_embedder(self))  # a remote embedder caches in state/

    @property
    def index(self) -> "CardIndex":
        return self.storage.index

    def reopen_index(self) -> None:
        """Forget the L1 handle, so the next use opens the tables again (after a rebuild or
        reembed swapped them)."""
        self.storage.reopen_index()

    @property
    def graph_views(self) -> "GraphViews":
        """What recall reads the graph through (an in-memory copy once this process recalls
        repeatedly, where the backend keeps one)."""
        return self.storage.graph_views

    # --- the lock protocol ----------------------------------------------------------------

    def reading(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["CardGraph"]:
        """The shared lock and the graph read-only, closed before the lock is released.
        `timeout` instead of the configured one (0: only if free now). Writes nothing: a store
        that must be upgraded first is refused (`StaleStoreError`, naming `alaya init`)."""
        return self.storage.reading(operation, timeout=timeout)

    def viewing(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["GraphReads"]:
        """As `reading`, but the graph as recall reads it: an in-memory copy in a process that
        recalls repeatedly, the graph itself otherwise."""
        return self.storage.viewing(operation, timeout=timeout)

    def writing(self, operation: str, *, change_graph: bool = True) -> AbstractContextManager["CardGraph"]:
        """The exclusive lock and the graph read-write as one transaction, committed and closed
        before the lock is released (`with graph:` inside commits it earlier, so that L1 is
        written after L2). The graph opens only if the hold uses it. `change_graph=False`:
        the hold changes other layers and only reads the graph (no generation bump). The
        outermost hold first finishes a dead writer's work and upgrades a stale store."""
        return self.storage.writing(operation, change_graph=change_graph)

    def upgrade(self) -> None:
        """Under the write lock, finish a dead writer's work and bring a store an earlier version
        made up to date (its schema, its full-text index): `alaya init`, the daemon's warm-up;
        a no-op when there is nothing to do."""
        self.storage.upgrade()

    # --- init -----------------------------------------------------------------------------

    def init(self) -> Path:
        """Create the data directory, config, graph schema and index. Safe to run again."""
        self.dirs.create()
        if self.dirs.config.exists():
            Config.upgrade_file(self.dirs.config)
        else:
            (self._config or Config()).for_new_store().save(self.dirs.config)
        rows = [{"name": name, "description": relation_description(name)} for name in CORE_RELATIONS]
        # a remote embedder: init stays offline, the names go with the first distill batch (distill/batch.py)
        remote = hasattr(self.embedder, "client")
        vectors = None if remote else self.embedder.embed([row["description"] for row in rows])
        self.storage.create()
        self.upgrade()
        if vectors is not None:
            with self.writing("init (relations)", change_graph=False):
                self.index.upsert_relations(rows, vectors)
        return self.dirs.root

    # --- ingest ---------------------------------------------------------------------------

    def ingest(
        self,
        source: str | Path | bytes | Session,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        include_tools: bool = False,
        origin: str | None = None,
    ) -> IngestResult:
        """Store a session's new turns in L3 and its Session node in L2. Nothing is distilled yet.
        Turns that do not say where they came from get an origin by role, capped by `origin`."""
        self.dirs.require()
        session = parse_source(source, agent_id=agent_id, session_id=session_id, include_tools=include_tools,
                               max_turn_chars=self.config.ingest.max_turn_chars, origin=origin)
        if session.id in tombstones.forgotten(self.raw, "session"):  # forgotten on purpose: not again
            return IngestResult(session_id=session.id, new_turns=0, total_turns=0, path="", forgotten=True)
        session = redact.for_ingest(self, session)  # secrets out before anything is stored
        with self.writing(f"ingest {session.id}") as graph:
            merged, new_turns = self.raw.merge(session)
            stored = None if new_turns else self.raw.find(merged.id)
            path = stored or self.raw.write(merged)
            with graph:
                known = graph.get_session(merged.id) or {}
                graph.upsert_session(session_row(self, merged, path, known, now_iso()))
            redact.record_new_turns(self, new_turns)
        return IngestResult(session_id=merged.id, new_turns=len(new_turns), total_turns=len(merged.turns), path=str(path))

    def ingest_many(self, sources: Any, *, agent_id: str | None = None, include_tools: bool = False,
                    on_bad: Callable[[Any, InputError], None] | None = None, origin: str | None = None) -> list[IngestResult]:
        """`ingest` for many sessions, a chunk per write-lock hold (ingest/batch.py); `on_bad`:
        skip a source that cannot be parsed and hand it over with its error."""
        from .ingest.batch import ingest_many

        return ingest_many(self, sources, agent_id=agent_id, include_tools=include_tools, on_bad=on_bad, origin=origin)

    # --- distill --------------------------------------------------------------------------

    def pending_sessions(self) -> list[dict[str, Any]]:
        with self.reading("distill (finding pending sessions)") as graph:
            sessions = graph.sessions()
        return [s for s in sessions if (s["distilled_turns"] or 0) < (s["turn_count"] or 0)]

    def distill(self, session_id: str | None = None) -> DistillReport:
        """Turn undistilled turns into cards, links and index rows.

        Sessions are distilled outside the lock and applied in batches, so a long backlog
        neither holds the lock for long nor reopens Kuzu once per session."""
        self.dirs.require()
        pending = self.pending_sessions()
        if session_id is not None:
            check_id(session_id, "session id")
            pending = [s for s in pending if s["id"] == session_id]
        from .distill.plan import prepare
        from .providers import record_usage

        distiller = bind(self, make_distiller(self))
        report = DistillReport()
        batch: list[DistillPlan] = []
        try:
            for done, row in enumerate(pending, 1):
                session = redact.for_derived(self, self.raw.load(row["id"]))
                if session is not None:  # embedded per batch, not per session (distill/batch.py)
                    batch.append(
                        prepare(session, row["distilled_turns"] or 0, distiller, None,
                                self.config.distill.max_cards_per_session, self.config.provenance)
                    )
                if batch and (done == len(pending) or sum(len(p.cards) for p in batch) >= _APPLY_BATCH_CARDS):
                    self._apply(batch, report, distiller)
                    batch = []
                progress(f"distilled {done}/{len(pending)} sessions", done, len(pending))
        finally:
            record_usage(self, distiller, self.embedder)
        return report

    def _apply(self, plans: list[DistillPlan], report: DistillReport, distiller: Any = None) -> None:
        """Embed the batch, resolve it against stored cards, then L3 contexts, L2 and L1 under
        the write lock (distill/batch.py)."""
        from .distill.batch import apply_batch

        apply_batch(self, plans, report, distiller)

    # --- recall / trace -------------------------------------------------------------------

    def recall(
        self,
        query: str | None = None,
        *,
        concepts: list[str] | None = None,
        relations: list[str] | None = None,
        depth: int | None = None,
        from_nodes: list[str] | None = None,
        budget: int | None = None,
        scope: str | None = None,
        top_k: int | None = None,
        since: str | None = None,
        until: str | None = None,
        now: datetime | None = None,
        origins: list[str] | None = None,
        tags: list[str] | None = None,
        log_access: bool = True,
    ) -> RecallResult:
        """Find cards by meaning and words, then walk the graph; a read, never a write to L2.
        `since`/`until` keep the cards dated in that range ("2026-11-02", "7d", "last week": see
        recall/periods.py); `now` is what they and a time phrase in the query count from;
        `origins` keeps the cards of those origins ("unknown": stored before provenance); `tags`
        the cards filed under one of those tags or a child of it (`技术/前端` keeps
        `技术/前端/React`: recall/tags.py).

        `log_access=False` (issue 31): the system's own read, not a use — session start's block
        (bridge/inject.py: what it injects is shown to the agent, not asked for by it) and
        forget-by-query's search for what to forget (curate/forget.py). It leaves no line in the
        access log, so it lifts no card's access count, usage history or core evidence and is
        no recall of the hit rate: those measure the agent's and the owner's recalls (the CLI,
        the tools), and a card injected at every session start would otherwise stay "used",
        HOT and promoted to the core by being injected."""
        from .recall.navigate import UNKNOWN_ORIGIN, Recaller, RecallRequest
        from .recall.periods import aware, window
        from .recall.usage_now import unfolded

        self.dirs.require()
        try:
            now = aware(now)
            period = window(since, until, now)
            request = RecallRequest(
                query=query,
                concepts=concepts or [],
                relations=[normalise_relation(r) for r in relations or []],
                depth=depth,
                from_nodes=[check_id(n, "card id") for n in from_nodes or []],
                budget=budget,
                scope=check_id(scope, "scope") if scope else None,
                top_k=top_k,
                since=period.start if period else None,
                until=period.end if period else None,
                now=now,
                origins=None if origins is None else [check_choice(o, (*ORIGINS, UNKNOWN_ORIGIN), "origin") for o in origins],
                tags=[t for t in tags or [] if t.strip()],
            )
        except (ValidationError, ValueError) as exc:
            raise InputError(f"recall: {_first_error(exc)}") from None
        recaller = Recaller(self.config.recall, self.embedder, unfolded(self.dirs.state))
        with self.viewing("recall") as graph:
            result = recaller.run(request, graph, self.index)
        self._with_evidence(result.nodes)
        if log_access:
            self._log_access([node.card_id for node in result.nodes], query_key(query, concepts), now)
        return result

    def _with_evidence(self, nodes: list[RecallNode]) -> None:
        """An opinion comes with the cards reflect counted for and against it (issue 16's
        opinion shape); the log is read only when an opinion is among the results."""
        opinions = [n for n in nodes if n.kind == "opinion"]
        if not opinions:
            return
        from .recall.evidence import Counted, counted

        found = counted(self.raw)
        for node in opinions:
            known = found.get(node.card_id) or Counted()
            node.supporting, node.contradicting = known.supporting, known.contradicting

    def _log_access(self, card_ids: list[str], query: str | None, now: datetime) -> None:
        """Recall stays a read: usage goes to an append-only log that introspect folds in, one
        line per recall, an empty one too (the hit rate counts those: maintenance/access.py has
        the line's shape). On a full or read-only disk the recall is answered and the usage of
        this one is not counted."""
        try:
            append_line(self.dirs.access_log, json.dumps({"ts": now.timestamp(), "cards": card_ids, "q": query}))
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise

    def summary(self, period: str, at: str | datetime | None = None, *, now: datetime | None = None) -> dict[str, Any]:
        """What was talked about in the day, week or month around `at` (default: now): sessions,
        cards, types, top tags, highlights (recall/buckets.py)."""
        from .recall.buckets import summary

        return summary(self, period, at, now=now)

    def trace(self, card: str) -> TraceResult:
        """The turns a card came from, in their sessions, with a little context around them
        (the id of a card merged into another traces that one)."""
        from .recall.listing import find_cards
        from .recall.trace import build_trace

        self.dirs.require()
        check_id(card, "card id")
        with self.reading("trace") as graph:
            found = find_cards(graph, [card])[0]
            sessions = {s.session_id: graph.get_session(s.session_id) for s in found.sources}
        return build_trace(found, sessions, self.raw)

    # --- deliberate memory (curate/) ------------------------------------------------------

    def remember(self, text: str, **options: Any) -> "Remembered":
        """Store a fact or note as a card now: `type`, `tags`, `subjects`, `importance` (0-1),
        `agent` (curate/notes.py)."""
        from .curate.notes import Note, remember

        self.dirs.require()
        return self._changed(remember(self, _request(Note, "remember", text=text, **options)))

    def correct(self, card: str, text: str, *, reason: str | None = None) -> "Remembered":
        """Store what is true now and supersede `card` with it (curate/notes.py)."""
        from .curate.notes import correct

        self.dirs.require()
        return self._changed(correct(self, card, text, reason=reason))

    def commit(self, triplets: list[Any], **options: Any) -> "Committed":
        """Store `{subject, relation, object, confidence}` triplets; `entity_types`,
        `temporal_tag`, `agent` (curate/triplets.py)."""
        from .curate.triplets import Commit, commit

        return self._changed(commit(self, _request(Commit, "commit", triplets=triplets, **options)))

    def forget(self, cards: list[str] | None = None, *, session: str | None = None, query: str | None = None,
               criteria: dict[str, Any] | None = None, **options: Any) -> "Forgotten":
        """Forget cards, a session, the cards a query finds, or those meeting `criteria`
        (`subject_contains`, `relation_type`, `time_before`); `reason`, `purge_raw`,
        `dry_run` (curate/forget.py)."""
        from .curate import forget

        self.dirs.require()
        if sum(x is not None and x != [] for x in (cards, session, query, criteria)) != 1:
            raise InputError("forget: give card ids, a session, a query or criteria (one of them)")
        if session is not None:
            gone = forget.forget_session(self, session, **options)
        elif query is not None:
            gone = forget.forget_query(self, query, **options)
        elif criteria is not None:
            gone = forget.purge(self, _request(forget.Criteria, "purge", **criteria), **options)
        else:
            gone = forget.forget_cards(self, list(cards or []), **options)
        return gone if gone.dry_run else self._changed(gone, forgotten=[c["id"] for c in gone.cards])

    def restore(self, cards: list[str]) -> "Restored":
        """Put cards introspect forgot back as they were, until their copies are purged
        (curate/restore.py, issue 31)."""
        from .curate import restore

        self.dirs.require()
        return self._changed(restore.restore(self, list(cards)))

    def _changed(self, result: Any, forgotten: list[str] | None = None) -> Any:
        """`result`, once the store's generation has moved on (store/generation.py, issue 33):
        what memory says changed on purpose, so a cached injected block is stale."""
        generation.bump(self.dirs.state, forgotten or ())
        return result

    def forgotten(self) -> list[dict[str, Any]]:
        """The cards introspect forgot that `restore` can bring back: id, title, reason, when."""
        from .curate import restore

        self.dirs.require()
        return restore.listing(self)

    def entities(self, action: str = "list", name: str | None = None, value: str | None = None,
                 **options: Any) -> dict[str, Any]:
        """`list` (`kind`, `limit`, `offset`), `show NAME`, `merge NAME OTHER`, `alias NAME
        ALIAS`, `rename NAME NEW`, `type NAME TYPE` (curate/entities.py)."""
        from .curate import entities

        self.dirs.require()
        if action == "list":
            return entities.list_entities(self, **options)
        if not name:
            raise InputError(f"entities {action}: name the entity")
        if action == "show":
            return entities.show(self, name)
        if not value:
            raise InputError(f"entities {action}: give the second name (or the type)")
        return entities.change(self, action, name, value)

    def session_report(self, session_id: str) -> dict[str, Any]:
        """Entities, relation density and hotspots of one session (curate/report.py)."""
        from .curate.report import session_report

        self.dirs.require()
        return session_report(self, session_id)

    # --- get / list -----------------------------------------------------------------------

    def get(self, ids: list[str]) -> list["CardRecord"]:
        """Whole cards, in the order asked; the id of a card merged into another gives that
        card, with `forwarded_from` (recall/listing.py)."""
        from .recall.listing import find_cards

        self.dirs.require()
        wanted = [check_id(i, "card id") for i in ids]
        with self.reading("get") as graph:
            return find_cards(graph, wanted)

    def list_cards(self, *, type: str | None = None, tag: str | None = None, entity: str | None = None,
                   since: str | None = None, until: str | None = None, tier: str | None = None,
                   scope: str | None = None, limit: int | None = None, offset: int | None = None,
                   now: datetime | None = None) -> "CardPage":
        """Cards newest first, a page at a time (`limit` 20 by default, at most 1000), filtered
        by type, tag, entity (name or alias), tier, scope and when they were created (`since`,
        `until` and `now` as in `recall`; recall/listing.py)."""
        from .recall.listing import ListRequest, list_cards

        self.dirs.require()
        request = ListRequest.checked(type=type, tag=tag, entity=entity, since=since, until=until, tier=tier,
                                      scope=scope, limit=limit, offset=offset, now=now)
        with self.reading("list") as graph:
            return list_cards(graph, request)

    # --- link / schema -----------------------------------------------------------------

    def link(self, src: str, dst: str, rel: str = "RELATES_TO", *, weight: float = 1.0,
             reason: str | None = None) -> LinkResult:
        """A relation the agent or user found, and why (`reason`, kept on the edge); unknown
        names become custom relations."""
        self.dirs.require()
        reason = redact.clean_text(self, " ".join((reason or "").split())[:500]) or None
        check_id(src, "card id")
        check_id(dst, "card id")
        if src == dst:
            raise InputError("a card cannot be linked to itself")
        name = normalise_relation(rel)
        vector = None
        if is_custom(name):
            from .providers import embed_or_pending

            vector, ok = embed_or_pending(self.embedder, [relation_description(name)])
            vector = vector if ok else None  # embedder down: introspect's embed-pending adds it later
        with self.reading(f"link {src} {name} {dst} (checking the cards)") as graph:  # refused: nothing opened for writing
            missing = [c for c in (src, dst) if c not in graph.get_cards([src, dst])]
        if missing:
            raise NotFoundError(f"no card {missing[0]!r}")
        with self.writing(f"link {src} {name} {dst}") as graph:
            with graph:
                missing = [c for c in (src, dst) if c not in graph.get_cards([src, dst])]
                if missing:
                    raise NotFoundError(f"no card {missing[0]!r}")
                links = expand_link(src, dst, name, weight, now_iso(), reason)
                # L3 first: `alaya rebuild` replays manual links from raw/links.jsonl
                record = {"src": src, "dst": dst, "rel": name, "weight": weight, "ts": links[0].created_at}
                self.raw.append_log(LINKS_LOG, [{**record, "reason": reason} if reason else record])
                graph.add_links(links)
            if vector is not None:
                self.index.upsert_relations([{"name": name, "description": relation_description(name)}], vector)
        return LinkResult(src=src, dst=dst, rel=name, custom=is_custom(name), edges=len(links), reason=reason)

    def schema(self) -> dict[str, Any]:
        """Relation names (core and custom in use, a custom one with what `--rel` follows it as)
        and card types (built in and in use), with counts."""
        from .recall.synonyms import custom_meaning

        self.dirs.require()
        with self.reading("schema") as graph:
            counts = {**graph.relation_counts(), "EXTRACTED_FROM": graph.provenance_count()}
            types = graph.type_counts()
        relations = [
            {"name": name, "description": text, "core": True, "count": counts.get(name, 0)}
            for name, text in CORE_RELATIONS.items()
        ]
        relations += [
            {"name": name, "description": custom_meaning(name, self.config.recall.relation_aliases), "core": False, "count": n}
            for name, n in sorted(counts.items())
            if name not in CORE_RELATIONS
        ]
        node_types = [{"name": name, "description": text, "count": types.get(name, 0)} for name, text in CARD_TYPES.items()]
        node_types += [{"name": name, "description": "custom type", "count": n}
                       for name, n in sorted(types.items()) if name not in CARD_TYPES]
        return {"relations": relations, "node_types": node_types}


def _request(model: Any, operation: str, **fields: Any) -> Any:
    """A request validated at the edge: the first problem as a one-line InputError."""
    try:
        return model(**fields)
    except (ValidationError, ValueError) as exc:
        raise InputError(f"{operation}: {_first_error(exc)}") from None


def _first_error(exc: Exception) -> str:
    """The first problem of a request, in words a user reads, naming the field and the value."""
    if not isinstance(exc, ValidationError):
        return str(exc)
    error = exc.errors()[0]
    field = ".".join(str(p) for p in error["loc"])
    bounds = error.get("ctx") or {}
    if "ge" in bounds:
        return f"{field} must be {bounds['ge']} or more (got {error.get('input')!r})"
    if "le" in bounds:
        return f"{field} must be {bounds['le']} or less (got {error.get('input')!r})"
    cause = bounds.get("error")  # a validator's own words, without pydantic's "Value error, " (issue 35)
    message = str(cause) if cause is not None else error["msg"]
    return f"{field}: {message}" if field else message
