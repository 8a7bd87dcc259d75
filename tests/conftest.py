from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def memory(tmp_path):
    """An initialised data directory on real Kuzu and LanceDB files."""
    from openclaw_alaya import Alaya

    mem = Alaya(tmp_path / "data")
    mem.init()
    return mem
