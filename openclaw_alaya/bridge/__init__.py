"""The OpenClaw side of the engine: capture at a session's end (`capture.py`), the text injected
at its start (`inject.py`) and the integrated summary both use (`summary.py`)."""
