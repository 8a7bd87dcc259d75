"""Action items: what someone said must still be done, found by the heuristic distiller and
filed under the tag `todo` (issue 35), so `alaya list --tag todo` lists them and `recall
--tag todo` searches them. A tag, not a card type: an action item is often also a decision
("we decided to move billing; I'll write the migration") or a gotcha, and the type says what
the card is; the tag says that something is left to do. The seed's distill prompt asks for
`action_items` ("待办事项"), its memory files list them under "## Action Items".

English: TODO / to-do, action item, follow up, next step, "we need to", "we have to", "I'll
…", "I will …", "remember to", "don't forget to"; Chinese: 待办, 待做, 要做, 跟进, 下一步, 记得,
别忘了, 回头, 我来, "（我们/我）需要 …" (not 需要注意, a warning).
"""

from __future__ import annotations

import re

TODO_TAG = "todo"

_EN = re.compile(
    r"\b(?:todo|to-do|action items?|follow[- ]up on|next steps?:|we (?:still )?need to|we have to|we've got to|"
    r"i need to|remember to|don't forget to|do not forget to)\b"
    r"|\b(?:i'll|i\u2019ll|i will|we'll|we\u2019ll) (?!never\b|not\b|be\b|see\b|use\b|go with\b|stick with\b)[a-z]{3,}",
    re.I,
)
_ZH = re.compile(r"待办|待做|要做的|跟进|下一步|记得|别忘了|回头|我来(?!说)|(?:^|[，。！？；\s]|我们|我)需要(?!注意|小心)")


def is_action_item(text: str) -> bool:
    """Whether the text states something still to be done."""
    return bool(_EN.search(text) or _ZH.search(text))
