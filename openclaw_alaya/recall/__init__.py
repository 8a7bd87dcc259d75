"""Reading memory back: recall as navigation over cards and relations (`navigate.py`) and the
trace of a card to the turns it came from (`trace.py`)."""
