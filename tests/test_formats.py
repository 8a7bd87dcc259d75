"""Input formats: detection, extraction rules, id stability and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_alaya.errors import InputError
from openclaw_alaya.ingest.formats import (
    derive_session_id,
    extract_text,
    parse_messages,
    parse_session,
)

DEMO = Path(__file__).resolve().parent.parent / "openclaw_alaya" / "demo"


def jsonl(*objs: object) -> bytes:
    return ("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n").encode()


HEADER = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-04-10T09:00:00.000Z", "cwd": "/w"}


def msg(eid: str, role: str, content: object, **extra: object) -> dict:
    return {
        "type": "message",
        "id": eid,
        "parentId": None,
        "timestamp": "2026-04-10T09:00:01.000Z",
        "message": {"role": role, "content": content, **extra},
    }


def parse_file(tmp_path: Path, data: bytes, name: str = "in.txt", **kw: object):
    path = tmp_path / name
    path.write_bytes(data)
    return parse_session(path.read_bytes(), source_name=name, **kw)


def assert_one_line_error(data: bytes, *fragments: str, **kw: object) -> str:
    with pytest.raises(InputError) as info:
        parse_session(data, source_name="f.json", **kw)
    text = str(info.value)
    assert "\n" not in text and "\r" not in text
    assert text.startswith("f.json")
    for fragment in fragments:
        assert fragment in text, text
    return text


# ----------------------------------------------------------------- OpenClaw JSONL


def test_jsonl_keeps_user_and_assistant_text_only(tmp_path: Path) -> None:
    data = jsonl(
        HEADER,
        msg("a1b2c3d4", "user", [{"type": "text", "text": "Remember I prefer metric units"}]),
        msg(
            "b2c3d4e5",
            "assistant",
            [
                {"type": "thinking", "thinking": "secret plan"},
                {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "m.md"}},
            ],
        ),
        msg("c3d4e5f6", "toolResult", [{"type": "text", "text": "ok"}], toolName="write"),
        msg("d4e5f6a7", "assistant", [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Noted."}]),
        {"type": "compaction", "id": "e5f6a7b8", "summary": "User prefers metric", "firstKeptEntryId": "x"},
        {"type": "custom", "id": "f6a7b8c9", "data": {"text": "nope"}},
        {"type": "model_change", "id": "a7b8c9d0", "provider": "x"},
    )
    session = parse_file(tmp_path, data, "t.jsonl")
    assert session.id == "sess-1"
    assert session.source_format == "openclaw-jsonl"
    assert session.started_at == "2026-04-10T09:00:00.000Z"
    assert [(t.id, t.role, t.content) for t in session.turns] == [
        ("a1b2c3d4", "user", "Remember I prefer metric units"),
        ("d4e5f6a7", "assistant", "Noted."),
    ]
    assert "secret" not in session.model_dump_json()


def test_jsonl_include_tools_renders_calls_and_results() -> None:
    data = jsonl(
        HEADER,
        msg("a1b2c3d4", "user", "do it"),
        msg("b2c3d4e5", "assistant", [{"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "m.md"}}]),
        msg("c3d4e5f6", "toolResult", [{"type": "text", "text": "ok"}], toolName="write"),
    )
    turns = parse_session(data, include_tools=True).turns
    assert turns[1].content == '[tool call write: {"path": "m.md"}]'
    assert turns[2].role == "tool"
    assert "ok" in turns[2].content


def test_jsonl_tolerates_old_lines_missing_fields_and_garbage(capsys) -> None:
    data = jsonl(
        "this is not json",
        {"message": {"role": "user", "content": "old style line"}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "reply"}]}},
        {"type": "message", "id": "../../etc", "message": {"role": "user", "content": "bad entry id"}},
        "{broken json",
        {"type": "message", "id": "abcd1234", "message": {"role": "assistant"}},  # no content
    )
    session = parse_session(data, source_name="old.jsonl")
    assert [t.id for t in session.turns] == ["t0001", "t0002", "t0003"]
    assert session.turns[2].content == "bad entry id"
    assert session.id.startswith("s-")
    assert session.started_at is None
    # the two lines that are not JSON are said, not dropped silently (issue 35)
    assert capsys.readouterr().err == "alaya: warning: old.jsonl: skipped 2 lines that are not JSON (line 1, 5)\n"


def test_jsonl_skips_slash_commands_and_inter_session_messages() -> None:
    data = jsonl(
        HEADER,
        msg("00000001", "user", "/think high"),
        msg("00000002", "user", "/new"),
        msg("00000003", "user", "/etc/hosts has a stale entry"),
        msg("00000004", "user", "forwarded", provenance={"kind": "inter_session", "sourceSessionKey": "k"}),
        msg("00000005", "assistant", "forwarded too", provenance={"kind": "inter_session"}),
        msg("00000006", "user", "from a channel", provenance={"kind": "external_user"}),
    )
    contents = [t.content for t in parse_session(data).turns]
    assert contents == ["/etc/hosts has a stale entry", "from a channel"]


def test_jsonl_message_timestamp_ms_becomes_iso_utc() -> None:
    line = {"message": {"role": "user", "content": "hi", "timestamp": 1775811601000}}
    assert parse_session(jsonl(line)).turns[0].timestamp == "2026-04-10T09:00:01.000Z"


def test_jsonl_header_only_has_no_messages() -> None:
    assert_one_line_error(jsonl(HEADER, {"type": "compaction", "id": "x"}), "no messages with text")


def test_jsonl_hostile_header_id_rejected() -> None:
    for bad in ("../../etc", "x" * 500, "a\x00b"):
        header = {**HEADER, "id": bad}
        text = assert_one_line_error(jsonl(header, msg("a1b2c3d4", "user", "hi")), "invalid session id")
        assert len(text) < 300


def test_nul_bytes_are_stripped_from_text() -> None:
    data = jsonl(msg("a1b2c3d4", "user", "he\u0000llo"))
    assert parse_session(data).turns[0].content == "hello"


# ----------------------------------------------------------------- session JSON


def test_session_json_with_names_ids_and_blocks(tmp_path: Path) -> None:
    obj = {
        "session_id": "design-1",
        "agent_id": "main",
        "date": "2026-02-20",
        "title": "Storage\nchoice",
        "turns": [
            {"id": "q1", "role": "user", "name": "Mei", "content": "Neo4j?"},
            {"role": "assistant", "name": "claw", "content": [{"type": "text", "text": "Kuzu."}], "timestamp": 1771581600},
            {"id": 7, "role": "Human", "content": "ok"},
        ],
    }
    session = parse_file(tmp_path, json.dumps(obj).encode(), "s.json")
    assert session.id == "design-1" and session.agent_id == "main"
    assert session.started_at == "2026-02-20"
    assert session.title == "Storage choice"
    assert [(t.id, t.role, t.name) for t in session.turns] == [
        ("q1", "user", "Mei"),
        ("t0002", "assistant", "claw"),
        ("7", "user", None),
    ]
    assert session.turns[1].timestamp == "2026-02-20T10:00:00.000Z"


def test_session_json_messages_key_and_agent_override() -> None:
    obj = {"id": "x1", "agent_id": "main", "messages": [{"role": "user", "content": "hello"}]}
    session = parse_session(json.dumps(obj).encode(), agent_id="ops")
    assert session.agent_id == "ops"
    assert session.id == "x1"
    assert parse_session(json.dumps(obj).encode(), session_id="forced").id == "forced"


@pytest.mark.parametrize(
    "obj, fragment",
    [
        ({"session_id": "a", "turns": "nope"}, "turns must be a list"),
        ({"session_id": "a", "turns": [{"role": "user", "content": 42}]}, "turns[0]: content"),
        ({"session_id": "a", "turns": [5]}, "turns[0]"),
        ({"session_id": "a", "turns": [{"content": "x"}]}, "role is missing"),
        ({"session_id": "a", "turns": [{"role": "user", "content": "x", "timestamp": {}}]}, "timestamp"),
        ({"session_id": "a", "title": 3, "turns": [{"role": "user", "content": "x"}]}, "title"),
        ({"session_id": ["a"], "turns": [{"role": "user", "content": "x"}]}, "session_id"),
        ({"session_id": "../../etc", "turns": [{"role": "user", "content": "x"}]}, "invalid session id"),
        ({"session_id": "a", "turns": [{"id": "../../etc", "role": "user", "content": "x"}]}, "invalid turn id"),
        ({"session_id": "a", "turns": [{"id": "x" * 500, "role": "user", "content": "x"}]}, "invalid turn id"),
        ({"session_id": "a", "turns": [{"id": "a\u0000b", "role": "user", "content": "x"}]}, "invalid turn id"),
        ({"session_id": "a", "agent_id": "../x", "turns": [{"role": "user", "content": "x"}]}, "invalid agent id"),
        ({"session_id": "a", "turns": [{"role": "system", "content": "only a system prompt"}]}, "no messages with text"),
        (
            {"session_id": "a", "turns": [{"id": "d", "role": "user", "content": "x"}, {"id": "d", "role": "user", "content": "y"}]},
            "duplicate turn id",
        ),
    ],
)
def test_session_json_bad_fields_are_one_line_errors(obj: dict, fragment: str) -> None:
    text = assert_one_line_error(json.dumps(obj).encode(), fragment)
    assert len(text) < 300


# ----------------------------------------------------------------- plain list


def test_message_list_gets_positional_ids_and_derived_session_id(tmp_path: Path) -> None:
    short = [
        {"role": "user", "content": "I prefer pnpm"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted"}], "name": "claw"},
    ]
    longer = short + [{"role": "system", "content": "ignored"}, {"role": "user", "content": "and 2 spaces"}]
    a = parse_file(tmp_path, json.dumps(short).encode(), "a.json")
    b = parse_file(tmp_path, json.dumps(longer).encode(), "b.json")
    assert a.source_format == "message-list"
    assert a.id == b.id == derive_session_id(a.turns)
    assert a.id.startswith("s-") and len(a.id) == 18
    assert [t.id for t in b.turns] == ["t0001", "t0002", "t0003"]
    assert [t.model_dump() for t in b.turns[:2]] == [t.model_dump() for t in a.turns]
    assert a.agent_id == "shared"


def test_parse_messages_for_the_hook() -> None:
    messages = [
        {"role": "user", "content": "hello", "timestamp": 1775811601000},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "hi"}]},
        {"role": "toolResult", "content": [{"type": "text", "text": "out"}]},
        {"role": "compactionSummary", "summary": "..."},
        "garbage",
        {"role": "assistant", "content": 12},
    ]
    turns = parse_messages(messages, strict=False)
    assert [(t.id, t.content) for t in turns] == [("t0001", "hello"), ("t0002", "hi")]
    assert turns[0].timestamp == "2026-04-10T09:00:01.000Z"
    with pytest.raises(InputError):
        parse_messages(messages, strict=True)


def test_extract_text_shared_block_rules() -> None:
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "...", "mimeType": "image/png"},
        {"type": "tool_use", "name": "grep", "input": {"q": "x"}},
        "b",
    ]
    assert extract_text(blocks) == "a\n\nb"
    assert extract_text(blocks, include_tools=True) == 'a\n\n[tool call grep: {"q": "x"}]\n\nb'


# ----------------------------------------------------------------- encodings and hostile input


def test_bom_and_utf16_are_accepted() -> None:
    obj = [{"role": "user", "content": "你好，世界"}]
    text = json.dumps(obj, ensure_ascii=False)
    for data in (b"\xef\xbb\xbf" + text.encode("utf-8"), text.encode("utf-16")):
        assert parse_session(data).turns[0].content == "你好，世界"


def test_invalid_utf8_is_replaced_with_a_warning_naming_the_byte(capsys) -> None:
    session = parse_session(b'[{"role": "user", "content": "ab\xff"}]', source_name="f.json")
    assert session.turns[0].content == "ab\ufffd"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("alaya: warning: f.json: not valid UTF-8 at byte 32"), err


def test_transcript_cut_inside_a_character_keeps_every_good_line(capsys) -> None:
    good = jsonl(HEADER, msg("e1", "user", "We picked postgres for billing."), msg("e2", "assistant", "Noted: postgres."))
    cut = json.dumps(msg("e3", "user", "caf\u00e9 au lait"), ensure_ascii=False).encode()
    data = good + cut[: cut.index("\u00e9".encode()) + 1]  # ends inside the two bytes of é
    session = parse_session(data, source_name="t.jsonl")
    assert [t.content for t in session.turns] == ["We picked postgres for billing.", "Noted: postgres."]
    first, second = capsys.readouterr().err.splitlines()
    assert "t.jsonl: not valid UTF-8 at byte" in first and "U+FFFD" in first, first
    assert second == "alaya: warning: t.jsonl: skipped 1 line that is not JSON (line 4)"  # the torn last line


# JSON text as Node writes it when it cuts a string mid-emoji: a lone surrogate escape
ESCAPED = [r"ship v2 \ud83d", r"pair \ud83d\ude00", r"low \ude00 first"]


@pytest.mark.parametrize("shape", ["list", "session-json", "jsonl"])
def test_lone_surrogates_are_replaced_and_escaped_pairs_joined(shape) -> None:
    messages = ",".join(f'{{"role": "user", "content": "{c}"}}' for c in ESCAPED)
    data = {
        "list": f"[{messages}]",
        "session-json": f'{{"session_id": "s1", "turns": [{messages}]}}',
        "jsonl": '{"type": "session", "id": "s1"}\n' + "\n".join(
            f'{{"type": "message", "message": {{"role": "user", "content": "{c}"}}}}' for c in ESCAPED),
    }[shape].encode()
    turns = parse_session(data).turns
    assert [t.content for t in turns] == ["ship v2 \ufffd", "pair \U0001f600", "low \ufffd first"]


def test_a_turn_longer_than_the_cap_is_cut_with_a_marker() -> None:
    turns = parse_messages([{"role": "user", "content": "x" * 5000}], max_turn_chars=1000)
    content = turns[0].content
    assert content.startswith("x" * 1000) and "x" * 1001 not in content
    assert content.endswith("[4,000 more characters cut: a turn is kept up to 1,000 characters]")


def test_malformed_json_reports_position() -> None:
    assert_one_line_error(b'{"turns": [1,]}', "not valid JSON (", "line 1 column")
    assert_one_line_error(b'{\n "turns": [\n  {"role": "user", "content": "x"},\n ]\n}', "not valid JSON (", "line 4")


def test_no_json_at_all() -> None:
    assert_one_line_error(b"hello\nworld\n", "not valid JSON")
    assert_one_line_error(b"\x00\x01\x02", "NUL bytes")


def test_unknown_format() -> None:
    for data in (b'{"foo": 1}', b'"just a string"', b"42", b'{"a": 1}\n{"b": 2}\n'):
        assert_one_line_error(data, "unknown format: expected an OpenClaw transcript")


def test_empty_input() -> None:
    assert_one_line_error(b"", "empty")
    assert_one_line_error(b"  \n\t ", "empty")
    assert_one_line_error(b"[]", "no messages with text")


def test_oversized_input() -> None:
    assert_one_line_error(b"[" + b" " * 2000 + b"]", "larger than", max_bytes=1000)
    assert_one_line_error(b"x" * (50 * 1024 * 1024 + 1), "input is larger than 50 MB")


def test_deeply_nested_json_is_refused() -> None:
    for depth in (100, 100_000):
        data = b"[" * depth + b"]" * depth
        assert_one_line_error(data, "nested too deeply")
    deep_line = b'{"type": "message", "message": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert_one_line_error(jsonl(HEADER).rstrip(b"\n") + b"\n" + deep_line, "nested too deeply")


def test_demo_sessions_parse() -> None:
    expected = {
        "ops-incident.jsonl": ("openclaw-jsonl", "ops-2026-03-12-billing-pool"),
        "decision-graph-store.json": ("session-json", "design-2026-02-20-graph-store"),
        "zh-team-prefs.json": ("session-json", "zh-2026-03-02-team-prefs"),
        "prefs-pnpm.json": ("message-list", None),
    }
    for name, (fmt, sid) in expected.items():
        session = parse_session((DEMO / name).read_bytes(), source_name=name)
        assert session.source_format == fmt
        assert 8 <= len(session.turns) <= 20
        if sid:
            assert session.id == sid
    ops = parse_session((DEMO / "ops-incident.jsonl").read_bytes())
    text = "\n".join(t.content for t in ops.turns)
    assert "idle in transaction" in text and "Make sure to" in text
    assert "pg_stat_activity group by" not in text  # the tool call is skipped
    assert "thinking" not in ops.model_dump_json()


def test_jsonl_from_other_agents_with_message_payloads() -> None:
    """Claude Code style lines: type user/assistant, id in uuid, tool results in user blocks."""
    data = jsonl(
        {"type": "summary", "summary": "x"},
        {"type": "user", "uuid": "5f0c1b2a-1111-4222-8333-944445555666", "timestamp": "2026-01-02T10:00:00Z",
         "message": {"role": "user", "content": "why is CI red?"}},
        {"type": "user", "uuid": "6f0c1b2a-1111-4222-8333-944445555666",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "log"}]}},
        {"type": "assistant", "uuid": "7f0c1b2a-1111-4222-8333-944445555666",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "A flaky test."}]}},
    )
    session = parse_session(data)
    assert [t.content for t in session.turns] == ["why is CI red?", "A flaky test."]
    assert session.turns[0].id == "5f0c1b2a-1111-4222-8333-944445555666"
    assert session.started_at == "2026-01-02T10:00:00Z"
