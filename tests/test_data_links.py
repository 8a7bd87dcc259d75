"""Symbolic links inside the data directory are refused, never followed (issue 30 class 14).

A linked `raw/` had writes land in its target and a rebuild derive from it (51 cards became
1); forgetting a linked session file removed the link and left the text in its target. Each
test builds the link by hand on a real data directory and runs the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import session_json, tree_digest

SECRET = "The vault sits in room 8812 and Priya decided we use Postgres."  # no secret shape: the redactor keeps those out


def cli(data: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, env=env, timeout=180)


def refused(proc: subprocess.CompletedProcess, link: Path) -> None:
    """Exit 1 with one line that names the link, no traceback."""
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.returncode, err[-800:])
    assert "Traceback" not in err and "internal error" not in err, err
    assert str(link) in err and "symbolic link" in err, err
    assert len(err.strip().splitlines()) == 1, err


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store of three distilled sessions, built once; each test gets a copy."""
    data = tmp_path_factory.mktemp("template") / "data"
    folder = data.parent / "in"
    folder.mkdir()
    for k in range(3):
        (folder / f"s{k}.json").write_bytes(session_json(f"s{k}", [("user", f"{SECRET} Note {k}.")]))
    assert cli(data, "init").returncode == 0
    proc = cli(data, "ingest", str(folder), "--distill")
    assert proc.returncode == 0, proc.stderr.decode()
    return data


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(template, data, symlinks=True)
    return data


def session_file(data: Path, session_id: str) -> Path:
    return next((data / "raw" / "sessions").glob(f"*/{session_id}.json"))


def test_linked_raw_folder_is_refused_for_writes_and_rebuild(store: Path, tmp_path: Path):
    """issue 30 class 14: a `raw/` that is a link to another folder: ingest, rebuild and verify
    refuse it with one line; nothing is written into the link's target."""
    elsewhere = tmp_path / "elsewhere"
    shutil.move(store / "raw", elsewhere)
    (store / "raw").symlink_to(elsewhere, target_is_directory=True)
    before = tree_digest(elsewhere)
    refused(cli(store, "ingest", "--stdin", stdin=session_json("s9", [("user", "A new fact about Kafka.")])), store / "raw")
    refused(cli(store, "rebuild"), store / "raw")
    refused(cli(store, "verify"), store / "raw")
    assert tree_digest(elsewhere) == before


def test_linked_month_folder_is_refused_by_rebuild(store: Path, tmp_path: Path):
    """issue 30 class 14: rebuild does not derive cards from a month folder that is a link."""
    month = session_file(store, "s0").parent
    elsewhere = tmp_path / "month"
    shutil.move(month, elsewhere)
    month.symlink_to(elsewhere, target_is_directory=True)
    refused(cli(store, "rebuild"), month)


def test_forgetting_a_linked_session_file_refuses_and_keeps_the_link(store: Path, tmp_path: Path):
    """issue 30 class 14: `forget --session --purge-raw` on a session whose file is a link
    refuses before doing anything, rather than removing the link and leaving the text in its
    target; the session and its cards are still there."""
    path = session_file(store, "s1")
    target = tmp_path / "s1.json"
    shutil.move(path, target)
    path.symlink_to(target)
    refused(cli(store, "forget", "--session", "s1", "--purge-raw", "--reason", "test"), path)
    assert path.is_symlink() and SECRET in target.read_text()
    listed = cli(store, "list", "--json")
    assert listed.returncode == 0 and "Note 1" in listed.stdout.decode()


def test_linked_context_file_is_not_removed_by_forget(store: Path, tmp_path: Path):
    """issue 30 class 14: forgetting a card whose context copy is a link refuses, leaving the
    link and its target as they were."""
    context = next((store / "raw" / "contexts").glob("*.json"))
    card = context.stem
    target = tmp_path / "context.json"
    shutil.move(context, target)
    context.symlink_to(target)
    refused(cli(store, "forget", card, "--purge-raw", "--reason", "test"), context)
    assert context.is_symlink() and target.is_file()


def test_linked_log_is_not_appended_to(store: Path, tmp_path: Path):
    """issue 30 class 14: an L3 log that is a link (raw/links.jsonl) is neither appended to
    nor read: the write refuses with one line and the target keeps its bytes."""
    target = tmp_path / "links.jsonl"
    target.write_text("")
    (store / "raw" / "links.jsonl").symlink_to(target)
    cards = json.loads(cli(store, "list", "--json").stdout)
    ids = [c["id"] for c in (cards["cards"] if isinstance(cards, dict) else cards)][:2]
    refused(cli(store, "link", ids[0], ids[1], "--rel", "DEPENDS_ON"), store / "raw" / "links.jsonl")
    assert target.read_text() == ""


@pytest.mark.parametrize("name", ["state", "journal", "lancedb", "graph.kuzu", ".lock"])
def test_linked_top_level_entry_is_refused(store: Path, tmp_path: Path, name: str):
    """issue 30 class 14: state files, the journal, the graph and the index are not reached
    through a link either: every command refuses the data directory with one line."""
    elsewhere = tmp_path / f"moved-{name}"
    shutil.move(store / name, elsewhere)
    (store / name).symlink_to(elsewhere, target_is_directory=elsewhere.is_dir())
    refused(cli(store, "recall", "Postgres"), store / name)
