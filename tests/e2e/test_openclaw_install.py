"""Issue 33, must-show 3: from a fresh venv holding the built wheel and a fresh OpenClaw home, one
command (`alaya openclaw install`), and then, with no other config step, the first session is
injected and captured; `openclaw memory search` returns alaya's hits; OpenClaw's doctor reports
no tool-name conflict; `alaya openclaw doctor` passes; a second install changes nothing.

The wheel is built from a copy of the checkout (as test_install.py does) and installed with the
pinned constraints; pip's cache makes that offline after the first run. Everything OpenClaw does
runs against the stub model on 127.0.0.1."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from openclaw_e2e_support import OpenClawHome, StubModel, find_user_message, wait_for
from test_install import _copy_checkout

from openclaw_alaya.cli.openclaw_host import PLUGIN_ID

pytestmark = pytest.mark.e2e

SEED = ("Please remember: I always use pnpm, never npm, for JavaScript projects.", "Noted: pnpm, not npm.")
FIRST_PROMPT = "Which package manager should I use for the new JavaScript project?"
STATED = "Please remember this for later: my staging cluster is called wren-8."


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory) -> Path:
    """A fresh venv with only the wheel built from this checkout (and its dependencies)."""
    root = tmp_path_factory.mktemp("wheel")
    clone, dist, venv = root / "clone", root / "dist", root / "venv"
    clone.mkdir()
    _copy_checkout(clone)
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(clone)])
    run([sys.executable, "-m", "venv", str(venv)])
    wheel = next(dist.glob("*.whl"))
    run([str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(clone / "constraints.txt"), str(wheel)])
    return venv


def run(argv: list[str], env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Never with the test's PYTHONPATH (the checkout): what runs is the wheel."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONPATH"}
    kw.setdefault("input", "")  # never the test's own stdin
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env, **kw)
    assert p.returncode == 0, f"{argv} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    return p


@pytest.fixture(scope="module")
def installed(openclaw_install, wheel_venv, tmp_path_factory):
    """A fresh OpenClaw home after `alaya openclaw install` from the wheel's venv, a seeded memory."""
    node_bin, openclaw_bin = openclaw_install
    home = OpenClawHome(root=tmp_path_factory.mktemp("oc-install"), node_bin=node_bin, openclaw_bin=openclaw_bin,
                        stub=StubModel().start())
    home.env.pop("PYTHONPATH", None)  # OpenClaw's alaya is the wheel's, not the checkout's
    home.write_base_config()
    home.alaya_bin = wheel_venv / "bin" / "alaya"
    home.install = run([str(home.alaya_bin), "openclaw", "install"], env=home.env)
    exchange = [{"role": "user", "content": SEED[0]}, {"role": "assistant", "content": SEED[1]}]
    run([str(home.alaya_bin), "ingest", "--stdin", "--agent", "main", "--distill"], input=json.dumps(exchange),
        env=home.env)
    yield home
    subprocess.run([str(home.alaya_bin), "serve", "stop"], env=home.env, capture_output=True, timeout=60)
    home.stub.stop()


def test_install_says_each_setting_and_uses_the_wheels_plugin(installed, wheel_venv):
    out = installed.install.stdout
    entry = f"plugins.entries.{PLUGIN_ID}"
    for line in (f"set     {entry}.hooks.allowConversationAccess = true",
                 "set     plugins.entries.memory-core.enabled = false",
                 f'set     {entry}.config.command = ["{wheel_venv}/bin/alaya"]'):
        assert line in out, out
    cfg = installed.read_config()["plugins"]
    assert cfg["slots"]["memory"] == PLUGIN_ID
    [path] = cfg["load"]["paths"]
    assert "site-packages/openclaw_alaya/share/openclaw-alaya" in path and Path(path, "lib", "runtime.js").is_file()
    assert cfg["entries"][PLUGIN_ID]["config"]["dataDir"] == str(installed.home / ".alaya")


def test_first_session_is_injected_and_captured(installed):
    """No config step after the install: the first request carries the seeded preference, and
    what that session states is recallable afterwards."""
    res = installed.local_turn("first", f"{STATED} {FIRST_PROMPT}", timeout=300)
    assert res.returncode == 0, res.describe()
    body = installed.stub.request_for(FIRST_PROMPT)
    assert body is not None, "no model request for the first prompt"
    text = find_user_message(body, FIRST_PROMPT)
    assert "<alaya-memory" in text and "pnpm" in text[: text.index(FIRST_PROMPT)], text[:3000]

    def captured() -> bool:
        p = subprocess.run([str(installed.alaya_bin), "recall", "staging cluster", "--json"], env=installed.env,
                           capture_output=True, text=True, timeout=120)
        return p.returncode == 0 and "wren-8" in p.stdout

    assert wait_for(captured, 90, interval=3), "the first session was not captured"


def test_openclaw_memory_search_and_status_answer_from_alaya(installed):
    res = installed.run("memory", "search", "pnpm", "--json", timeout=300)
    out = res.stdout
    results = json.loads(out[out.index("{"):])["results"]
    assert results and results[0]["path"].startswith("alaya:card-") and "pnpm" in results[0]["snippet"], out
    status = installed.run("memory", "status", timeout=300).stdout
    assert "Memory (alaya)" in status and str(installed.home / ".alaya") in status, status
    own = installed.run("alaya", "search", "pnpm", timeout=300).stdout
    assert "alaya:card-" in own and "pnpm" in own, own


def test_openclaw_doctor_shows_no_tool_conflict(installed):
    res = installed.run("doctor", "--json", timeout=300)
    assert "tool name conflict" not in res.stdout + res.stderr, res.describe()


def test_alaya_doctor_passes_and_a_second_install_changes_nothing(installed):
    doctor = run([str(installed.alaya_bin), "openclaw", "doctor"], env=installed.env).stdout
    for check in ("plugin", "memory slot", "hook access", "no tool conflict", "search round trip"):
        assert f"ok    {check}:" in doctor, doctor
    again = run([str(installed.alaya_bin), "openclaw", "install", "--json"], env=installed.env).stdout
    assert json.loads(again[again.index("{"):])["changed"] == []
