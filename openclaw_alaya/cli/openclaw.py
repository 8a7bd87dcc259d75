"""`alaya openclaw install | doctor` (issue 33): one command to a working OpenClaw setup, and one
that checks a running setup end to end.

install links the plugin this package ships (openclaw_host.shared_path), takes the memory slot,
grants the hook access OpenClaw withholds from non-bundled plugins, points the plugin at this
alaya and data directory, and disables memory-core (whose tools would clash with alaya's),
saying each setting it changes and leaving alone what is already so: run twice, it changes
nothing the second time. doctor prints one line per check and exits 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..errors import AlayaError
from . import common
from .common import global_options, print_json
from .openclaw_host import PLUGIN_ID, OpenClaw, lookup, shared_path, wanted_settings

PROBE_TIMEOUT_S = 120


def add_commands(sub: Any, command: Any) -> None:
    openclaw = command("openclaw", _usage, "set up and check the OpenClaw plugin", json_flag=False)
    actions = openclaw.add_subparsers(title="actions", metavar="ACTION")
    for name, handler, help_text in (
            ("install", cmd_install, "install the shipped plugin into OpenClaw, take the memory slot and grant "
                                     "the hook access it needs (says each setting it changes)"),
            ("doctor", cmd_doctor, "check the OpenClaw setup end to end: plugin, slot, permissions, daemon, "
                                   "a search through OpenClaw")):
        action = actions.add_parser(name, parents=[global_options()], help=help_text, description=help_text)
        action.add_argument("--openclaw", metavar="PATH", help="the openclaw command (default: openclaw on PATH)")
        action.add_argument("--json", action="store_true", help="print JSON for programs and agents")
        action.set_defaults(handler=handler)


def _usage(args: argparse.Namespace) -> int:
    print("usage: alaya openclaw {install,doctor}", file=sys.stderr)
    return 2


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.json:
        print(line, flush=True)


def cmd_install(args: argparse.Namespace) -> int:
    host = OpenClaw(args.openclaw)
    memory = common.memory(args.data_dir)
    data_dir = memory.dirs.root
    initialised = memory.dirs.config.exists()
    memory.init()
    _say(args, f"data directory {data_dir}: {'ready' if initialised else 'initialised'}")
    plugin = shared_path(PLUGIN_ID)
    before = host.plugins_config()
    earlier = _other_links(before, plugin)
    if earlier:  # two links of one plugin id: OpenClaw refuses the second
        kept = [p for p in lookup(before, "plugins.load.paths") if p not in earlier]
        host.run("config", "set", "plugins.load.paths", json.dumps(kept), "--strict-json")
        _say(args, f"unlinked the earlier copy of {PLUGIN_ID} at {', '.join(earlier)}")
    # Always (re)linked: a new version's manifest needs its capabilities accepted again.
    host.run("plugins", "install", "-l", str(plugin), "--force", "--accept-capabilities")
    _say(args, f"plugin {PLUGIN_ID} linked from {plugin}")
    after = host.plugins_config()  # `plugins install` itself enables the plugin and takes the slot
    settings = wanted_settings(data_dir)
    for s in settings:
        state = "already" if lookup(before, s.path) == s.value else "set"
        _say(args, f"{state:7} {s.path} = {json.dumps(s.value)}  ({s.why})")
    changes = [s for s in settings if lookup(after, s.path) != s.value]
    if changes:
        host.run("config", "set", "--batch-json", json.dumps([{"path": s.path, "value": s.value} for s in changes]))
    _say(args, "done: the next OpenClaw session is injected and captured (a running gateway picks it up; "
               "`alaya openclaw doctor` checks it)")
    if args.json:
        print_json({"data_dir": str(data_dir), "plugin": str(plugin),
                    "changed": [s.path for s in settings if lookup(before, s.path) != s.value]})
    return 0


def _other_links(plugins: dict[str, Any], plugin: Path) -> list[str]:
    """Linked paths other than `plugin` that hold this plugin (a checkout's, an older install's)."""
    out = []
    for path in lookup(plugins, "plugins.load.paths") or []:
        try:
            same_id = json.loads((Path(path) / "openclaw.plugin.json").read_text(encoding="utf-8")).get("id") == PLUGIN_ID
        except (OSError, ValueError, AttributeError):
            same_id = False
        if same_id and Path(path).resolve() != plugin.resolve():
            out.append(path)
    return out


def _checks(host: OpenClaw, data_dir: Any) -> list[tuple[str, bool | None, str]]:
    """(name, ok — None for a warning, detail) per check, in order."""
    from .wire import current, ping

    out: list[tuple[str, bool | None, str]] = []
    version = host.run("--version", check=False).stdout.strip().splitlines()
    out.append(("openclaw", True, f"{host.bin} ({version[-1] if version else 'version unknown'})"))
    plugins = host.plugins_config()
    settings = {s.path: s for s in wanted_settings(data_dir)}
    entry = f"plugins.entries.{PLUGIN_ID}"
    try:
        info = host.json("plugins", "inspect", PLUGIN_ID, "--runtime", "--json")
    except AlayaError as exc:
        info = {"plugin": {"status": "missing", "error": str(exc)}}
    meta = info.get("plugin") or {}
    loaded = meta.get("status") == "loaded" and meta.get("activated") is True and meta.get("enabled") is True
    out.append(("plugin", loaded, f"status {meta.get('status')}, enabled {meta.get('enabled')}, activated "
                                  f"{meta.get('activated')}" + (f": {meta['error']}" if meta.get("error") else "")))
    slot = lookup(plugins, "plugins.slots.memory")
    out.append(("memory slot", slot == PLUGIN_ID, f"plugins.slots.memory = {json.dumps(slot)}"))
    messages = [str(d.get("message", "")) for d in info.get("diagnostics") or []]
    blocked = [m for m in messages if "blocked" in m]
    access = lookup(plugins, f"{entry}.hooks.allowConversationAccess") is True and not blocked
    out.append(("hook access", access, blocked[0] if blocked else
                f"{entry}.hooks.allowConversationAccess = {json.dumps(lookup(plugins, f'{entry}.hooks.allowConversationAccess'))}"))
    core = lookup(plugins, "plugins.entries.memory-core.enabled")
    out.append(("no tool conflict", core is False, "memory-core disabled" if core is False else
                f"memory-core enabled: {settings['plugins.entries.memory-core.enabled'].why}"))
    command = lookup(plugins, f"{entry}.config.command")
    out.append(("alaya command", command is not None, json.dumps(command)))
    status = ping(data_dir)
    out.append(("daemon", True if current(status) else None,
                f"pid {status['pid']} serving {data_dir}" if current(status) else
                f"none current for {data_dir} (the plugin starts it with the gateway or the first turn)"))
    out.append(_round_trip(host))
    return out


def _round_trip(host: OpenClaw) -> tuple[str, bool, str]:
    """A search through OpenClaw (`openclaw alaya search`): plugin → alaya → back."""
    probe = "what do I prefer"
    try:
        p = subprocess.run([host.bin, "alaya", "search", probe, "--json"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return ("search round trip", False, f"`openclaw alaya search` did not answer within {PROBE_TIMEOUT_S} s")
    out = p.stdout
    try:
        results = json.loads(out[out.index("{"):])["results"]
    except (ValueError, KeyError, TypeError):
        tail = (p.stderr or out).strip().splitlines()
        return ("search round trip", False, f"exit {p.returncode}: {tail[-1] if tail else 'no output'}")
    return ("search round trip", p.returncode == 0, f"`openclaw alaya search {probe!r}`: {len(results)} hit(s)")


def cmd_doctor(args: argparse.Namespace) -> int:
    host = OpenClaw(args.openclaw)
    checks = _checks(host, common.memory(args.data_dir).dirs.root)
    if args.json:
        print_json([{"check": name, "ok": ok, "detail": detail} for name, ok, detail in checks])
    else:
        for name, ok, detail in checks:
            print(f"{'ok' if ok else ('warn' if ok is None else 'FAIL'):5} {name}: {detail}")
        print("to fix: run `alaya openclaw install`" if any(ok is False for _, ok, _ in checks) else "all checks passed")
    return 1 if any(ok is False for _, ok, _ in checks) else 0
