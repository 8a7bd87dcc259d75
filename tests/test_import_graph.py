"""The package's shape (docs/architecture.md): no import cycle between modules and no import
that runs from a lower layer up to a higher one, counting imports inside functions and under
`TYPE_CHECKING`. No edge is allowed away: the plugin manager knows no plugin (the package top
names the built-in ones) and is handed down as `memory.hooks`, so nothing imports up to it.

Run as a script to print the figures: `python tests/test_import_graph.py [PACKAGE_DIR]` (another
checkout's package for comparison; its upward imports are counted only if every module fits
`LAYERS`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "openclaw_alaya"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# Top to bottom. A module belongs to the entry that names it, else to the one that names the
# nearest package above it (`store.fsutil` sits below `config`, the rest of `store` above it);
# `|` separates independent parts of one layer (they may not import each other).
LAYERS = [
    "__main__",
    "cli",
    "tools",
    "openclaw_alaya",  # the package itself: `from openclaw_alaya import Alaya`, __version__
    "default_plugin | redaction_plugin",
    "maintenance",
    "bridge",
    "engine",
    "ingest | recall | curate",
    "llm",
    "distill",
    "providers",
    "redact",
    "plugins",
    "memory",
    "store.postgres",  # the second backend (issue 34): nothing in store/ reaches into it
    "store",  # a backend is handed its settings: store may use config's types
    "config",
    "store.fsutil",  # atomic writes, config.json's among them
    "embedding | models | progress | hookspecs",
    "clock",  # the one "now" (`ALAYA_NOW`)
    "text | errors | safety",
]


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name (without the package prefix; the package itself as PACKAGE) → (file, is package)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts) or PACKAGE] = (path, is_package)
    return found


def imports() -> dict[str, set[str]]:
    """Module → the package modules it imports, anywhere in its body."""
    mods = modules()

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, (path, is_package) in mods.items():
        here = [] if name == PACKAGE else name.split(".")
        base_parts = here if is_package else here[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = base_parts[: len(base_parts) - (node.level - 1)] + ([node.module] if node.module else [])
                    absolute = ".".join([PACKAGE, *base])
                else:
                    absolute = node.module or ""
                targets = [f"{absolute}.{a.name}" for a in node.names] + [absolute]
                targets = [t for t in targets[:-1] if _strip(t) in mods] or [absolute]
            for target in targets:
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    found = known(_strip(target))
                    if found and found != name:
                        graph[name].add(found)
    return graph


def _strip(dotted: str) -> str:
    return dotted[len(PACKAGE) + 1:] if dotted.startswith(PACKAGE + ".") else dotted


def layer_of(module: str) -> tuple[int, str]:
    """(rank, part) of the most specific LAYERS entry that names the module or a package above it."""
    found = [(len(part), rank, part) for rank, layer in enumerate(LAYERS)
             for part in (p.strip() for p in layer.split("|"))
             if module == part or module.startswith(part + ".")]
    if not found:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    _length, rank, part = max(found)
    return rank, part


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports that go up a layer, or sideways between independent parts of one layer."""
    bad = []
    for src, targets in graph.items():
        src_rank, src_part = layer_of(src)
        for dst in targets:
            dst_rank, dst_part = layer_of(dst)
            if dst_rank < src_rank or (dst_rank == src_rank and dst_part != src_part):
                bad.append(f"{src} -> {dst}")
    return sorted(bad)


def test_no_import_cycle() -> None:
    assert cycles(imports()) == []


def test_no_upward_import() -> None:
    assert upward(imports()) == []


def test_only_the_engine_takes_the_process_plugin_manager() -> None:
    """Every other module calls the manager it is handed (`memory.hooks`): one that took the
    process's own would ignore the manager an `Alaya(..., hooks=)` was given."""
    takers = sorted(name for name, (path, _pkg) in modules().items()
                    if name not in ("plugins", "engine") and "get_plugin_manager" in path.read_text(encoding="utf-8"))
    assert takers == []


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_package_root_stays_small() -> None:
    root_modules = [m for m, (_p, is_package) in modules().items() if "." not in m and m != PACKAGE and not is_package]
    assert len(root_modules) <= 16, sorted(root_modules)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        ROOT = Path(sys.argv[1]).resolve()
    graph = imports()
    root_modules = [m for m, (_p, pkg) in modules().items() if "." not in m and m != PACKAGE and not pkg]
    print(f"modules: {len(graph)}, at the package root: {len(root_modules)}, imports: {sum(map(len, graph.values()))}")
    for cycle in cycles(graph):
        print(f"cycle of {len(cycle)}: {' '.join(cycle)}")
    try:
        for line in upward(graph):
            print(f"upward: {line}")
    except AssertionError as exc:
        print(f"upward imports not counted: {exc}")
