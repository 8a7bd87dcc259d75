"""The data directory and its three layers: raw sessions (L3, `raw.py`), the card graph (L2,
`graph.py`, with the in-memory `snapshot.py`), the vector and full-text index (L1,
`vectors.py`, with `vector_cache.py` and `index_meta.py`), and what keeps them safe together:
the lock (`lock.py`), the write-ahead journal (`journal.py`) and atomic file writes (`fsutil.py`)."""
