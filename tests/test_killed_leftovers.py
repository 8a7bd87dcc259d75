"""What a killed rebuild, reembed, introspect or backup leaves behind (issue 30, must-show 7:
"nothing purged comes back"; found by tests/test_chaos.py, seed 2).

Each of them works in a folder of its own, `.<kind>-<pid>-<ns>/` (store/workdirs.py): a copy of
the graph, the index or the whole data directory. A kill -9 left that folder in place until the
next run of the same kind, and a killed backup's `backups/.alaya-<stamp>.partial/` forever. So
text forgotten with `alaya forget --purge-raw` after the kill stayed in plain files of the data
directory. Now the next write-lock hold (the forget itself) removes the folders of dead
processes, whatever their kind, and the next backup removes a killed backup's anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_crash import cli

TOKEN = "zqmorivalu"
KILLED_AT = {  # the command, and where in it the child kills itself (after the copy is made)
    "rebuild": ("rebuild", "openclaw_alaya.store.embedded.scratch:_Staged.install"),
    "reembed": ("reembed", "openclaw_alaya.store.embedded.scratch:_Staged.install"),
    "introspect": ("introspect", "openclaw_alaya.store.embedded.shadow:Copy.sync"),
    "backup": ("backup", "openclaw_alaya.maintenance.backup:_pack"),
}


def captured(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    assert cli(data, "init").returncode == 0
    messages = [{"role": "user", "content": f"We decided that {TOKEN} keeps the copper lantern.", "timestamp": 1775811601000},
                {"role": "assistant", "content": "Understood.", "timestamp": 1775811602000}]
    event = {"agentId": "a", "sessionId": "s-secret", "sessionKey": "agent:a:main", "reason": "agent_end",
             "messages": messages}
    proc = cli(data, "hook", "session-end", stdin=json.dumps(event))
    assert proc.returncode == 0 and json.loads(proc.stdout)["distilled"], proc.stderr
    return data


def killed(data: Path, command: str, patch: str, *args: str) -> subprocess.CompletedProcess:
    """`alaya <command> <args>` in a child that SIGKILLs itself at `patch` (module:attr or module:Class.method)."""
    module, attr = patch.split(":")
    owner, _, name = attr.rpartition(".")
    code = f"""
import os, signal, sys
import {module} as m
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
setattr({'m.' + owner if owner else 'm'}, "{name}", die)
from openclaw_alaya.cli.main import main
sys.exit(main(["--data-dir", sys.argv[1], "{command}", *sys.argv[2:]]))
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "ALAYA_NO_SERVE": "1"}
    return subprocess.run([sys.executable, "-c", code, str(data), *args], capture_output=True, text=True, env=env,
                          timeout=180)


def work_folders(*parents: Path) -> list[str]:
    """Hidden folders and files other than the lock: work folders, a partial archive."""
    return sorted(str(p) for parent in parents if parent.is_dir() for p in parent.iterdir()
                  if p.name.startswith(".") and p.name != ".lock")


def plain_files_with(root: Path, needle: str) -> list[str]:
    """Files holding `needle`, outside graph.kuzu, lancedb/ and state/ (issue 30 class 1's, tested there)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and not p.relative_to(root).parts[0].startswith(("graph.kuzu", "lancedb", "state"))
                  and needle.encode() in p.read_bytes())


@pytest.mark.parametrize("what", sorted(KILLED_AT))
def test_a_killed_builder_leaves_no_copy_of_forgotten_text(tmp_path, what):
    """Issue 30 must-show 7: once `forget --purge-raw` returned, no folder of a killed rebuild,
    reembed, introspect or backup holds the forgotten text."""
    data = captured(tmp_path)
    command, patch = KILLED_AT[what]
    proc = killed(data, command, patch)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert work_folders(data, data / "backups"), "the kill landed after the copy was made"
    assert plain_files_with(data, TOKEN)  # …and the copy holds the text
    proc = cli(data, "forget", "--session", "s-secret", "--purge-raw", "--json")
    assert proc.returncode == 0, proc.stderr
    assert work_folders(data, data / "backups") == []
    assert plain_files_with(data, TOKEN) == []
    assert cli(data, "verify").returncode == 0


def test_a_killed_backup_elsewhere_is_removed_by_the_next_backup_there(tmp_path):
    """Issue 30 must-show 7: a backup killed while packing into `--dest` leaves a folder there
    that the next backup to that destination removes (and its archive is whole)."""
    data = captured(tmp_path)
    dest = tmp_path / "offsite"
    proc = killed(data, "backup", KILLED_AT["backup"][1], "--dest", str(dest))
    assert proc.returncode == -signal.SIGKILL and work_folders(dest), proc.stderr[-2000:]
    proc = cli(data, "backup", "--dest", str(dest), "--json")
    assert proc.returncode == 0, proc.stderr
    assert work_folders(dest) == [] and [p.name for p in dest.iterdir()] == [Path(json.loads(proc.stdout)["path"]).name]
