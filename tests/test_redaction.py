"""Secret redaction (issue 6): a corpus of secret shapes goes in through every ingest path and
none of it comes out in L1, L2, the injected text or (by default) L3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from secret_corpus import CORPUS, HARMLESS_SHAPES, leaks_in, secret_pieces

from openclaw_alaya import Alaya
from openclaw_alaya.bridge.inject import Item, Section, StartRequest, build
from openclaw_alaya.hookspecs import hookimpl
from openclaw_alaya.plugins import get_plugin_manager
from openclaw_alaya.redact import Redactor
from openclaw_alaya.store.embedded.graph import GraphStore

PROMPT = "deploy key token password secret api key bearer stripe slack github aws azure openai"


def alaya(data_dir: Path, *args: str, stdin: str | bytes = b"") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data_dir), *args],
                          input=data, capture_output=True, env=env, timeout=180)


def turns_of(prefix: str) -> list[dict]:
    out = []
    for i, (_kind, _secret, sentence) in enumerate(CORPUS):
        out.append({"role": "user", "content": f"{prefix} note {i}: {sentence}"})
        out.append({"role": "assistant", "content": f"Noted the credential for item {i}; we decided to rotate it weekly."})
    return out


def file_bytes(root: Path, *, include_raw: bool) -> dict[str, bytes]:
    files = {}
    for path in root.rglob("*"):
        if path.is_file() and (include_raw or "raw" not in path.relative_to(root).parts):
            files[str(path.relative_to(root))] = path.read_bytes()
    return files


def leaks(texts: dict[str, bytes | str]) -> list[tuple[str, str]]:
    return leaks_in(texts)


def derived_texts(mem: Alaya) -> dict[str, str]:
    """Every string of L2 (cards, sessions, entities) and L1 (card rows, relation rows)."""
    with GraphStore(mem.dirs.graph, read_only=True) as graph:
        cards = graph.query("MATCH (c:Card) RETURN c.title, c.content, c.tags, c.entities, c.sources")
        sessions = graph.query("MATCH (s:Session) RETURN s.title, s.path")
        entities = graph.query("MATCH (e:Entity) RETURN e.name")
    rows = mem.index._table("cards").search().select(["text"]).limit(100_000).to_list()
    return {"L2 cards": json.dumps(cards), "L2 sessions": json.dumps(sessions), "L2 entities": json.dumps(entities),
            "L1 cards": json.dumps([r["text"] for r in rows])}


def test_corpus_is_big_and_fully_redacted_by_the_redactor():
    assert len(CORPUS) >= 70
    redactor = Redactor()
    for kind, secret, sentence in CORPUS:
        text, counts = redactor.redact(sentence)
        assert counts, kind
        assert not [p for p in secret_pieces(secret) if p in text], (kind, text)


def test_plain_text_is_left_alone():
    redactor = Redactor()
    for text in ["The password is required for login.", "token: none", "I like the secret sauce at Luigi's.",
                 "api_key = ${OPENAI_API_KEY}", "set password=<your-password> first", "sk-learn is a library",
                 "The skeleton key opens https://example.com/a:b", "Our JWT library is eyJ-free.",
                 "我们用 pgbouncer 管连接池", "commit 3f9a2c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c fixed it"] + HARMLESS + HARMLESS_SHAPES:
        assert redactor.redact(text) == (text, {}), text


# Text near the new shapes that is no secret: flags without a value, prose about passwords,
# numbers that are no card, word runs that are no seed phrase, ids and digests.
HARMLESS = [
    "mysql -u root -p shop", "mysql -h db -P 3306 -u app -p", "docker login -u ci --password-stdin ghcr.io",
    "curl -u $USER:$TOKEN https://api.acme.dev", "curl -u \"$CI_USER:$CI_PASS\" https://x.dev",
    "ssh -p 2222 deploy@host", "sshpass -f ~/.pw ssh host", "psql -h db -U app -p 5432 app",
    "tar -czf x.tgz -p dir", "openssl req -new -passout env:PASS -out c.csr", "redis-cli -a $REDIS_PASS ping",
    "mysql --password $MYSQL_ROOT_PASSWORD", "compass: north", "bypass: the cache",
    "restic --password-file /run/secrets/pw backup", "pg_dump --no-password app", "mysql -p\"$PW\" app",
    "The password must be at least 12 characters.", "Reset your password at https://acme.dev/reset.",
    "密码错误，请重试", "忘记密码了怎么办", "密码 必须 包含 数字", "パスワードを忘れました", "パスワードは必須です",
    "비밀번호를 잊어버렸어요", "비밀번호는 8자 이상이어야 합니다", "账号和密码都在 1Password 里",
    "Released v1.2.3 on 2024-05-01; v10.11.12 next.", "ISBN 978-3-16-148410-0", "call +1 415 555 2671",
    "order 20240501123045 shipped", "timestamp 1714567890123", "card c-123e4567-e89b-12d3-a456-426614174000",
    "uuid 550e8400-e29b-41d4-a716-446655440000", "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "invoice 4111 1111 1111 1112 is not a card", "ports 8080 8081 8082 8083 8084",
    "I want to build a simple app that can help people track their daily habits and goals",
    "We should review the budget before the meeting and then decide which project to fund first.",
    "abandon ability able about above absent absorb abstract absurd abuse access",
    "machine learning models need a password manager? no, login screens do",
    "postgres://app@db.internal:5432/app", "mailto:bob@example.com and alice@example.org",
    "Twilio sends the SMS; commit 3f9a2c1 fixed the retry", "build id 3f9a2c1d4e5b6a7c8d9e0f1a2b3c4d5e",
]


@pytest.fixture(scope="module")
def redacted_dir(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("redact") / "data"
    assert alaya(data, "init").returncode == 0
    # 1. Python API
    Alaya(data).ingest(json.dumps({"session_id": "api-1", "title": CORPUS[0][2], "turns": turns_of("api")}).encode())
    # 2. alaya ingest FILE
    src = data.parent / "s.json"
    src.write_text(json.dumps({"session_id": "file-1", "turns": turns_of("file")}))
    assert alaya(data, "ingest", str(src)).returncode == 0
    src.unlink()
    # 3. alaya ingest --stdin (a message list)
    assert alaya(data, "ingest", "--stdin", "--session-id", "stdin-1", stdin=json.dumps(turns_of("stdin"))).returncode == 0
    # 4. alaya hook session-end, sent twice (OpenClaw re-sends the whole history)
    event = {"agentId": "main", "sessionId": "hook-1", "reason": "agent_end", "messages": turns_of("hook")}
    for _ in range(2):
        proc = alaya(data, "hook", "session-end", stdin=json.dumps(event))
        assert proc.returncode == 0, proc.stderr
    assert alaya(data, "distill").returncode == 0
    assert alaya(data, "export").returncode == 0  # into <data>/export, checked with the rest
    return data


def test_no_secret_reaches_any_layer(redacted_dir):
    mem = Alaya(redacted_dir)
    derived = derived_texts(mem)
    assert "[REDACTED:" in derived["L2 cards"] and "[REDACTED:" in derived["L1 cards"]
    assert leaks(derived) == []
    assert leaks(file_bytes(redacted_dir, include_raw=True)) == []  # L3, graph.kuzu, lancedb/, state/


def test_no_secret_in_recall_output_export_or_summary(redacted_dir):
    proc = alaya(redacted_dir, "recall", PROMPT, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "REDACTED" in proc.stdout.decode()
    export = file_bytes(redacted_dir / "export", include_raw=True)
    summaries = file_bytes(redacted_dir / "state", include_raw=True)
    assert export and any(b"REDACTED" in blob for blob in export.values())
    assert leaks({"recall": proc.stdout, **export, **summaries}) == []


def test_no_secret_in_the_injected_text(redacted_dir):
    proc = alaya(redacted_dir, "hook", "session-start", stdin=json.dumps({"agentId": "main", "prompt": PROMPT}))
    assert proc.returncode == 0, proc.stderr
    text = json.loads(proc.stdout)["prependContext"]
    assert "REDACTED" in text
    assert leaks({"injected": text}) == []


def test_hook_resend_stores_nothing_new_and_status_counts(redacted_dir):
    mem = Alaya(redacted_dir)
    assert len(mem.raw.load("hook-1").turns) == 2 * len(CORPUS)
    status = json.loads(alaya(redacted_dir, "status", "--json").stdout)
    assert status["redaction"]["enabled"] is True
    assert status["redaction"]["redacted"] >= 4 * len(CORPUS)
    assert status["redaction"]["by_kind"]["private-key"] >= 8


def test_redact_raw_off_keeps_l3_but_nothing_else(tmp_path):
    data = tmp_path / "data"
    mem = Alaya(data)
    mem.init()
    config = json.loads(mem.dirs.config.read_text())
    config.setdefault("redaction", {})["redact_raw"] = False
    mem.dirs.config.write_text(json.dumps(config))
    mem = Alaya(data)
    mem.ingest(json.dumps({"session_id": "raw-1", "title": CORPUS[1][2], "turns": turns_of("raw")}).encode())
    mem.distill()
    raw = file_bytes(data / "raw" / "sessions", include_raw=True)
    assert len(leaks(raw)) >= len(CORPUS) - 2  # the original is kept in L3
    assert leaks(derived_texts(mem)) == []
    assert leaks({k: v for k, v in file_bytes(data, include_raw=False).items()}) == []
    proc = alaya(data, "hook", "session-start", stdin=json.dumps({"prompt": PROMPT}))
    assert leaks({"injected": json.loads(proc.stdout).get("prependContext", "")}) == []


def test_injection_redacts_memories_stored_before_redaction(tmp_path):
    data = tmp_path / "data"
    mem = Alaya(data)
    mem.init()
    config = json.loads(mem.dirs.config.read_text())
    config.setdefault("redaction", {})["enabled"] = False
    mem.dirs.config.write_text(json.dumps(config))
    Alaya(data).ingest(json.dumps({"session_id": "old-1", "turns": turns_of("old")}).encode())
    Alaya(data).distill()
    assert leaks(derived_texts(Alaya(data)))  # stored in the clear while redaction was off
    config.setdefault("redaction", {})["enabled"] = True
    mem.dirs.config.write_text(json.dumps(config))
    proc = alaya(data, "hook", "session-start", stdin=json.dumps({"prompt": PROMPT}))
    text = json.loads(proc.stdout)["prependContext"]
    assert "REDACTED" in text and leaks({"injected": text}) == []


def test_config_extra_patterns_and_allowlist(tmp_path):
    data = tmp_path / "data"
    mem = Alaya(data)
    mem.init()
    config = json.loads(mem.dirs.config.read_text())
    internal = "ACME-" + "7F3K9Q2L8M"
    allowed = "AK" + "IA" + "EXAMPLEEXAMPLE00"
    config.setdefault("redaction", {})["extra_patterns"] = [{"name": "acme token", "pattern": r"ACME-[A-Z0-9]{10}"}]
    config.setdefault("redaction", {})["allowlist"] = [allowed]
    mem.dirs.config.write_text(json.dumps(config))
    Alaya(data).ingest(json.dumps({"session_id": "x-1", "turns": [
        {"role": "user", "content": f"internal {internal} and docs example {allowed}"}]}).encode())
    stored = Alaya(data).raw.load("x-1").turns[0].content
    assert internal not in stored and "[REDACTED:acme-token]" in stored and allowed in stored
    config.setdefault("redaction", {})["extra_patterns"] = [{"name": "bad", "pattern": "("}]
    mem.dirs.config.write_text(json.dumps(config))
    proc = alaya(data, "status")
    assert proc.returncode == 1 and b"redaction.extra_patterns.0.pattern" in proc.stderr


def test_adversarial_40kb_inputs_are_redacted_correctly():
    """Inputs that made the key-name prefix backtrack (a long dash-separated run before a key
    word): still redacted, and nothing else is."""
    redactor = Redactor()
    secret = "Zq8" + "x" * 10 + "Vb7Lm2Np4Rt6Wy9Kd3"
    dump = "-".join(f"{i % 256:02x}" for i in range(13_000))  # ~39 KB of hex pairs
    for text in (dump + "token", dump + "-token", dump + "-password=" + secret, "a-" * 20_000 + "api_key: " + secret):
        out, _ = redactor.redact(text)
        assert secret not in out
        assert out.startswith(text[:30_000]) or secret in text[:30_000]
    words = " ".join(["password"] * 5_000)
    assert redactor.redact(words) == (words, {})
    blob = "".join(chr(65 + (i * 7919) % 26) + chr(97 + (i * 104729) % 26) + str(i % 10) for i in range(14_000))
    out, counts = redactor.redact(f"key data {blob} end")
    assert blob not in out and counts["high-entropy-token"] == 1



class HiddenSecretSection:
    """A plugin whose session-start section holds a key with invisible characters inside."""

    def __init__(self, text: str) -> None:
        self.text = text

    @hookimpl
    def session_start(self, memory, request):
        return Section("plugin", "From a plugin", [Item(self.text)], order=30)


def test_injection_redacts_a_secret_split_by_invisible_characters(tmp_path):
    """Zero-width and tag characters inside a key (here in a plugin's section) are removed
    from the injected text, so the key shows whole there: it is redacted after that."""
    mem = Alaya(tmp_path / "data")
    mem.init()
    secret = next(s for kind, s, _ in CORPUS if kind == "openai project")
    plugin = HiddenSecretSection(f"deploy key {secret[:12]}\u200b{secret[12:30]}\U000e0020\u2060{secret[30:]} (staging)")
    manager = get_plugin_manager()
    manager.register(plugin)
    try:
        text = build(mem, StartRequest(prompt=""))
    finally:
        manager.unregister(plugin)
    assert "deploy key [REDACTED:openai-key] (staging)" in text
    assert secret[12:30] not in text
