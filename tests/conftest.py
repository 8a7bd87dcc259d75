from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# A hook call starts a daemon when none runs (cli/client.py, autostart). Tests that are not
# about the daemon run in process, as before, and leave no daemon behind; test_serve.py and
# test_hook_tools.py's daemon tests take this away for their own calls.
os.environ["ALAYA_NO_SERVE"] = "1"


# Backends the parametrized suite runs on unless ALAYA_TEST_BACKENDS names others
# (`embedded,postgres`): postgres lacks rebuild, reembed, backup and scrub so far (issue 34).
_NOT_BY_DEFAULT = {"postgres"}


def _backend_names() -> list[str]:
    """The registered storage backends the `backend` fixture runs on."""
    from openclaw_alaya.plugins import get_plugin_manager, registry

    registered = sorted(registry("register_stores", get_plugin_manager()))
    chosen = [n.strip() for n in os.environ.get("ALAYA_TEST_BACKENDS", "").split(",") if n.strip()]
    return [n for n in registered if n in chosen] if chosen else [n for n in registered if n not in _NOT_BY_DEFAULT]


def pytest_configure(config):
    config.addinivalue_line("markers", "embedded_only: a `memory` test of the embedded backend's files or "
                                       "snapshot, skipped on the others (issue 34)")


@pytest.fixture(params=_backend_names())
def backend(request) -> str:
    """The name of a registered storage backend: a test using it runs once per backend."""
    return request.param


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL for this test process (tests/pg_server.py), started on first use. A
    machine that cannot run one skips its tests, unless ALAYA_REQUIRE_POSTGRES=1 (scripts/test.sh)."""
    import pg_server as server

    try:
        running = server.start()
    except server.Unavailable as exc:
        if os.environ.get("ALAYA_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL did not start and ALAYA_REQUIRE_POSTGRES=1: {exc}")
        pytest.skip(f"PostgreSQL cannot start here: {exc}")
    yield running
    running.stop()


@pytest.fixture
def pg_url(pg_server, monkeypatch):
    """A new empty database on the test server, as ALAYA_DATABASE_URL."""
    url = pg_server.create_database()
    monkeypatch.setenv("ALAYA_DATABASE_URL", url)
    return url


@pytest.fixture
def memory_on_backend(tmp_path, backend, request):
    """An initialised memory on `backend` (`storage.backend` in its config; postgres: a new
    database on the test server)."""
    from openclaw_alaya import Alaya
    from openclaw_alaya.config import Config

    if backend != "embedded" and request.node.get_closest_marker("embedded_only"):
        pytest.skip("about the embedded backend's own files or in-memory copy")
    if backend == "postgres":
        request.getfixturevalue("pg_url")

    mem = Alaya(tmp_path / "data", config=Config.model_validate({"storage": {"backend": backend}}))
    mem.init()
    return mem


@pytest.fixture
def memory(memory_on_backend):
    """An initialised data directory, on each registered backend in turn (embedded: real Kuzu
    and LanceDB files)."""
    return memory_on_backend


# Longest test files first (issue 35): scripts/test.sh hands whole files to its workers
# (--dist loadfile, --no-loadscope-reorder keeps this order), so a long file started last is
# the run's tail: the chaos run (~4 min) and the OpenClaw files began after the short ones.
# tests/file_seconds.json holds each file's measured seconds (scripts/file-seconds.py makes it
# from a run's JUnit XML); a file not in it counts as DEFAULT_FILE_SECONDS.
DEFAULT_FILE_SECONDS = 10.0


def pytest_collection_modifyitems(config, items):
    import json

    measured = json.loads((Path(__file__).parent / "file_seconds.json").read_text(encoding="utf-8"))
    rank = {item: -measured.get(item.nodeid.split("::", 1)[0], DEFAULT_FILE_SECONDS) for item in items}
    items.sort(key=rank.__getitem__)  # stable: a file's own tests keep their order


# A progress line a minute (issue 35): the dots' percentage shows only at the end of each row
# of 72, which took minutes while the long files ran; CI logs show this line as it comes.
HEARTBEAT_SECONDS = float(os.environ.get("ALAYA_TEST_HEARTBEAT") or 60)
_progress: dict = {"done": 0, "failed": 0, "started": 0.0, "said": 0.0, "terminal": None}


def pytest_sessionstart(session):
    import time

    _progress["started"] = _progress["said"] = time.monotonic()
    _progress["terminal"] = session.config.pluginmanager.get_plugin("terminalreporter")


def pytest_runtest_logreport(report):
    import time

    if os.environ.get("PYTEST_XDIST_WORKER") or not (report.when == "call" or report.failed or report.skipped):
        return
    _progress["done"] += report.when == "call" or report.when == "setup"
    _progress["failed"] += report.failed
    now = time.monotonic()
    if now - _progress["said"] >= HEARTBEAT_SECONDS and _progress["terminal"] is not None:
        _progress["said"] = now
        minutes, seconds = divmod(int(now - _progress["started"]), 60)
        _progress["terminal"].ensure_newline()
        _progress["terminal"].write_line(f"[{minutes}:{seconds:02d}] {_progress['done']} tests done, "
                                         f"{_progress['failed']} failed")
