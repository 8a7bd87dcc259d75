"""Characters that display as nothing, taken out of text before it enters a prompt.

A reader (or a model) does not see them, so they can hide text (Unicode tag characters spell
out a whole instruction invisibly) or disguise a tag (`</ala<U+061C>ya-memory>` displays as
`</alaya-memory>` but matches no pattern for it). Removed: every format character (category
Cf: zero-width spaces and joiners, bidi marks and controls, soft hyphen, word joiner, BOM,
interlinear annotation, Arabic letter mark, …), the whole tag block U+E0000–U+E0FFF (tags and
the variation selector supplement), variation selectors U+FE00–U+FE0F, Mongolian free
variation selectors U+180B–U+180F, Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), Khmer
inherent vowels U+17B4/U+17B5 and the combining grapheme joiner U+034F. Visible text (CJK,
Arabic, accents, emoji) is kept; an emoji sequence loses its joiners and presentation
selectors, and shows as its parts.
"""

from __future__ import annotations

import re

INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u17b4-\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)


def strip_invisible(text: str) -> str:
    """The text without the characters that display as nothing (see the module docstring)."""
    return INVISIBLE.sub("", text)
