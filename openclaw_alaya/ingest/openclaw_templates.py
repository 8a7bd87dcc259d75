"""What OpenClaw writes into a new workspace is not memory (docs/workspace.md).

OpenClaw seeds `USER.md` from its template: guidance on the file's format, an example in a code
block and a placeholder directive ("Prefer ..."). Synced as it is, every new user's memory would
start with a dozen cards of instructions, injected as the owner's. So entries whose text is one
of the template's (OpenClaw 2026.9.6 `docs/reference/templates/USER.md` and `USER.dev.md`, front
matter removed, parsed by `markdown.parse`; `markdown.Entry.digest`) are skipped, and so are
placeholders of the template's kind whatever the version. A user's own entries, even in a
file that still holds the template, are kept.
"""

from __future__ import annotations

import re
from typing import Protocol


class Entry(Protocol):
    """What is read of `markdown.Entry` (not imported: markdown imports this module)."""

    digest: str
    body: str

TEMPLATE_DIGESTS = frozenset({
    # USER.md
    "c37861560fdcd8a1", "0047f411fa9c3a43", "052ad31c51501895", "d2ceb01e70cd0e8f", "e41710c78ff5d266",
    "4fde68024a7631f7", "fc7afb1cb2b58b36", "5050d4623e44bc95", "bebba84e663f4e33", "3625b3eadf0933ad",
    "a9ea598ed80df647",
    # USER.dev.md (`openclaw gateway --dev`)
    "7372bb7101a45821", "5e439866578ae35e", "96152f72f1294601", "6e65be6d987de77e", "60e8fe1793c574c1",
    "49b95e56b405017b", "50a5cc8ded60406d",
})
# "Prefer ...", "Always …": a directive nobody filled in
_PLACEHOLDER = re.compile(r"^(?:(?:prefer|always|never)\s*)?(?:\.{3}|…)$", re.I)


def is_scaffolding(entry: Entry) -> bool:
    return entry.digest in TEMPLATE_DIGESTS or bool(_PLACEHOLDER.match(entry.body.strip()))
