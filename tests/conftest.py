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


@pytest.fixture
def memory(tmp_path):
    """An initialised data directory on real Kuzu and LanceDB files."""
    from openclaw_alaya import Alaya

    mem = Alaya(tmp_path / "data")
    mem.init()
    return mem
