"""Reading memory back: recall as navigation over cards and relations (`navigate.py`), the time
buckets of what was talked about when (`buckets.py`, dated by `periods.py`), and the trace of a
card to the turns it came from (`trace.py`)."""
