"""Follow-ups on the whole-store commands: verify reports what crash recovery would fix, and
rebuild / import-memex keep derived layers free of secrets and of lost curation."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import session_json
from openclaw_alaya.models import Session, Turn


def test_verify_reports_what_journal_check_finds(memory):
    from openclaw_alaya.maintenance.verify import verify

    memory.ingest(session_json("s-known", [("user", "We deploy the billing service on Fridays.")]))
    memory.distill()
    assert verify(memory)["ok"]
    # L3 written, L2 not (a crash between the two, or a file dropped in by hand)
    memory.raw.write(Session(id="s-orphan", started_at="2026-03-02T10:00:00+00:00",
                             turns=[Turn(id="t1", role="user", content="An orphaned session.")]))
    # L3 gained a turn the Session node does not know about
    known = memory.raw.load("s-known")
    memory.raw.write(known.model_copy(update={"turns": [*known.turns, Turn(id="t9", role="user", content="More.")]}))
    report = verify(memory)
    assert not report["ok"]
    assert report["counts"].get("session_not_in_l2") == 1 and report["counts"].get("stale_session") == 1
    assert {p.get("session") for p in report["problems"]} >= {"s-orphan", "s-known"}

    result = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "verify", "--json"],
                            capture_output=True, timeout=120)
    assert result.returncode == 1
    assert json.loads(result.stdout)["counts"]["session_not_in_l2"] == 1
    result = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "verify"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "session_not_in_l2" in result.stdout

    from openclaw_alaya.maintenance.rebuild import rebuild

    rebuild(memory)  # re-derives L2 from every L3 file
    assert verify(memory)["ok"]
