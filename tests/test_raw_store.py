"""L3 raw store: idempotent merges, atomic owner-only files, the index and its fallback."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from openclaw_alaya.errors import AlayaError, InputError
from openclaw_alaya.models import Session, Turn
from openclaw_alaya.store.raw import RawStore, month_of, render_markdown


def make_session(n: int, *, sid: str = "sess-1", started: str | None = "2026-03-12T14:00:00Z") -> Session:
    turns = [
        Turn(id=f"t{i:04d}", role="user" if i % 2 else "assistant", content=f"message {i}")
        for i in range(1, n + 1)
    ]
    return Session(id=sid, agent_id="main", started_at=started, turns=turns)


def ingest(store: RawStore, session: Session) -> list[Turn]:
    merged, new = store.merge(session)
    store.write(merged)
    return new


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_first_write_layout_and_permissions(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    new = ingest(store, make_session(3))
    assert len(new) == 3
    path = tmp_path / "raw" / "sessions" / "2026-03" / "sess-1.json"
    assert store.find("sess-1") == path
    assert path.with_suffix(".md").is_file()
    for f in (path, path.with_suffix(".md"), store.index_path):
        assert mode(f) == 0o600
    for d in (tmp_path / "raw", tmp_path / "raw" / "sessions", path.parent):
        assert mode(d) == 0o700
    assert json.loads(path.read_text())["turns"][0]["id"] == "t0001"
    assert store.load("sess-1") == make_session(3)


def test_merge_is_idempotent_and_adds_only_the_extra_turns(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    ingest(store, make_session(3))
    assert ingest(store, make_session(3)) == []
    new = ingest(store, make_session(5))
    assert [t.id for t in new] == ["t0004", "t0005"]
    assert [t.id for t in store.load("sess-1").turns] == ["t0001", "t0002", "t0003", "t0004", "t0005"]
    assert ingest(store, make_session(5)) == []
    assert ingest(store, make_session(2)) == []  # a shorter (older) copy adds nothing


def test_reused_id_with_other_content_is_kept_as_revision(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    ingest(store, make_session(2))
    edited = make_session(2)
    edited.turns[1] = edited.turns[1].model_copy(update={"content": "edited reply"})
    new = ingest(store, edited)
    assert [(t.id, t.content) for t in new] == [("t0002+2", "edited reply")]
    assert ingest(store, edited) == []  # the revision is recognised on the next re-ingest
    edited.turns[1] = edited.turns[1].model_copy(update={"content": "edited again"})
    assert [t.id for t in ingest(store, edited)] == ["t0002+3"]


def test_same_message_under_another_id_is_recognised_by_timestamp(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    stamp = "2026-03-12T14:00:01.000Z"
    from_file = Session(id="s1", turns=[Turn(id="a1b2c3d4", role="user", content="hi", timestamp=stamp)])
    from_hook = Session(id="s1", turns=[Turn(id="t0001", role="user", content="hi", timestamp=stamp)])
    ingest(store, from_file)
    assert ingest(store, from_hook) == []


def test_merge_keeps_stored_metadata_and_fills_gaps(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    ingest(store, make_session(1, started=None))
    later = make_session(2, started="2025-12-01T00:00:00Z").model_copy(update={"title": "T"})
    merged, _ = store.merge(later)
    assert merged.started_at == "2025-12-01T00:00:00Z" and merged.title == "T"
    first_path = store.find("sess-1")
    assert store.write(merged) == first_path  # a session never moves to another month


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    for n in range(1, 4):
        ingest(store, make_session(n))
    store.write_context("card-1", "sess-1", make_session(2).turns)
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


def test_markdown_rendering_shows_turn_ids(tmp_path: Path) -> None:
    session = Session(
        id="s1",
        title="Pool\nexhaustion",
        started_at="2026-03-12",
        turns=[
            Turn(id="a1b2c3d4", role="user", name="Dana", content="p99 is 9 s", timestamp="2026-03-12T14:12:00Z"),
            Turn(id="b2c3d4e5", role="assistant", content="Check pg_stat_activity"),
        ],
    )
    md = render_markdown(session)
    assert md.startswith("# Pool exhaustion\n")
    assert "### [a1b2c3d4] Dana · 2026-03-12T14:12:00Z" in md
    assert "### [b2c3d4e5] assistant\n" in md
    RawStore(tmp_path).write(session)
    assert "[b2c3d4e5]" in (tmp_path / "raw/sessions/2026-03/s1.md").read_text()
    assert render_markdown(Session(id="s2", turns=[])).startswith("# s2\n")


def test_month_fallbacks() -> None:
    assert month_of(make_session(1, started="2026-01-31T23:00:00Z")) == "2026-01"
    no_start = Session(id="x", turns=[Turn(id="a", content="c", timestamp="2025-07-04T00:00:00Z")])
    assert month_of(no_start) == "2025-07"
    assert len(month_of(Session(id="x", started_at="yesterday"))) == 7


def test_index_fallback_when_missing_or_stale(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    path = store.write(make_session(2))
    store.index_path.unlink()
    assert store.find("sess-1") == path  # found by scanning, index repaired
    assert json.loads(store.index_path.read_text()) == {"sess-1": "2026-03/sess-1.json"}
    store.index_path.write_text(json.dumps({"sess-1": "1999-01/sess-1.json"}))
    assert store.find("sess-1") == path
    store.index_path.write_text("{not json")
    assert store.find("sess-1") == path
    store.index_path.write_text(json.dumps({"sess-1": "../../../etc/passwd"}))
    assert store.find("sess-1") == path
    path.unlink()
    assert store.find("sess-1") is None
    assert "sess-1" not in json.loads(store.index_path.read_text())


def test_find_and_load_unknown_and_hostile_ids(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    assert store.find("nothing") is None and store.load("nothing") is None
    with pytest.raises(InputError):
        store.find("../../etc/passwd")
    with pytest.raises(InputError):
        store.load_context("../x")


def test_iter_sessions_and_ids(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    assert list(store.iter_sessions()) == []
    store.write(make_session(1, sid="b", started="2026-03-01"))
    store.write(make_session(1, sid="a", started="2026-01-01"))
    assert [s.id for s in store.iter_sessions()] == ["a", "b"]
    assert store.session_ids() == ["a", "b"]


def test_damaged_session_file_is_a_clear_error(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    path = store.write(make_session(1))
    path.write_text("{oops")
    with pytest.raises(AlayaError, match="damaged"):
        store.load("sess-1")


def test_contexts_per_session(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    assert store.load_context("card-x") is None
    turns = make_session(3).turns
    path = store.write_context("card-x", "sess-1", turns[:2])
    assert path == tmp_path / "raw" / "contexts" / "card-x.json"
    assert mode(path) == 0o600
    store.write_context("card-x", "sess-2", turns[2:])
    store.write_context("card-x", "sess-1", turns[:1])
    ctx = store.load_context("card-x")
    assert ctx == {"sess-1": turns[:1], "sess-2": turns[2:]}
