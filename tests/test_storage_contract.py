"""The storage seam (issue 29): no Cypher text and no kuzu/lancedb/lance/pyarrow import outside
store/embedded/, and the embedded backend's classes offer every member of their ports with a
compatible signature. Nothing is allowed away: a module named here must move its storage code."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Protocol

import pytest

from openclaw_alaya.store.embedded.backend import EmbeddedBackend
from openclaw_alaya.store.embedded.graph import GraphStore
from openclaw_alaya.store.embedded.snapshot import GraphSnapshot, SnapshotKeeper
from openclaw_alaya.store.embedded.vector_cache import VectorCache
from openclaw_alaya.store.embedded.vectors import VectorStore
from openclaw_alaya.store.lock import StoreLock
from openclaw_alaya.store.ports.backend import Backend
from openclaw_alaya.store.ports.coordinator import Coordinator
from openclaw_alaya.store.ports.graph import CardGraph, GraphReads, GraphViews
from openclaw_alaya.store.ports.index import CardIndex, VectorSearch
from openclaw_alaya.store.ports.raw import RawSessions
from openclaw_alaya.store.raw import RawStore

PACKAGE = Path(__file__).resolve().parents[1] / "openclaw_alaya"
EMBEDDED = PACKAGE / "store" / "embedded"
CYPHER = re.compile(r"\b(MATCH|MERGE|UNWIND|DETACH DELETE|CREATE \(|RETURN)\b")
ENGINES = {"kuzu", "lancedb", "lance", "pyarrow"}


def _outside_embedded() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if EMBEDDED not in p.parents)


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """String literals, docstrings left out (prose may name a Cypher keyword)."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_cypher_outside_the_embedded_backend():
    found = [f"{p.relative_to(PACKAGE)}:{n.lineno}: {n.value.strip()[:60]!r}"
             for p in _outside_embedded() for n in _strings(ast.parse(p.read_text())) if CYPHER.search(n.value)]
    assert not found, "Cypher outside store/embedded/:\n" + "\n".join(found)


def test_no_storage_engine_import_outside_the_embedded_backend():
    found = []
    for path in _outside_embedded():
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in ENGINES]
    assert not found, "storage engines imported outside store/embedded/:\n" + "\n".join(found)


def _members(port: type) -> dict[str, object]:
    """A protocol's own and inherited members (methods, properties, attributes)."""
    out: dict[str, object] = {}
    for base in reversed(port.__mro__):
        if base is object or base is Protocol or not getattr(base, "_is_protocol", False):
            continue
        out.update({k: v for k, v in vars(base).items() if not k.startswith("_") or k in {"__enter__", "__exit__"}})
        out.update(dict.fromkeys(getattr(base, "__annotations__", {}), None))
    return out


def _compatible(wanted: inspect.Signature, given: inspect.Signature) -> bool:
    """Every parameter the port names is there, of the same kind; what the implementation adds has a default."""
    have = given.parameters
    for name, param in wanted.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name not in have or have[name].kind != param.kind:
            return False
        if param.default is not param.empty and have[name].default is param.empty:
            return False
    extra = [p for n, p in have.items() if n not in wanted.parameters and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return all(p.default is not p.empty for p in extra)


@pytest.mark.parametrize("port, impl", [
    (Backend, EmbeddedBackend), (CardGraph, GraphStore), (GraphReads, GraphSnapshot), (GraphViews, SnapshotKeeper),
    (CardIndex, VectorStore), (VectorSearch, VectorCache), (RawSessions, RawStore), (Coordinator, StoreLock),
], ids=lambda x: x.__name__)
def test_the_embedded_classes_satisfy_their_ports(port, impl):
    wrong = []
    for name, member in _members(port).items():
        if member is None:  # an attribute: on the class, or set by its __init__
            if not hasattr(impl, name) and not re.search(rf"self\.{name}\s*[:=]", inspect.getsource(impl.__init__)):
                wrong.append(f"{name}: missing")
            continue
        given = inspect.getattr_static(impl, name, None)
        if given is None:
            wrong.append(f"{name}: missing")
            continue
        if isinstance(member, property) or isinstance(given, property) or not callable(member):
            continue  # a property or a cached one: present is enough
        if callable(given) and not _compatible(inspect.signature(member), inspect.signature(given)):
            wrong.append(f"{name}: {inspect.signature(given)} does not fit {inspect.signature(member)}")
    assert not wrong, f"{impl.__name__} against {port.__name__}:\n" + "\n".join(wrong)


def test_storage_backend_in_config_picks_the_backend(tmp_path, backend):
    from openclaw_alaya import Alaya
    from openclaw_alaya.config import Config
    from openclaw_alaya.errors import ConfigError

    chosen = Alaya(tmp_path / "a", config=Config.model_validate({"storage": {"backend": backend}}))
    assert chosen.storage.name == backend
    unknown = Alaya(tmp_path / "b", config=Config.model_validate({"storage": {"backend": "nowhere"}}))
    with pytest.raises(ConfigError, match="storage.backend: no backend 'nowhere'"):
        unknown.storage  # noqa: B018 - opening it is the check
