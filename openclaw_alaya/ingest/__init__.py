"""Sessions in: input formats (`formats.py`) and the repair of damaged input (`repair.py`), one
or many sessions per lock hold (`sessions.py`, `batch.py`), and recovery of the writes a killed
process left (`recovery.py`)."""
