"""Carrying a forget out to its end, wherever it was stopped (issue 30: forgetting that
forgets, and a purge a kill cannot leave half done).

curate/forget.py decides what goes; this module makes it go, from every file and every text
derived from it, in steps that each can be run again:

1. the intent: the tombstone records (ids, turn ids, digests, never text) in the journal
   (`Coordinator.record_purge`), under the write hold, before anything changes;
2. L3: the tombstones not written yet; the session files of a session forgotten with
   `--purge-raw`; the purged turns' text in the session files and in every other card's copy
   of them (`raw/contexts/`); a forgotten session's entry in those copies; the forgotten
   cards' copies;
3. L2: the cards; the forgotten session, and it as a source of cards other sessions back too;
   the title and one-line summary of every session a forgotten card came from, again from the
   session file (they may have been taken from what went); entities no card mentions any more;
4. L1: the cards' rows;
5. `state/`'s caches of derived text (the integrated summary, time buckets, the LLM summary):
   deleted, each is recomputed from what is left when next wanted; and the cards' saved copies
   (`state/forgotten/`, kept for `alaya restore` when introspect forgot them: issue 31);
6. the stores scrubbed (`Backend.scrub`): a Kuzu delete leaves the strings on its pages and a
   LanceDB delete leaves them in old fragments and versions;
7. the intent removed.

A process killed at any step (SIGKILL, SIGINT, power) leaves the intent behind, and the next
write hold, or the next read (it finishes a cut-off write before it reads,
store/embedded/backend.py), runs every step again first (`finish_cut_off`): the purge rolls
forward, and the end state is the same as if nothing had stopped it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..models import Card
from ..redact import clean_text
from ..store import forgotten, tombstones

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..memory import Memory
    from ..store.ports.graph import CardGraph

Record = dict[str, Any]


def carry_out(memory: "Memory", records: list[Record], operation: str) -> int:
    """Forget what `records` name (tombstone records, curate/forget.py); how many turns' text went."""
    with memory.lock.write(operation):  # the outermost hold: a purge a dead process left goes first
        name = memory.lock.record_purge({"records": records})
        purged = _apply(memory, records)
        memory.lock.purge_done(name)
    return purged


def finish_cut_off(memory: "Memory") -> int:
    """Under the write hold (crash recovery, ingest/recovery.py): carry out the purges that a
    process stopped inside; how many."""
    waiting = memory.lock.pending_purges()
    for name, doc in waiting:
        _apply(memory, [r for r in doc.get("records") or [] if isinstance(r, dict)])
        memory.lock.purge_done(name)
    return len(waiting)


def redo(memory: "Memory", records: list[Record], install: "Callable[[], None]") -> int:
    """Under the write hold: `install` a copy of the stores built from before the forgets in
    `records` landed (`alaya rebuild`), then carry them out again on it; how many turns' text
    went (none: L3 had it done already). The intent is journalled before the copy goes in, so a
    process killed between the two leaves it for the next hold, which finishes the swap and
    then the purge (ingest/recovery.py): the copy's forgotten text never outlives a kill."""
    name = memory.lock.record_purge({"records": records}) if records else None
    install()
    if name is None:
        return 0
    purged = _apply(memory, records)
    memory.lock.purge_done(name)
    return purged


def _apply(memory: "Memory", records: list[Record]) -> int:
    """Steps 2 to 6 (the caller holds the write lock); each finds what is left to do."""
    card_ids = [str(r["id"]) for r in records if r.get("kind") == "card"]
    session_ids = [str(r["id"]) for r in records if r.get("kind") == "session"]
    whole = {str(r["id"]) for r in records if r.get("kind") == "session" and r.get("purged_raw")}
    turns: dict[str, set[str]] = {}
    for record in records:
        if record.get("kind") == "card" and record.get("purged_raw"):
            for source in record.get("sources") or []:
                turns.setdefault(str(source["session_id"]), set()).update(source.get("turn_ids") or [])
    cited = {str(s["session_id"]) for r in records if r.get("kind") == "card" for s in r.get("sources") or []}
    with memory.writing("forget (finding copies)", change_graph=False) as graph:
        citing = {sid: graph.session_card_ids(sid) for sid in sorted(cited | set(session_ids))}
    purged = _forget_text(memory, records, card_ids, session_ids, whole, turns, citing)
    with memory.writing("forget (graph)") as graph:
        with graph:
            graph.remove_cards(card_ids)
            for sid in session_ids:
                shared = graph.get_cards(graph.session_card_ids(sid)).values()
                _drop_source(graph, list(shared), sid)
            graph.delete_sessions(session_ids)
            _retitle(memory, graph, sorted(cited - set(session_ids)))
            graph.remove_unmentioned_entities()
        memory.index.delete_cards(card_ids)
        for path in memory.dirs.derived_text:
            path.unlink(missing_ok=True)
        forgotten.erase(memory.dirs.state, card_ids)
        memory.storage.scrub()
    return purged


def _forget_text(memory: "Memory", records: list[Record], card_ids: list[str], session_ids: list[str],
                 whole: set[str], turns: dict[str, set[str]], citing: dict[str, list[str]]) -> int:
    """Step 2, L3: tombstones first (from here on nothing brings it back), then the text."""
    written = {(t.get("kind"), t.get("id"), t.get("ts")) for t in tombstones.read(memory.raw)}
    tombstones.record(memory.raw, [r for r in records if (r.get("kind"), r.get("id"), r.get("ts")) not in written])
    for sid in sorted(whole):
        memory.raw.remove_session(sid)
    purged = sum(memory.raw.blank_turns(sid, sorted(ids)) for sid, ids in turns.items() if sid not in whole)
    for sid, cards in citing.items():
        blank = None if sid in session_ids else sorted(turns.get(sid, ()))
        if blank == []:
            continue
        for cid in cards:
            if cid not in card_ids:
                memory.raw.forget_in_context(cid, sid, blank)
    for cid in card_ids:
        memory.raw.remove_context(cid)
    return purged


def _drop_source(graph: "CardGraph", cards: list[Card], session: str) -> None:
    """Cards that other sessions said too stay, citing only those."""
    for card in cards:
        sources = [s for s in card.sources if s.session_id != session]
        graph.update_provenance([card.model_copy(update={"sources": sources})])


def _retitle(memory: "Memory", graph: "CardGraph", session_ids: list[str]) -> None:
    """A session's title and one-line summary in L2 again from its file: the title may have
    been a purged turn's (raw.blank_turns changes it there), the summary a forgotten card's."""
    for sid in session_ids:
        row = graph.get_session(sid)
        session = memory.raw.load(sid)
        if row is None or session is None:
            continue
        title = clean_text(memory, session.title)
        if row.get("title") != title or row.get("summary") != title:
            graph.upsert_session({**row, "title": title, "summary": title})
