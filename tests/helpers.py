"""Small builders shared by the engine and CLI tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def session_json(session_id: str, turns: list[tuple[str, str]], *, agent_id: str | None = None,
                 started_at: str = "2026-03-01T10:00:00+00:00") -> bytes:
    """A session in the project's own JSON format; turns are (role, text) with ids t1, t2, …"""
    data = {
        "session_id": session_id,
        "started_at": started_at,
        "turns": [{"id": f"t{i}", "role": role, "content": text} for i, (role, text) in enumerate(turns, 1)],
    }
    if agent_id:
        data["agent_id"] = agent_id
    return json.dumps(data, ensure_ascii=False).encode()


def tree_digest(root: Path) -> str:
    """A fingerprint of every file's path and bytes (lock and holder note excluded)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name in {".lock", "lock-holder.json"}:
            continue
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def unpack_backup(archive: str | Path, into: Path) -> Path:
    """An `alaya backup` archive extracted into `into`: the data directory it holds."""
    import tarfile

    archive = Path(archive)
    assert archive.name.endswith(".tar.gz") and archive.is_file(), archive
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        tar.extractall(into, filter="tar")
    top = {n.split("/", 1)[0] for n in names}
    assert top == {archive.name.removesuffix(".tar.gz")}, top  # one folder, named like the archive
    return into / top.pop()
