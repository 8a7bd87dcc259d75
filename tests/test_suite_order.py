"""The suite's own schedule (issue 35): scripts/test.sh gives whole files to its workers, and the
longest go first (tests/conftest.py, by tests/file_seconds.json), so that none starts near the
end and becomes the run's tail; xdist's own reorder (most tests first) is turned off for it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected_files(*files: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    order: list[str] = []
    for line in proc.stdout.splitlines():
        name = line.split("::", 1)[0]
        if "::" in line and name not in order:
            order.append(name)
    return order


def test_the_longest_files_are_collected_first():
    measured = json.loads((ROOT / "tests" / "file_seconds.json").read_text(encoding="utf-8"))
    files = ["tests/test_text.py", "tests/test_chaos.py", "tests/test_recall_words.py", "tests/test_serve.py"]
    assert _collected_files(*files) == sorted(files, key=lambda f: -measured.get(f, 10.0))
    assert measured["tests/test_chaos.py"] > measured["tests/test_text.py"]


def test_test_sh_keeps_that_order_and_writes_the_times_that_make_it():
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "--dist loadfile --no-loadscope-reorder" in script
    assert "--junitxml=.venv-test/junit.xml" in script


def test_file_seconds_sums_each_files_tests(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text('<testsuites><testsuite>'
                      '<testcase classname="tests.test_a" name="t1" time="1.5"/>'
                      '<testcase classname="tests.test_a" name="t2" time="2.0"/>'
                      '<testcase classname="tests.e2e.test_b.TestGroup" name="t3" time="9.0"/>'
                      '</testsuite></testsuites>')
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "file-seconds.py"), str(report)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert list(json.loads(proc.stdout).items()) == [("tests/e2e/test_b.py", 9.0), ("tests/test_a.py", 3.5)]
