"""The OpenClaw side of `alaya openclaw install | doctor` (issue 33): where the plugin this
package ships lies, the `openclaw` command, and the settings a working setup needs.

OpenClaw's config is read and written only through its own CLI (`openclaw config get|set`,
`openclaw plugins install`): its file may be JSON5 with includes and secrets, and its writer
keeps ownership rules this package must not second-guess.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AlayaError

PLUGIN_ID = "openclaw-alaya"
# The files the wheel carries under openclaw_alaya/share/ (setup.py copies them there); in a
# checkout or an editable install they are the repository's own.
SHARE = Path(__file__).resolve().parents[1] / "share"
CHECKOUT = Path(__file__).resolve().parents[2]
# `openclaw config get` and `plugins install` take 3-8 s on a busy 2-core machine; a hung one
# must not hang the install.
OPENCLAW_TIMEOUT_S = 120


def shared_path(name: str) -> Path:
    """A shipped file or folder: `openclaw-alaya` (the plugin), `SKILL.md`, `cron.example.json`."""
    packaged = SHARE / name
    if packaged.exists():
        return packaged
    checkout = CHECKOUT / ("hooks/openclaw-alaya" if name == "openclaw-alaya" else name)
    if checkout.exists():
        return checkout
    raise AlayaError(f"this install of alaya carries no {name} (expected {packaged})")


def alaya_command() -> list[str]:
    """The argv that runs this very alaya, for a gateway whose PATH may not have it: the venv's
    `alaya` script beside this interpreter, else the interpreter itself with `-m`."""
    script = Path(sys.executable).parent / "alaya"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "openclaw_alaya"]


class OpenClaw:
    """The `openclaw` command: found on PATH (or given), run with a timeout, JSON read back."""

    def __init__(self, command: str | None = None):
        found = shutil.which(command or "openclaw")
        if found is None:
            raise AlayaError(f"{command or 'openclaw'}: command not found; install OpenClaw "
                             "(https://docs.openclaw.ai/install) or pass --openclaw PATH")
        self.bin = found

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            p = subprocess.run([self.bin, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               timeout=OPENCLAW_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AlayaError(f"openclaw {' '.join(args[:3])} did not finish within {OPENCLAW_TIMEOUT_S} s") from None
        if check and p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()
            raise AlayaError(f"openclaw {' '.join(args[:3])} exited {p.returncode}: {tail[-1] if tail else 'no message'}")
        return p

    def json(self, *args: str) -> Any:
        out = self.run(*args).stdout
        try:
            return json.loads(out[out.index("{"):] if "{" in out else out)
        except ValueError:
            raise AlayaError(f"openclaw {' '.join(args[:3])} printed no JSON: {out.strip()[:200]}") from None

    def plugins_config(self) -> dict[str, Any]:
        p = self.run("config", "get", "plugins", "--json", check=False)
        try:
            value = json.loads(p.stdout) if p.returncode == 0 else {}
        except ValueError:
            value = {}
        return value if isinstance(value, dict) else {}


def lookup(tree: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted path under `plugins` (None where any part is missing)."""
    node: Any = tree
    for part in dotted.removeprefix("plugins.").split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


@dataclass(frozen=True)
class Setting:
    path: str
    value: Any
    why: str


def wanted_settings(data_dir: Path) -> list[Setting]:
    """Everything a working setup needs beyond the plugin's link, each with the reason."""
    entry = f"plugins.entries.{PLUGIN_ID}"
    return [
        Setting("plugins.slots.memory", PLUGIN_ID, "alaya holds the memory slot: its tools and search runtime answer"),
        Setting(f"{entry}.enabled", True, "the plugin loads"),
        Setting(f"{entry}.hooks.allowConversationAccess", True,
                "OpenClaw blocks before_prompt_build (injection) and agent_end (capture) for a non-bundled plugin without it"),
        Setting(f"{entry}.config.command", alaya_command(), "the gateway runs this alaya, whatever its PATH"),
        Setting(f"{entry}.config.dataDir", str(data_dir), "the gateway uses this data directory, whatever its HOME"),
        Setting("plugins.entries.memory-core.enabled", False,
                "memory-core's memory_search/memory_get would conflict with alaya's, and its `openclaw memory` "
                "would describe its own empty index"),
    ]
