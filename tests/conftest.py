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


def _backend_names() -> list[str]:
    """Every storage backend registered through `register_stores` (today: embedded)."""
    from openclaw_alaya.plugins import get_plugin_manager, registry

    return sorted(registry("register_stores", get_plugin_manager()))


@pytest.fixture(params=_backend_names())
def backend(request) -> str:
    """The name of a registered storage backend: a test using it runs once per backend."""
    return request.param


@pytest.fixture
def memory_on_backend(tmp_path, backend):
    """An initialised memory on `backend` (`storage.backend` in its config)."""
    from openclaw_alaya import Alaya
    from openclaw_alaya.config import Config

    mem = Alaya(tmp_path / "data", config=Config.model_validate({"storage": {"backend": backend}}))
    mem.init()
    return mem


@pytest.fixture
def memory(memory_on_backend):
    """An initialised data directory, on each registered backend in turn (embedded: real Kuzu
    and LanceDB files)."""
    return memory_on_backend
