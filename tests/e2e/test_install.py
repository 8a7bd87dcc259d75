"""A new user's install, run as written: the README's install and first commands in a fresh venv
on a fresh copy of the checkout (pip builds the wheel and installs it, not editable), then
scripts/demo.sh twice, the second time offline; and the sdist and wheel the release workflow
builds pass `twine check` and carry the package data. The install needs the package index (or
pip's cache) once, as a user's does; everything after it runs offline. One venv for the module:
installing every dependency into it takes about 40 s with a warm pip cache."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from openclaw_e2e_support import REPO

pytestmark = pytest.mark.e2e

# The README's "Install and use" lines this module runs verbatim (a drift check keeps them there).
README_INSTALL = "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt ."
README_PATH = 'export PATH="$PWD/.venv/bin:$PATH"'
README_HOME = "export ALAYA_HOME=~/.alaya"
README_INIT = "alaya init"
README_INGEST = "alaya ingest ~/.openclaw/agents/main/sessions --agent main --distill"
README_RECALL = 'alaya recall "why did the billing service run out of connections?"'
README_RECALL_JSON = 'alaya recall "graph database" --json'
README_TRACE = "alaya trace card-…"  # run with the id the JSON recall gave
README_DEMO_DIR = ("python -c \"import openclaw_alaya, pathlib; "
                   "print(pathlib.Path(openclaw_alaya.__file__).parent / 'demo')\"")
README_COMMANDS = [README_INSTALL, README_PATH, README_HOME, README_INIT, README_INGEST, README_RECALL,
                   README_RECALL_JSON, README_TRACE, README_DEMO_DIR]
# The one install sentence README, SKILL.md, the plugin README and HOOK.md share.
INSTALL_WORDS = ("from a checkout of this repository, `uv tool install .` or `pipx install .`, or a venv "
                 "(`python3 -m venv .venv && .venv/bin/pip install -c constraints.txt .`) with `.venv/bin/alaya` "
                 "on the PATH or named in the plugin's (or hook pack's) `command`; alaya is not on the package "
                 "index yet")
# The release workflow's build and check, which the last test runs.
RELEASE_BUILD = "python -m build"
RELEASE_CHECK = "python -m twine check --strict dist/*"
# Nothing may reach the network: any proxy-honouring client fails fast, pip may not use an index.
OFFLINE = {"PIP_NO_INDEX": "1", "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": ""}


def _copy_checkout(dest: Path) -> None:
    """The working tree as a fresh clone would have it (tracked and unignored files, no venvs)."""
    names = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


class Checkout:
    """A copy of the checkout with its own HOME; `sh` runs a command line there in bash."""

    def __init__(self, root: Path):
        self.dir = root / "clone"
        self.home = root / "home"
        self.dir.mkdir()
        self.home.mkdir()
        _copy_checkout(self.dir)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_") and k != "VIRTUAL_ENV"}
        # pip's cache and config stay the user's: the install is as fast and as configured as theirs
        env.setdefault("PIP_CACHE_DIR", os.path.expanduser("~/.cache/pip"))
        env.setdefault("XDG_CONFIG_HOME", os.path.expanduser("~/.config"))
        env["HOME"] = str(self.home)
        self.env = env

    def sh(self, line: str, *, offline: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
        print(f"\n$ {line}", flush=True)
        started = time.monotonic()
        env = {**self.env, **OFFLINE} if offline else self.env
        p = subprocess.run(["bash", "-c", f"set -euo pipefail\n{line}"], cwd=self.dir, env=env, capture_output=True,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        print(f"  exit {p.returncode} after {time.monotonic() - started:.1f} s\n{p.stdout[-1500:]}{p.stderr[-3000:]}",
              flush=True)
        assert p.returncode == 0, f"{line!r} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
        return p


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Checkout:
    return Checkout(tmp_path_factory.mktemp("install"))


@pytest.fixture(scope="module")
def checkout(clone) -> Checkout:
    """The copy after the README's install line (online once, pip's cache reused)."""
    version = subprocess.run(["python3", "-c", "import sys; print(sys.version_info >= (3, 11))"], capture_output=True,
                             text=True).stdout.strip()
    if version != "True":
        pytest.skip("the README's install line is for python3 3.11+ (constraints.txt); on 3.10 it says to drop -c")
    clone.sh(README_INSTALL)
    return clone


def test_readme_shows_the_install_this_test_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for cmd in README_COMMANDS:
        assert cmd in readme, f"README.md does not show the tested command:\n  {cmd}"


def test_install_is_said_the_same_way_everywhere():
    """README, the skill (whose copies hooks/test/skill.test.js keeps identical), the plugin README
    and the hook pack tell the same install, the one the test below runs."""
    for name in ["README.md", "skills/alaya/SKILL.md", "hooks/openclaw-alaya/README.md", "hooks/alaya-capture/HOOK.md"]:
        text = " ".join((REPO / name).read_text(encoding="utf-8").split())
        assert INSTALL_WORDS in text, f"{name} does not say: {INSTALL_WORDS}"


def test_readme_install_and_first_commands_run_as_written(checkout):
    # then away from the checkout, whose folder python would import first: what runs is the wheel
    env_lines = f"{README_PATH}\n{README_HOME}\ncd ~\n"
    site = checkout.sh(f'{env_lines}python -c "import openclaw_alaya; print(openclaw_alaya.__file__)"').stdout
    assert "site-packages" in site, f"not installed from the built wheel (editable?): {site}"
    demo = Path(checkout.sh(env_lines + README_DEMO_DIR, offline=True).stdout.strip())
    assert "site-packages" in str(demo) and (demo / "ops-incident.jsonl").is_file()
    # the user's OpenClaw sessions, here the demo sessions the wheel carries
    sessions = checkout.home / ".openclaw" / "agents" / "main" / "sessions"
    shutil.copytree(demo, sessions)

    assert "initialised" in checkout.sh(env_lines + README_INIT, offline=True).stdout
    assert (checkout.home / ".alaya" / "config.json").is_file()
    ingested = checkout.sh(env_lines + README_INGEST, offline=True).stdout
    assert re.search(r"ingested 4 sessions", ingested) and re.search(r"distilled [1-9]\d* cards", ingested)
    assert "PgBouncer" in checkout.sh(env_lines + README_RECALL, offline=True).stdout
    nodes = json.loads(checkout.sh(env_lines + README_RECALL_JSON, offline=True).stdout)["nodes"]
    assert any("graph store" in node["title"] for node in nodes)
    trace = checkout.sh(env_lines + README_TRACE.replace("card-…", nodes[0]["card_id"]), offline=True).stdout
    assert "design-2026-02-20-graph-store" in trace


def test_demo_twice_second_run_installs_nothing_and_runs_offline(checkout):
    checkout.sh("scripts/demo.sh")
    stamp = checkout.dir / ".venv" / ".alaya-install"
    installed = stamp.stat().st_mtime_ns
    second = checkout.sh("scripts/demo.sh", offline=True).stdout
    assert stamp.stat().st_mtime_ns == installed, "the second demo run installed again"
    assert "alaya trace card-" in second and "PgBouncer" in second


def test_release_workflow_builds_and_checks_as_this_module_does():
    """The release workflow publishes what the test below built and checked, with trusted
    publishing (no stored token)."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as true
    runs = [step.get("run", "") for step in workflow["jobs"]["build"]["steps"]]
    assert RELEASE_BUILD in runs and RELEASE_CHECK in runs
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1] == {"uses": "pypa/gh-action-pypi-publish@release/v1"}


@pytest.fixture(scope="module")
def release_dist(clone, tmp_path_factory) -> Path:
    """The sdist and wheel as .github/workflows/release.yml builds them, built once for the module."""
    dist = tmp_path_factory.mktemp("dist")
    clone.sh(f"{RELEASE_BUILD.replace('python', sys.executable, 1)} --outdir {dist} .")
    return dist


def test_release_workflow_builds_every_change_and_publishes_only_tags():
    """Issue 35: what a tag would publish is built, installed and its sdist's tests run on every
    push to main and pull request; only a version tag reaches the publish job."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert "pull_request" in workflow[True] and workflow[True]["push"]["branches"] == ["main"]
    assert workflow["jobs"]["publish"]["if"] == "startsWith(github.ref, 'refs/tags/v')"
    runs = "\n".join(step.get("run", "") for step in workflow["jobs"]["build"]["steps"])
    for test in SDIST_TESTS:
        assert test in runs, f"the release workflow does not run the sdist's {test}"
    assert "dist/*.whl" in runs and "alaya --version" in runs


def test_release_build_passes_twine_check_and_carries_package_data(clone, release_dist):
    """What .github/workflows/release.yml builds and checks before publishing (the wheel is built
    from the sdist, so a file missing from the sdist fails here too)."""
    dist = release_dist
    built = sorted(p.name for p in dist.iterdir())
    assert [n for n in built if n.endswith(".whl")] and [n for n in built if n.endswith(".tar.gz")], built
    clone.sh(RELEASE_CHECK.replace("python", sys.executable, 1).replace("dist/", f"{dist}/"), offline=True)
    wheel = zipfile.ZipFile(next(dist.glob("*.whl")))
    names = set(wheel.namelist())
    demo = {p.name for p in (REPO / "openclaw_alaya" / "demo").iterdir()}
    templates = {p.name for p in (REPO / "openclaw_alaya" / "templates").iterdir()}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("openclaw_alaya/demo/")} == demo
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("openclaw_alaya/templates/")} == templates
    assert "openclaw_alaya/safety/bip39-english.txt" in names
    # what `alaya openclaw install` links, and the skill and cron example beside it (issue 33)
    plugin = {n.removeprefix("openclaw_alaya/share/openclaw-alaya/") for n in names
              if n.startswith("openclaw_alaya/share/openclaw-alaya/")}
    assert {"openclaw.plugin.json", "package.json", "index.js", "lib/plugin.js", "lib/runtime.js",
            "skills/alaya/SKILL.md"} <= plugin and not [n for n in plugin if n.startswith("test/")], plugin
    assert {"openclaw_alaya/share/SKILL.md", "openclaw_alaya/share/cron.example.json"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "the MIT licence text is not in the wheel"


# The sdist's own tests run from the unpacked sdist (issue 35): fixtures from its conftest, builders
# from its helpers, the ranking set from its fixtures, the postgres server script beside them.
SDIST_SUPPORT = ["tests/conftest.py", "tests/helpers.py", "tests/pg_server.py", "tests/fixtures/ranking/questions.json",
                 "tests/plugins/alaya_test_plugin.py", "tests/e2e/conftest.py", "constraints.txt"]
SDIST_TESTS = ["tests/test_ranking_set.py", "tests/test_recall_words.py"]


def test_sdist_carries_its_tests_and_they_run(release_dist, tmp_path):
    """A packager's check: unpack the sdist, run a couple of its tests against the package it
    carries (its conftest's `memory` fixture, helpers.session_json, the ranking fixtures)."""
    import tarfile

    with tarfile.open(next(release_dist.glob("*.tar.gz"))) as sdist:
        sdist.extractall(tmp_path, filter="data")
    root = next(tmp_path.glob("openclaw_alaya-*"))
    missing = [name for name in SDIST_SUPPORT if not (root / name).is_file()]
    assert not missing, f"the sdist lacks what its tests need: {missing}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
    env.update(PYTHONPATH=str(root), ALAYA_SKIP_E2E="1")
    where = subprocess.run([sys.executable, "-c", "import openclaw_alaya; print(openclaw_alaya.__file__)"],
                           cwd=root, env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(root)), f"not the sdist's package: {where.stdout}{where.stderr}"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDIST_TESTS], cwd=root,
                       env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert p.returncode == 0 and " passed" in p.stdout, f"the sdist's tests failed:\n{p.stdout[-3000:]}{p.stderr[-2000:]}"


def _oldest_python() -> str | None:
    """A working python3.10 (the oldest `requires-python` admits), or None (a pyenv shim that
    names no installed version does not count)."""
    for candidate in [shutil.which("python3.10"), *sorted(map(str, Path.home().glob(".pyenv/versions/3.10*/bin/python")))]:
        if candidate and subprocess.run([candidate, "-c", "import venv"], capture_output=True).returncode == 0:
            return candidate
    return None


def test_oldest_supported_python_installs_and_remembers(clone, tmp_path):
    """`requires-python = ">=3.10"` is a promise: 3.11-only syntax (a possessive regex quantifier)
    once made every ingest on 3.10 fail. The wheel, without constraints.txt as the README says for
    3.10, into a 3.10 venv; then the demo is stored, distilled and recalled."""
    python = _oldest_python()
    if python is None:
        pytest.skip("no Python 3.10 on this machine")
    venv, data = tmp_path / "venv310", tmp_path / "data"
    clone.sh(f"{python} -m venv {venv} && {venv}/bin/pip install --quiet .")
    demo = REPO / "openclaw_alaya" / "demo"
    alaya = f"{venv}/bin/alaya --data-dir {data}"
    clone.sh(f"{alaya} init", offline=True)
    assert re.search(r"distilled [1-9]\d* cards", clone.sh(f"{alaya} ingest {demo} --distill", offline=True).stdout)
    assert "PgBouncer" in clone.sh(f'{alaya} recall "why did the billing service run out of connections?"',
                                   offline=True).stdout
