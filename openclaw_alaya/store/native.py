"""Give freed memory back to the operating system after a big one-off load.

glibc keeps the chunks that LanceDB's and Kuzu's reader threads and numpy's temporaries freed
(hundreds of MB after loading 100k cards into memory); a long-lived process would carry them
as resident memory for the rest of its life.
"""

from __future__ import annotations

import ctypes


def release_freed_memory() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass
