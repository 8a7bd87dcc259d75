"""Damaged input made usable instead of refused: cut UTF-8, lone UTF-16 surrogates, huge turns.

Why repair rather than refuse: OpenClaw re-sends the same history on every capture and a
transcript only grows, so an input refused once for a damaged character is refused for good,
and its good part is lost with it. Node cuts strings inside a surrogate pair (JSON then holds
a lone `\\ud83d`, which Python decodes but cannot encode as UTF-8), and a crash during an append
leaves a transcript that ends inside a UTF-8 character. Every input path (files, stdin, hook
events) decodes through `decode` and parses JSON through `load_json`; `cap_turn` bounds what one
message can cost downstream. What was repaired is said in one warning line on stderr.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

DEFAULT_MAX_TURN_CHARS = 100_000

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # only such an escape can put one in a string


def warn(message: str) -> None:
    """One line on stderr, as the CLI's other warnings read."""
    print(f"alaya: warning: {' '.join(message.split())}", file=sys.stderr)


def decode(data: bytes, src: str) -> tuple[str, str | None]:
    """(text, what was repaired or None). UTF-8 (BOM allowed), or UTF-16 when it announces
    itself with a BOM. Bytes that do not decode become U+FFFD and the rest is kept; the note
    names the first one, for the caller to `warn` with once the input is accepted."""
    encoding = "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    try:
        return data.decode(encoding), None
    except UnicodeDecodeError as exc:
        text = data.decode(encoding, "replace")
        return text, (f"{src}: not valid {encoding.upper()} at byte {exc.start} (a cut or damaged character):"
                      f" {text.count(chr(0xFFFD))} replaced with U+FFFD, the rest kept")


def fix_surrogates(text: str) -> str:
    """Surrogate pairs joined into one character, lone surrogates replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def load_json(text: str) -> Any:
    """json.loads (control characters allowed in strings), with every string in the result,
    keys included, passed through `fix_surrogates`. Raises what json.loads raises."""
    value = json.loads(text, strict=False)
    if not _SURROGATE_ESCAPE.search(text):
        return value
    if isinstance(value, str):
        return fix_surrogates(value)
    stack = [value]
    while stack:  # iterative: the caller bounds the depth, not the recursion limit
        node = stack.pop()
        if isinstance(node, dict):
            items = [(fix_surrogates(k), v) for k, v in node.items()]
            node.clear()
            node.update(items)
            keys: Any = list(node)
        elif isinstance(node, list):
            keys = range(len(node))
        else:
            continue
        for key in keys:
            child = node[key]
            if isinstance(child, str):
                node[key] = fix_surrogates(child)
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value


def cap_turn(text: str, max_chars: int) -> str:
    """`text` kept up to `max_chars` characters, with a marker saying how much was cut: one
    pasted dump must not cost gigabytes downstream (n-grams, index, distill)."""
    if len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return f"{text[:max_chars]}\n\n[{cut:,} more characters cut: a turn is kept up to {max_chars:,} characters]"
