"""One clock (issue 31): `ALAYA_NOW` moves the stamps of cards, recalls and introspect; the
usage history (maintenance/usage.py) keeps, after a fold, which questions returned which card
on which days and how many recalls found anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone

from helpers import session_json

from openclaw_alaya.maintenance import access, usage

OPS = [
    ("user", "The billing service went down at 14:05 after the deploy of v2.3.1."),
    ("assistant", "The root cause was pgbouncer pool_size=20 being exhausted because the new worker count is 64."),
]


def _cli(data_dir, *args, now=None):
    env = {**os.environ, "ALAYA_NO_SERVE": "1"}
    env.pop("ALAYA_NOW", None)
    if now:
        env["ALAYA_NOW"] = now
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_alaya_now_moves_the_stamps_of_cards_recalls_and_introspect(tmp_path):
    data = tmp_path / "data"
    (tmp_path / "s.json").write_bytes(session_json("s-ops", OPS, started_at="2027-03-01T09:00:00+00:00"))
    assert _cli(data, "init").returncode == 0
    assert _cli(data, "ingest", str(tmp_path / "s.json"), now="2027-03-01T10:00:00Z").returncode == 0
    assert _cli(data, "introspect", now="2027-03-01T11:00:00Z").returncode == 0
    got = _cli(data, "list", "--json", now="2027-03-01T12:00:00Z")
    assert got.returncode == 0, got.stderr
    cards = json.loads(got.stdout)
    cards = cards.get("cards", cards) if isinstance(cards, dict) else cards
    assert cards and all(c["created_at"].startswith("2027-03-01") for c in cards)
    assert _cli(data, "recall", "pgbouncer pool", now="2027-05-02T09:00:00Z").returncode == 0
    line = json.loads((data / "state" / "access.jsonl").read_text().splitlines()[-1])
    assert datetime.fromtimestamp(line["ts"], timezone.utc).date().isoformat() == "2027-05-02"
    # introspect at +200 days on the CLI: the cool-down judged the cards by ALAYA_NOW
    report = _cli(data, "introspect", "--json", now="2027-09-20T09:00:00Z")
    assert report.returncode == 0, report.stderr
    cooled = next(step["result"] for step in json.loads(report.stdout)["steps"] if step["step"] == "cool-down")
    assert cooled["tiers"].get("HOT", 0) == 0, cooled  # 200 days unrecalled; the real clock says they are new
    assert json.loads((data / "state" / "usage.json").read_text())["days"] == {"2027-05-02": {"recalls": 1, "hits": 1}}


def test_the_usage_history_counts_distinct_questions_days_and_empty_recalls(memory):
    memory.ingest(session_json("s-ops", OPS))
    memory.distill()
    days = [datetime(2027, 1, d, 9, tzinfo=timezone.utc) for d in (3, 4, 4, 9)]
    questions = ["pgbouncer pool size", "PGBOUNCER   pool size", "why did billing go down", "pool exhaustion"]
    for day, question in zip(days, questions):
        assert memory.recall(question, now=day).nodes
    memory.recall("zzqx unrelated wordless", now=days[0])
    folded = access.fold(memory)
    assert folded["lines"] == 5
    history = usage.load(memory)
    assert history.days["2027-01-03"] == {"recalls": 2, "hits": 1}
    assert history.days["2027-01-04"] == {"recalls": 2, "hits": 2}
    best = max(history.cards.values(), key=lambda u: u.returned)
    assert len(best.queries) == 3  # the first two questions differ only in case and spacing
    assert best.days == ["2027-01-03", "2027-01-04", "2027-01-09"]
    # a second fold adds to the history, never replaces it
    memory.recall("pgbouncer pool size", now=datetime(2027, 2, 1, tzinfo=timezone.utc))
    access.fold(memory)
    assert usage.load(memory).days["2027-01-03"] == {"recalls": 2, "hits": 1}
    assert "2027-02-01" in usage.load(memory).days


def test_a_damaged_usage_history_is_read_as_empty_and_rewritten(memory):
    memory.ingest(session_json("s-ops", OPS))
    memory.distill()
    usage.path_of(memory).write_text("{not json")
    memory.recall("pgbouncer", now=datetime(2027, 1, 3, tzinfo=timezone.utc))
    access.fold(memory)
    assert usage.load(memory).days == {"2027-01-03": {"recalls": 1, "hits": 1}}


def test_a_recall_after_a_torn_access_line_is_still_counted(memory):
    """A crash mid-append leaves the log's last line without its newline; the next recall's line
    must not be glued to it (both were dropped as one unreadable line)."""
    memory.ingest(session_json("s-ops", OPS))
    memory.distill()
    memory.dirs.access_log.write_text('{"ts": 1800000000, "cards": ["card-x"], "q": nu')
    memory.recall("pgbouncer", now=datetime(2027, 1, 3, tzinfo=timezone.utc))
    assert access.fold(memory)["lines"] == 1
    assert usage.load(memory).days == {"2027-01-03": {"recalls": 1, "hits": 1}}
