"""`alaya openclaw install` against a stand-in `openclaw` (issue 33): each setting said, applied
once, nothing changed the second time, an earlier link of the plugin replaced, and a one-line
error when there is no `openclaw`. The real OpenClaw run is tests/e2e/test_openclaw_install.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from openclaw_alaya.cli.openclaw_host import PLUGIN_ID, shared_path

# A stand-in `openclaw` keeping its `plugins` config in $FAKE_OC_STATE; every call is logged.
FAKE_OPENCLAW = r'''#!PYTHON
import json, os, sys
state = os.environ["FAKE_OC_STATE"]
args = sys.argv[1:]
with open(state + ".log", "a") as log:
    log.write(json.dumps(args) + "\n")
cfg = json.load(open(state)) if os.path.exists(state) else {}
def put(path, value):
    node = cfg
    parts = path.removeprefix("plugins.").split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value
if args[:3] == ["config", "get", "plugins"]:
    print(json.dumps(cfg))
elif args[:3] == ["config", "set", "--batch-json"]:
    for item in json.loads(args[3]):
        put(item["path"], item["value"])
elif args[:2] == ["config", "set"]:
    put(args[2], json.loads(args[3]))
elif args[:3] == ["plugins", "install", "-l"]:
    paths = cfg.setdefault("load", {}).setdefault("paths", [])
    if args[3] not in paths:
        paths.append(args[3])
    put("plugins.entries.openclaw-alaya.enabled", True)
    put("plugins.slots.memory", "openclaw-alaya")
json.dump(cfg, open(state, "w"))
'''


def _setup(tmp_path: Path) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "openclaw"
    fake.write_text(FAKE_OPENCLAW.replace("PYTHON", sys.executable))
    fake.chmod(0o755)
    state = tmp_path / "oc.json"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_OC_STATE": str(state),
           "ALAYA_HOME": str(tmp_path / "alaya"), "ALAYA_NO_SERVE": "1"}
    return env, state


def _install(env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "openclaw", "install", *extra], env=env,
                          capture_output=True, text=True, timeout=120)


def test_install_sets_each_setting_once_and_says_so(tmp_path):
    env, state = _setup(tmp_path)
    first = _install(env)
    assert first.returncode == 0, first.stderr
    assert "data directory" in first.stdout and "initialised" in first.stdout
    assert (tmp_path / "alaya" / "config.json").is_file()
    entry = f"plugins.entries.{PLUGIN_ID}"
    assert f"set     {entry}.hooks.allowConversationAccess = true" in first.stdout
    assert "set     plugins.entries.memory-core.enabled = false" in first.stdout
    # the slot and `enabled` were already taken by `plugins install` itself: not set again
    cfg = json.loads(state.read_text())
    assert cfg["slots"]["memory"] == PLUGIN_ID
    assert cfg["load"]["paths"] == [str(shared_path(PLUGIN_ID))]
    assert cfg["entries"][PLUGIN_ID]["hooks"]["allowConversationAccess"] is True
    assert cfg["entries"][PLUGIN_ID]["config"]["dataDir"] == str(tmp_path / "alaya")
    assert cfg["entries"]["memory-core"]["enabled"] is False
    batches = [json.loads(line) for line in Path(f"{state}.log").read_text().splitlines()]
    batches = [json.loads(a[3]) for a in batches if a[:3] == ["config", "set", "--batch-json"]]
    assert len(batches) == 1 and {i["path"] for i in batches[0]} == {
        f"{entry}.hooks.allowConversationAccess", f"{entry}.config.command", f"{entry}.config.dataDir",
        "plugins.entries.memory-core.enabled"}

    again = _install(env, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changed"] == []
    calls = [json.loads(line) for line in Path(f"{state}.log").read_text().splitlines()]
    assert sum(a[:3] == ["config", "set", "--batch-json"] for a in calls) == 1, "the second install set something"


def test_install_replaces_an_earlier_link_of_the_plugin(tmp_path):
    env, state = _setup(tmp_path)
    old = tmp_path / "old-checkout" / "hooks" / "openclaw-alaya"
    old.mkdir(parents=True)
    (old / "openclaw.plugin.json").write_text(json.dumps({"id": PLUGIN_ID}))
    state.write_text(json.dumps({"load": {"paths": [str(old), "/elsewhere/other-plugin"]}}))
    res = _install(env)
    assert res.returncode == 0, res.stderr
    assert f"unlinked the earlier copy of {PLUGIN_ID} at {old}" in res.stdout
    assert json.loads(state.read_text())["load"]["paths"] == ["/elsewhere/other-plugin", str(shared_path(PLUGIN_ID))]


def test_install_without_openclaw_is_one_line(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "ALAYA_HOME": str(tmp_path / "alaya")}
    res = _install(env)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "openclaw: command not found" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
