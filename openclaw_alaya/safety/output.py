"""The one output sanitiser: memory text on its way to a model, by any surface (the
session-start block, the OpenClaw tools' text and details, the MCP tools' results, `alaya
recall`). Stored data is left as it is; what leaves is made safe here, so no surface can
forget a check the others make.

`for_model(text)`: no invisible characters (`invisible`: tag characters that spell hidden
text, bidi controls, zero-width characters, Hangul fillers, …), no control characters but line
breaks and tabs, no tag whose name could close or reopen the `<alaya-memory>` block (even
written as an entity, an escape or a full-width `<`), no chat-template control token.
`for_model_json(value)`: the same for every string in a JSON value, keys included (an id is a
checked id, which this leaves as it is).
"""

from __future__ import annotations

import re
from typing import Any

from .invisible import strip_invisible

# Control characters but \t and \n, and the line/paragraph separators: a space.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# Chat-template control tokens (`<|im_start|>`, `<|eot_id|>`, …) are never memory.
_CHAT_TOKEN = re.compile(r"<\s*\|")
# `<`, an entity or escape for it, an optional `/`, then a tag name mentioning memory or alaya.
_SPOOF_TAG = re.compile(r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?|\\u003c|\\x3c|＜|﹤)(\s*/?\s*[\w:.-]*(?:memor|alaya))", re.I)
_BLOCK_NAME = re.compile(r"alaya-memory", re.I)


def for_model(text: str) -> str:
    """`text` safe to hand to a model (see the module docstring); line breaks are kept."""
    text = _CONTROL.sub(" ", strip_invisible(text))  # before the tag patterns: a disguised tag is matched
    text = _SPOOF_TAG.sub(lambda m: "‹" + m.group(1), text)
    text = _CHAT_TOKEN.sub("‹|", text)
    return _BLOCK_NAME.sub("alaya memory", text)


def for_model_json(value: Any) -> Any:
    """`value` (a JSON value: dicts, lists, strings, numbers) with every string `for_model`."""
    if isinstance(value, str):
        return for_model(value)
    if isinstance(value, dict):
        return {for_model_json(k): for_model_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [for_model_json(v) for v in value]
    return value
