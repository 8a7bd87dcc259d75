"""`alaya import-memex` and `alaya ingest DIR` read anyone's folder with bounds (issue 30 class 8).

On the code before: a YAML alias bomb in a note's front matter took 4–5.6 GB and over two
minutes, a note nested 5,000 levels deep raised RecursionError and aborted the whole import,
and notes linked from outside the folder were followed and imported. Now each bad note is
skipped with one warning line naming it and the rest of the import goes on. The bomb here is
small (a million strings once expanded) so that the code before survives it and the test fails
there on its assertions, not on memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

OUTSIDE = "Outside text the import must not read: the wifi password is hunter2."


def cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def alias_bomb(levels: int) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, levels):
        prev, name = chr(ord("a") + k - 1), chr(ord("a") + k)
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]")
    lines.append(f"title: *{chr(ord('a') + levels - 1)}")
    return "---\n" + "\n".join(lines) + "\n---\n# Bomb\n\nbody\n"


BAD_NOTES = {
    "bomb.md": alias_bomb(6),
    "deep-flow.md": "---\ntitle: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep flow.\n",
    "deep-block.md": "---\n" + "".join(" " * k + f"k{k}:\n" for k in range(300)) + " " * 300 + "x: 1\n---\nDeep block.\n",
    "huge-front.md": "---\ntitle: Huge\nnotes: " + "x" * (70 * 1024) + "\n---\nHuge front matter.\n",
    "huge.md": "# Huge note\n\n" + "All work and no play. " * 60_000,
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    base = tmp_path_factory.mktemp("memex")
    vault, outside, data = base / "vault", base / "outside", base / "data"
    (vault / "sub").mkdir(parents=True)
    outside.mkdir()
    (vault / "good.md").write_text("---\ntitle: Deploy checklist\ntags: [ops]\n---\nWe deploy with [[Runbook]].\n")
    (vault / "sub" / "runbook.md").write_text("# Runbook\n\nRestart pgbouncer after a failover.\n")
    for name, text in BAD_NOTES.items():
        (vault / name).write_text(text)
    (outside / "secret.md").write_text(f"# Outside\n\n{OUTSIDE}\n")
    (vault / "linked.md").symlink_to(outside / "secret.md")
    (vault / "linked-folder").symlink_to(outside, target_is_directory=True)
    assert cli(data, "init").returncode == 0
    return cli(data, "import-memex", str(vault), "--json"), data


def test_each_bad_note_is_skipped_with_one_line_and_the_rest_imports(imported):
    """issue 30 class 8: an alias bomb, front matter nested 5,000 levels (flow) or 300 (block),
    front matter over the size limit and a note over the size limit are each skipped with one
    warning naming the note; the good notes import and their wikilink resolves."""
    proc, _ = imported
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    for name in BAD_NOTES:
        assert sum(name in line and "skipped" in line for line in warnings) == 1, (name, warnings)
    report = json.loads(proc.stdout)
    assert report["cards"] == 2 and report["links"] == 1 and report["skipped"] == len(BAD_NOTES) + 2, report


def test_linked_notes_and_folders_are_not_followed(imported):
    """issue 30 class 8: a note that is a symbolic link to a file outside the folder, and a
    linked folder, are not imported (one warning each); nothing of their text is in the store."""
    proc, data = imported
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert sum("linked.md" in line for line in warnings) == 1, warnings
    assert sum("linked-folder" in line for line in warnings) == 1, warnings
    listed = cli(data, "list", "--json")
    assert listed.returncode == 0
    assert "hunter2" not in listed.stdout and "Outside" not in listed.stdout
    assert "Deploy checklist" in listed.stdout and "Runbook" in listed.stdout
    for path in data.rglob("*"):
        if path.is_file():
            assert b"hunter2" not in path.read_bytes(), path


def test_ingest_of_a_folder_does_not_follow_a_linked_session_file(tmp_path: Path):
    """issue 30 class 8: `alaya ingest DIR` skips a session file that is a link to one outside
    the folder, with one warning naming it, and ingests the rest."""
    folder, outside, data = tmp_path / "in", tmp_path / "outside", tmp_path / "data"
    folder.mkdir()
    outside.mkdir()
    (folder / "ok.json").write_text(json.dumps({"session_id": "ok", "turns": [{"role": "user", "content": "We use Kafka."}]}))
    (outside / "other.json").write_text(json.dumps({"session_id": "other", "turns": [{"role": "user", "content": OUTSIDE}]}))
    (folder / "linked.json").symlink_to(outside / "other.json")
    assert cli(data, "init").returncode == 0
    proc = cli(data, "ingest", str(folder))
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert sum("linked.json" in line and "skipped" in line for line in proc.stderr.splitlines()) == 1, proc.stderr
    for path in data.rglob("*"):
        if path.is_file():
            assert b"hunter2" not in path.read_bytes(), path
