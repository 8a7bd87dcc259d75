"""A forget that lands while `alaya rebuild` builds its copy outside the lock (issue 30 class 1,
found by tests/test_chaos.py, seed 303477162): the copy drops the forgotten cards and session
before its swap, but a delete leaves their text on the new graph's pages and in the new index's
fragments, so the swap brought the forgotten text back into graph.kuzu and lancedb/. The rebuild
now scrubs the stores it swapped in when a tombstone was written during the build. Real
processes: the rebuild runs in a child, and the forget in another one, started by the child
between the rebuild's first look at L3 and its swap."""

from __future__ import annotations

import os
import subprocess
import sys

from openclaw_alaya import Alaya
from test_redaction import file_bytes

from helpers import session_json

SECRET = "Quokka-Marmalade"
CHILD = """
import subprocess, sys
from openclaw_alaya import Alaya
from openclaw_alaya.maintenance import rebuild as module
data = sys.argv[1]
first = module._Build.catch_up
looks = []
def catch_up(self, report, usage=None):
    changed = first(self, report, usage)
    if not looks:  # after the first (whole) build, outside the lock: another process forgets
        forget = [sys.executable, "-m", "openclaw_alaya", "--data-dir", data, "forget", "--session", "s-gone", "--purge-raw"]
        done = subprocess.run(forget, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    looks.append(changed)
    return changed
module._Build.catch_up = catch_up
module.rebuild(Alaya(data))
print("rebuilt", len(looks))
"""


def test_a_forget_during_a_rebuild_leaves_no_text_in_the_swapped_in_stores(tmp_path):
    data = tmp_path / "data"
    memory = Alaya(data)
    memory.init()
    memory.ingest(session_json("s-gone", [("user", f"We decided the vault passphrase is {SECRET}, the auditor chose it."),
                                          ("assistant", f"Noted: {SECRET} opens the vault.")]))
    memory.ingest(session_json("s-keep", [("user", "We decided to cap the pgbouncer pool at 40 because billing ran out.")]))
    memory.distill()
    child = subprocess.run([sys.executable, "-c", CHILD, str(data)], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 0 and "rebuilt" in child.stdout, child.stderr[-3000:]
    files = file_bytes(data, include_raw=True)
    assert any(b"pgbouncer" in body for body in files.values())  # the scan sees what is kept
    holding = sorted(name for name, body in files.items() if SECRET.encode() in body or SECRET.lower().encode() in body)
    assert holding == [], holding


KILLED_AFTER_SWAP = CHILD.replace("module.rebuild(Alaya(data))", """
import os, signal
from openclaw_alaya.curate import purge
purge._apply = lambda memory, records: os.kill(os.getpid(), signal.SIGKILL)  # killed right after the swap
module.rebuild(Alaya(data))""")


def test_a_rebuild_killed_between_its_swap_and_redoing_the_forget_leaves_it_for_the_next_command(tmp_path):
    """The same race, with the rebuild killed (kill -9) after it swapped its copy in and before
    it carried the forget out again on it (found by tests/test_chaos.py, seed 709465951, the
    text left in a lancedb/ fragment): the intent is journalled before the swap, so the next
    command finishes the purge first."""
    data = tmp_path / "data"
    memory = Alaya(data)
    memory.init()
    memory.ingest(session_json("s-gone", [("user", f"We decided the vault passphrase is {SECRET}, the auditor chose it.")]))
    memory.ingest(session_json("s-keep", [("user", "We decided to cap the pgbouncer pool at 40 because billing ran out.")]))
    memory.distill()
    child = subprocess.run([sys.executable, "-c", KILLED_AFTER_SWAP, str(data)], capture_output=True, text=True,
                           timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == -9, child.stderr[-3000:]
    status = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), "recall", "vault passphrase"],
                            capture_output=True, text=True, timeout=300)
    assert status.returncode == 0, status.stderr
    assert SECRET.lower() not in status.stdout.lower()
    files = file_bytes(data, include_raw=True)
    holding = sorted(name for name, body in files.items() if SECRET.encode() in body or SECRET.lower().encode() in body)
    assert holding == [], holding
