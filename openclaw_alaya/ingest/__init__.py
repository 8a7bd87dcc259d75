"""Sessions in: input formats (`formats.py`), one or many sessions per lock hold
(`sessions.py`, `batch.py`), and recovery of the writes a killed process left (`recovery.py`)."""
