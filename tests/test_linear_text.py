"""Every pattern run over message text stays linear on adversarial input (issue 30 class 9).

A 39 KB message took 31 s to distill: `_NAMED_VERSION_RE` backtracked through each `-` of a
run from each start inside it. The same shape of defect was in the path and hyphenated-id
patterns, in the entity bookkeeping (a scan of all spans per span, a search per entity pair),
in `import-memex`'s wikilinks, in workspace comments and in recall's date phrases. No timing
is asserted: one child process runs every text function on 200 KB of each shape under a hard
limit far above what linear work needs (about a second a shape) and far below what quadratic
work needs (minutes to hours a shape); the child names each shape as it finishes, so a
failure says which one hung. bench/distill_size.py prints the figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = 200_000
LIMIT_S = 300  # the whole run; linear work takes about 30 s on a loaded 2-core machine

# Each: a short unit repeated to SIZE characters. All but the last two took more than a
# minute per shape (most far more) on the code before the fix.
SHAPES = ["a-", "A1-", "a1-", "1.1.", "@@", "a.a.", "x.py ", "[[", "[[a|", "<!--", "1 May ",
          "<!--importance:" + " " * 64, "New York "]

CHILD = r"""
import json, sys
from datetime import datetime, timezone
from openclaw_alaya.distill.heuristic import HeuristicDistiller
from openclaw_alaya.ingest import markdown
from openclaw_alaya.ingest.formats import parse_session
from openclaw_alaya.maintenance import memex
from openclaw_alaya.recall import intent, periods
from openclaw_alaya.redact import Redactor
from openclaw_alaya.safety.output import for_model

size = int(sys.argv[1])
now = datetime.now(timezone.utc)
for unit in json.loads(sys.argv[2]):
    text = (unit * (size // len(unit) + 1))[:size]
    raw = json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]).encode()
    session = parse_session(raw, session_id="s1", max_turn_chars=size)
    HeuristicDistiller().distill(session)
    Redactor().redact(text)
    periods.find_phrase(text, now)
    intent.classify(text)
    memex.parse_note(text, "note")
    markdown.parse(text)
    for_model(text)
    print("done", repr(unit), flush=True)
"""


def test_text_functions_are_linear_on_adversarial_shapes():
    """issue 30 class 9: distill (entities, dates, cues), redaction, recall's date phrases and
    intents, memex notes, workspace markdown and the output sanitiser finish 200 KB of every
    adversarial shape within the hard limit."""
    import json

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(SIZE), json.dumps(SHAPES)], capture_output=True,
                              text=True, env=env, timeout=LIMIT_S)
    except subprocess.TimeoutExpired as exc:
        done = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        finished = done.count("done")
        raise AssertionError(f"super-linear on shape {SHAPES[finished]!r} (finished: {done.split()})") from None
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("done") == len(SHAPES)
