"""Text that reads as an order to an agent rather than as memory: never injected on its own.

Session start puts memory into a prompt unasked; a line there that tells the model to run a
downloaded script, to wipe a disk, to send credentials away or to drop its instructions is a
prompt injection whoever stored it (a pasted web page in the Control UI, a card an agent stored
after reading one). Such lines are left out of the session-start block and out of session
titles; `alaya recall` and `memory_search` still find them, marked (docs/provenance.md).

The classes, English and Chinese, each about what the text would make an agent do, not about
its tone ("always run the tests first" is a preference, kept):
- remote code: a download piped or substituted into a shell or interpreter (`curl … | sh`,
  `bash <(wget …)`, `iex (iwr …)`, `base64 -d | sh`);
- destruction: `rm -rf /` or `~`, `mkfs`, `dd of=/dev/…`, a fork bomb, `chmod -R 777 /`;
- exfiltration: sending keys, tokens, passwords, `~/.ssh` or `.env` somewhere;
- override: ignore or forget the previous instructions, "you are now …", "new system prompt".
"""

from __future__ import annotations

import re

_SHELLS = r"(?:sudo\s+)?(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|php|iex|powershell|pwsh|source"
_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|nc|ncat)"
_SECRETS = (r"(?:api[ _-]?keys?|tokens?|passwords?|passwd|credentials?|secrets?|private[ _-]?keys?|ssh[ _-]?keys?"
            r"|~/\.ssh\S*|\.env\b|id_rsa|cookies?|密钥|密码|令牌|凭据|私钥)")

_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("remote code", re.compile(
        rf"\b{_FETCH}\b[^\n|;]{{0,300}}\|\s*(?:{_SHELLS})\b"  # curl … | sh
        rf"|(?:{_SHELLS})\s+(?:-c\s+)?[\"']?\s*(?:<\(|\$\()\s*{_FETCH}\b"  # bash <(curl …), sh -c "$(curl …)"
        rf"|\b(?:eval|iex)\s*[\"'(]*\s*\$?\(?\s*{_FETCH}\b"  # eval "$(curl …)", iex (iwr …)
        rf"|base64\s+(?:-d|--decode)\b[^\n|]{{0,200}}\|\s*(?:{_SHELLS})\b", re.I)),
    ("destruction", re.compile(
        r"\brm\s+-(?:rf|fr|r\s+-f|f\s+-r)\s+(?:--no-preserve-root\s+)?(?:/|~|\$HOME|\*)(?:\s|$|\*)"
        r"|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+[^\n]{0,80}\bof=/dev/(?:sd|nvme|hd|disk|vd)"
        r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bchmod\s+-R\s+0?777\s+/(?:\s|$)", re.I)),
    ("exfiltration", re.compile(
        rf"\b(?:send|post|upload|email|mail|forward|leak|exfiltrate|paste)\b[^\n.]{{0,60}}\b{_SECRETS}[^\n.]{{0,80}}"
        rf"\b(?:to|into)\b\s*(?:https?://|\S+@\S+|[\w.-]+\.(?:com|net|org|io|xyz|ru|cn)\b|a\s+webhook|pastebin)"
        rf"|\bcurl\b[^\n]{{0,120}}(?:-d|--data(?:-binary)?|-F|--upload-file|-T)\s*@?\s*[\"']?(?:~/\.ssh|\S*\.env\b|/etc/passwd|\S*id_rsa)"
        rf"|(?:发送|上传|发给|转发)[^\n。]{{0,30}}{_SECRETS}|{_SECRETS}[^\n。]{{0,30}}(?:发送|上传|发给|转发)(?:给|到)", re.I)),
    ("override", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\b\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*"
        r"(?:previous|prior|above|earlier|preceding|former|system|original|existing)?\s*"
        r"(?:instructions|rules|prompts?|guidelines|directives|guardrails|safety\s+rules)\b"
        r"|\byou\s+are\s+now\s+(?:a|an|in|no\s+longer|free|dan|jailbroken|unrestricted)\b"
        r"|\b(?:new|updated|real)\s+system\s+prompt\b|\bdeveloper\s+mode\s+(?:on|enabled)\b"
        r"|(?:忽略|无视|忘记|忘掉)(?:之前|以上|上面|先前|前面|所有|全部)?(?:的)?(?:所有)?(?:指令|指示|规则|提示|要求)"
        r"|你现在(?:是|不再)", re.I)),
)


def instruction_class(text: str) -> str | None:
    """The class of order `text` carries (see the module docstring), or None for plain memory."""
    if not text:
        return None
    for name, pattern in _CLASSES:
        if pattern.search(text):
            return name
    return None


def looks_like_instruction(text: str) -> bool:
    return instruction_class(text) is not None
