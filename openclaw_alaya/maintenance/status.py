"""What `alaya status` adds to the engine's counts (seed §4.9): per-layer counts, sizes on
disk, cards per tier, a temperature histogram, and the access log not yet folded in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import access
from .temperature import histogram

if TYPE_CHECKING:
    from ..engine import Alaya


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def details(memory: "Alaya") -> dict[str, Any]:
    with memory.lock.read("status (tiers)"):
        with memory.graph(write=False) as graph:
            tiers = dict(graph.query("MATCH (c:Card) RETURN c.tier, count(*)"))
            temps = [r[0] for r in graph.query("MATCH (c:Card) RETURN c.temperature") if r[0] is not None]
    root = memory.dirs.root
    raw_sessions = memory.raw.session_ids()
    contexts = len(list(memory.raw.contexts_dir.glob("*.json"))) if memory.raw.contexts_dir.is_dir() else 0
    access_lines = 0
    for log in [memory.dirs.access_log, *access.pending(memory)]:
        if log.exists():
            with open(log, "rb") as handle:
                access_lines += sum(1 for _ in handle)
    layers = {
        "L3": {"sessions": len(raw_sessions), "contexts": contexts, "bytes": size_of(memory.dirs.raw)},
        "L2": {"bytes": size_of(memory.dirs.graph) + size_of(root / "graph.kuzu.wal")},
        "L1": {"bytes": size_of(memory.dirs.lancedb)},
        "state": {"bytes": size_of(memory.dirs.state)},
    }
    return {
        "tiers": {t: int(tiers.get(t, 0)) for t in ("HOT", "WARM", "COLD")},
        "temperature_histogram": histogram(temps),
        "access_log_unfolded": access_lines,
        "layers": layers,
        "bytes_total": size_of(root),
    }


def render(status: dict[str, Any]) -> str:
    """Plain `key: value` lines; nested parts on one line each."""
    lines = []
    for key, value in status.items():
        if key == "temperature_histogram":
            bars = " ".join(f"{b['from']:.1f}:{b['cards']}" for b in value)
            lines.append(f"temperature: {bars}")
        elif key == "layers":
            for layer, info in value.items():
                lines.append(f"{layer}: " + ", ".join(f"{k} {_human(v) if k == 'bytes' else v}" for k, v in info.items()))
        elif key == "tiers":
            lines.append("tiers: " + ", ".join(f"{t} {n}" for t, n in value.items()))
        elif key == "bytes_total":
            lines.append(f"size: {_human(value)}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
