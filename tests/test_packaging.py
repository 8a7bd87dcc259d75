"""The package as PyPI shows it and as a user installs it (issue 35): project URLs and
classifiers that agree with `requires-python`, and the MCP SDK an extra that `alaya mcp` names
in one line when it is missing (the rest of the CLI, `alaya mcp token` included, needs none of it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Runs the CLI as `alaya` does, with the `mcp` package hidden as if it were not installed.
WITHOUT_MCP = ("import sys; sys.modules['mcp'] = None; "
               "from openclaw_alaya.cli.client import main; sys.exit(main())")


def _project() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()


def test_project_urls_and_classifiers():
    project = _project()
    assert {"Homepage", "Repository", "Issues"} <= set(project["urls"])
    assert all(url.startswith("https://") for url in project["urls"].values())
    classifiers = set(project["classifiers"])
    oldest = int(re.fullmatch(r">=3\.(\d+)", project["requires-python"]).group(1))
    for minor in range(oldest, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers, minor
    assert not [c for c in classifiers if c.startswith("License ::")], "PEP 639: the licence is the `license` expression"
    assert (ROOT / "LICENSE").is_file() and project["license"] == "MIT"


def test_the_mcp_sdk_is_an_extra_the_tests_install():
    project = _project()
    assert "mcp" not in {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert {_name(r) for r in extras["mcp"]} == {"mcp"}
    assert "openclaw-alaya[mcp]" in extras["test"]


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}, "ALAYA_NO_SERVE": "1"}
    return subprocess.run([sys.executable, "-c", WITHOUT_MCP, "--data-dir", str(data), *args], capture_output=True,
                          text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)


def test_alaya_mcp_without_the_sdk_names_the_extra_in_one_line(tmp_path):
    data = tmp_path / "data"
    assert _cli(data, "init").returncode == 0
    served = _cli(data, "mcp")
    assert served.returncode == 1, served
    assert served.stderr.strip().count("\n") == 0 and "Traceback" not in served.stderr, served.stderr
    assert "openclaw-alaya[mcp]" in served.stderr, served.stderr
    tokens = _cli(data, "mcp", "token", "list")
    assert tokens.returncode == 0, tokens.stderr


def test_alaya_version_answers_without_building_the_parsers():
    """`alaya --version` prints the version without importing cli/main.py, whose 30-odd
    parsers took about 40 of its 100 ms (docs/performance.md, "Install size and import time")."""
    code = ("import sys\nfrom openclaw_alaya.cli.client import main\nmain(['--version'])\n"
            "print('openclaw_alaya.cli.main' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    from openclaw_alaya import __version__

    assert proc.stdout.splitlines() == [f"alaya {__version__}", "False"], proc.stdout
