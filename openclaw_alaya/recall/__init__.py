"""Reading memory back: recall as navigation over cards and relations (`navigate.py`), the periods
of time it and the summaries understand (`periods.py`), the time buckets `alaya summary` shows
(`buckets.py`), the trace of a card to the turns it came from (`trace.py`), and cards by id
or by filter (`listing.py`: `alaya get`, `alaya list`)."""
