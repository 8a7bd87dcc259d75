"""A note's YAML front matter, read with bounds (issue 30 class 8).

The notes `alaya import-memex` reads are anyone's files (a vault shared, a folder downloaded).
Plain `yaml.safe_load` took 4–5.6 GB and two minutes on an alias bomb (each alias expands to
what its anchor holds, nine levels of ten make a billion), and raised RecursionError on
front matter nested a few thousand levels deep. So: no aliases (no front matter of a note
needs one), a nesting limit, and a size limit. A refusal is `FrontMatterRefused`, whose text
says why; the caller skips the note with it.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_CHARS = 64 * 1024
MAX_DEPTH = 32


class FrontMatterRefused(ValueError):
    """Front matter that could take unbounded memory, time or stack to read."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and more than MAX_DEPTH levels of nesting, before the
    composer builds (or recurses into) anything."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise FrontMatterRefused("its front matter uses a YAML alias (*name), which can expand without bound")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise FrontMatterRefused(f"its front matter nests more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str) -> dict[str, Any]:
    """The front matter as a mapping with lower-cased keys; {} when it is not YAML or not a
    mapping (the note still imports, titled by its heading or file name). Raises
    FrontMatterRefused for what is not read at all."""
    if len(text) > MAX_CHARS:
        raise FrontMatterRefused(f"its front matter is longer than {MAX_CHARS // 1024} KB")
    try:
        data = yaml.load(text, Loader=_BoundedLoader)  # a SafeLoader, bounded
    except yaml.YAMLError:
        return {}
    return {str(k).lower(): v for k, v in data.items()} if isinstance(data, dict) else {}
