import hashlib
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from openclaw_alaya.embedding import Embedder, HashEmbedder


def cos(a, b):
    return float(np.dot(a, b))


def test_protocol_id_and_dim():
    e = HashEmbedder()
    assert isinstance(e, Embedder)
    assert e.dim == 1024 and e.id == "hash-v1-1024"
    assert HashEmbedder(256).id == "hash-v1-256"
    custom = HashEmbedder(1024, ngram_max=4)
    assert custom.id.startswith("hash-v1-1024-") and custom.id != e.id
    assert e.embed(["x y"]).shape == (1, 1024)
    with pytest.raises(ValueError):
        HashEmbedder(0)


def test_shape_dtype_normalised():
    v = HashEmbedder(512).embed(["Caroline went to a support group", "Melanie paints sunrises", "数据库"])
    assert v.shape == (3, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_and_stopword_only_give_zero_vectors():
    v = HashEmbedder().embed(["", "the of and", "real words"])
    assert not np.isnan(v).any()
    assert np.all(v[0] == 0) and np.all(v[1] == 0)
    assert abs(np.linalg.norm(v[2]) - 1) < 1e-5
    assert HashEmbedder().embed([]).shape == (0, 1024)


def test_deterministic_across_instances_and_processes():
    texts = ["I went to a LGBTQ support group yesterday", "我们使用嵌入式图数据库"]
    a = HashEmbedder().embed(texts)
    b = HashEmbedder().embed(texts)
    assert np.array_equal(a, b)
    # another interpreter (different hash seed) gives the same bytes
    code = (
        "import sys, numpy as np; from openclaw_alaya.embedding import HashEmbedder;"
        f"sys.stdout.write(HashEmbedder().embed({texts!r}).tobytes().hex())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""},
                         cwd=Path(__file__).resolve().parent.parent).stdout
    assert bytes.fromhex(out) == a.tobytes()


def test_batch_equals_single():
    e = HashEmbedder()
    texts = ["alpha beta", "gamma delta delta", ""]
    batch = e.embed(texts)
    for i, t in enumerate(texts):
        assert np.allclose(batch[i], e.embed([t])[0])


def test_related_text_is_closer():
    e = HashEmbedder()
    q, rel, unrel = e.embed(["support group for LGBTQ people", "I went to a LGBTQ support group", "We painted a sunrise by the lake"])
    assert cos(q, rel) > cos(q, unrel) + 0.2
    # inflections meet through char n-grams
    a, b, c = e.embed(["painting", "painter", "swimming"])
    assert cos(a, b) > cos(a, c)


def test_cjk_bigrams_match():
    e = HashEmbedder()
    q, doc, other = e.embed(["数据库", "我们使用嵌入式图数据库来存储代理记忆", "今天天气很好"])
    assert cos(q, doc) > 0.2
    assert cos(q, doc) > cos(q, other) + 0.2


def test_speed():
    texts = [f"Message {i}: I went hiking near lake {i % 97} with my kids yesterday, it was great" for i in range(5000)]
    e = HashEmbedder()
    t = time.perf_counter()
    e.embed(texts)
    rate = len(texts) / (time.perf_counter() - t)
    assert rate > 2000, rate  # ~10k/s measured on 2 cores; loose bound against CI noise


def test_a_huge_token_contributes_a_bounded_number_of_features():
    """A pasted 200k-character hex dump is one token; its character n-grams must not scale with it."""
    huge = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(3000))  # 192k chars, no repeats
    v = HashEmbedder(4096).embed([huge])[0]
    assert 0 < np.count_nonzero(v) <= 3 * 70  # n-grams of 3..5 over a bounded prefix, plus the word
