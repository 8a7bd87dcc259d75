"""`alaya verify`: compare the layers (docs/architecture.md, "Data layout": L3 is the truth).

Problems found, each as `{"kind", "card"?, "session"?, "detail"}`:

- `missing_l1_row`: a card (of any tier, COLD too since issue 31) has no row in L1 (recall
  cannot find it by words or meaning); `stale_l1_row`: an L1 row for a card that is not in L2;
- `missing_session`: a card cites a session (its sources or an EXTRACTED_FROM edge) whose file
  is not in `raw/sessions` (L3);
- `orphan_edge`: an edge to or from a card that does not exist (a node with no content, left by
  a partial write or a hand edit);
- `no_provenance`: a card with no sources and no EXTRACTED_FROM edge;
- `unsafe_permissions`: a directory or file inside the data directory that another user owns
  or could write (store/trust.py). Then the layers are not compared (that would read what
  another user may have written as the truth), and rebuild refuses too, until it is fixed;
- what `recovery.check` finds (the disagreements crash recovery repairs): `session_not_in_l2`
  (a session file in L3 with no Session node), `stale_session` (a Session node whose turn
  counts disagree with its file), `interrupted_write` (a write that did not finish).

A read: the shared lock only. `alaya rebuild` repairs everything but missing L3 files; each
kind also names the lighter command that mends it (`REMEDIES`, `describe`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ingest import recovery

if TYPE_CHECKING:
    from ..memory import Memory


# What mends each kind, cheapest first (rebuild mends them all but a missing L3 file).
REMEDIES = {
    "missing_l1_row": "`alaya reembed` re-indexes every card (or `alaya rebuild`)",
    "stale_l1_row": "`alaya reembed` re-indexes every card (or `alaya rebuild`)",
    "interrupted_write": "`alaya init` finishes it (any write does)",
    "session_not_in_l2": "`alaya rebuild` re-derives the graph from raw/",
    "stale_session": "`alaya rebuild` re-derives the graph from raw/",
    "orphan_edge": "`alaya rebuild` re-derives the graph from raw/",
    "no_provenance": "`alaya rebuild` re-derives the graph from raw/",
    "missing_session": "restore the session file from a backup (`alaya backup`), then `alaya rebuild`",
}


def describe(problem: dict[str, Any]) -> str:
    """One line: the kind, the card or session it is about, what is wrong."""
    about = " ".join(str(problem[key]) for key in ("card", "session") if problem.get(key))
    return f"{problem['kind']}: {about + ': ' if about else ''}{problem['detail']}"


def verify(memory: "Memory") -> dict[str, Any]:
    memory.dirs.require()
    unsafe = [{"kind": "unsafe_permissions", "detail": reason} for reason in memory.dirs.private_problems()]
    if unsafe:
        return {"ok": False, "cards": 0, "indexed": 0, "sessions": 0, "edges": 0, "problems": unsafe,
                "counts": {"unsafe_permissions": len(unsafe)}, "note": "the layers were not compared: fix the permissions first"}
    with memory.reading("verify") as graph:
        cards = graph.card_provenance()
        extracted = graph.extraction_edges()
        edges = graph.card_edges()
        indexed = set(memory.index.card_ids())
        sessions = set(memory.raw.session_ids())
        problems: list[dict[str, Any]] = recovery.check(memory)
    real = {cid for cid, _tier, title, created, _cited in cards if title and created}
    cited: dict[str, set[str]] = {}
    for cid, session in extracted:
        cited.setdefault(cid, set()).add(session)
    for cid, tier, title, created, cited_by_sources in cards:
        if cid not in real:
            continue
        refs = set(cited_by_sources or ())
        if cited_by_sources is None:
            problems.append({"kind": "no_provenance", "card": cid, "detail": "sources are unreadable"})
        if cid not in indexed:  # COLD included (issue 31: tiers never cost findability)
            problems.append({"kind": "missing_l1_row", "card": cid, "detail": f"{tier or 'WARM'} card has no L1 row"})
        if not refs and not cited.get(cid):
            problems.append({"kind": "no_provenance", "card": cid, "detail": "no sources and no EXTRACTED_FROM edge"})
        for session in sorted((refs | cited.get(cid, set())) - sessions):
            problems.append({"kind": "missing_session", "card": cid, "session": session,
                             "detail": f"session {session} is not in raw/sessions"})
    for cid in sorted(indexed - real):
        problems.append({"kind": "stale_l1_row", "card": cid, "detail": "L1 row for a card that is not in L2"})
    for src, rel, dst, _weight, _created in edges:
        for end in (src, dst):
            if end not in real:
                problems.append({"kind": "orphan_edge", "card": end, "detail": f"{src} -[{rel}]-> {dst}: no card {end}"})
    counts: dict[str, int] = {}
    for p in problems:
        counts[p["kind"]] = counts.get(p["kind"], 0) + 1
    return {"ok": not problems, "cards": len(real), "indexed": len(indexed), "sessions": len(sessions),
            "edges": len(edges), "problems": problems, "counts": counts}
