"""Secrets that words announce: statements in English and Chinese (also Japanese and Korean),
and high-entropy tokens next to a secret word.

Each entry is (kind, needles, pattern, check): the redactor runs the pattern only on text that
holds one of the needles (lower case: the patterns are case-insensitive), and replaces the
first group that matched when the value passes `check` (see `redact._CHECKS`):

- "any": four characters or more, no placeholder;
- "random": looks random (long, two kinds of characters, high entropy);
- "stated": a value a sentence states ("my password is Summer2024!941"); the pattern already
  asks for a digit or symbol in it, or quotes around it, so "the password is required" stays.

Every repetition is bounded or stops at a character it cannot hold, so each pattern runs in
time linear in the text (`bench/redact.py`).
"""

from __future__ import annotations

from .word_trie import trie

# --- English: "my password is X", "the PIN for the door is X", "set the token to X" ----------
_CODES = ["code", "pin", "password", "passcode"]
_EN_SECRET = trie(
    ["password", "passwd", "passphrase", "passcode", "pw", "pwd", "pin", "pin~code", "pin~number", "combination", "otp",
     "credential", "credentials", "token", "secret", "secret~code", "secret~word", "secret~phrase", "personal~access~token"]
    + [f"{x}~key" for x in ("api", "access", "secret", "private", "auth", "license", "licence", "product", "recovery",
                            "encryption", "master", "wifi", "wi-fi", "network", "app")]
    + [f"{x}~token" for x in ("access", "auth", "api", "bearer", "refresh", "session", "bot", "app")]
    + [f"{x}~{code}" for code in _CODES for x in (
        "security", "verification", "confirmation", "one-time", "one~time", "otp", "2fa", "mfa", "totp", "sms", "login",
        "access", "auth", "authentication", "authorization", "recovery", "backup", "alarm", "door", "gate", "garage",
        "safe", "lock", "locker", "entry", "keypad", "unlock", "wifi", "wi-fi", "root", "admin")],
    separated=True,
)
# "for the staging db", "to the router", "of bob@host": up to four words
_EN_OBJECT = r"(?:\s+(?:for|to|of|on|at|in)(?:\s+[^\s.,;:!?=]{1,40}){1,4}?)??"
# "is", "was now", "has been changed to", "to", ":" (`=` is an assignment: `redact._VALUE_PATTERNS`)
_EN_VERB = (
    r"(?:\s*:|\s+(?:-+|to|(?:is|was|are|were|will\s+be|should\s+be|would\s+be|becomes|became|remains|reads)"
    r"(?:\s+(?:now|still|also|just|simply|actually|always|currently))?(?:\s*:)?"
    r"|(?:(?:has|have)\s+been\s+|was\s+|is\s+|got\s+)?(?:changed|set|reset|updated|rotated)\s+to))"
)
_QUOTED = r"[\"'“‘«]([^\"'“”‘’»\n]{4,128})[\"'”’»]"
# a bare value holds a digit or symbol, and does not end in a sentence's punctuation
_STATED = r"(?=[^\s]*[0-9!#$%&*+=?@^~_|\\])([^\s\"'“”‘’<>]{3,127}[^\s\"'“”‘’<>.,;:!?)\]])"
# "is 12 characters long", "is 8-20 digits": a rule about a password, not one
_NOT_A_RULE = (
    r"(?![.,;:!?)]*\s+(?:characters?|chars?|digits?|letters?|symbols?|long|minutes?|hours?|days?|weeks?|months?"
    r"|seconds?|times?|attempts?|tries|bits?|bytes?|words?)\b)"
)
# (no `\b` before the word: a pattern that starts with a trie of words lets sre skip every
# position where none of the words starts, which a leading assertion would forbid)
_EN_STATEMENT = r"(?i)" + _EN_SECRET + r"\b" + _EN_OBJECT + _EN_VERB + r"\s*(?:" + _QUOTED + "|" + _STATED + ")" + _NOT_A_RULE

# --- Chinese, Japanese, Korean: a label, a connector, then an ASCII value -------------------------
CJK_LABEL = trie(
    ["密码", "密碼", "口令", "暗証番号", "パスワード", "비밀번호", "패스워드", "암호", "비번", "授权码", "授權碼", "密钥", "密鑰", "秘钥",
     "秘鑰", "密匙", "私钥", "私鑰", "令牌", "验证码", "驗證碼", "校验码", "校驗碼", "安全码", "安全碼", "动态码", "動態碼", "提取码",
     "提取碼", "激活码", "激活碼", "注册码", "註冊碼", "卡密", "PIN码", "PIN碼", "pin码", "トークン", "秘密鍵", "認証コード",
     "アクセスキー", "토큰", "인증~코드", "비밀~키"],
    separated=True,
)
# "的", "已经", then "是", "为", "：", "改成了", "は", "는" …
_CJK_CONNECTOR = (
    r"(?:的)?(?:已经|已經|已|都|就|也|还|還|仍|现在|現在|目前|依然)?"
    r"(?:[:：=＝]|是|为|為|(?:改|设|設|设置|設置|换|換|变|變|更新|修改|重置)(?:为|為|成)了?|は|が|는|은)(?:[ \t]*[:：])?"
)
_PW_CHAR = r"[!#-&(-+\--:<-~]"  # printable ASCII but quotes, comma, semicolon, space
_CJK_NEEDLES = ("密", "口令", "暗証", "パスワード", "비밀", "패스워드", "암호", "비번", "授权", "授權", "秘", "私钥", "私鑰",
                "令牌", "码", "碼", "卡密", "トークン", "認証", "アクセスキー", "토큰", "인증")
_CJK_STATEMENT = CJK_LABEL + r"[ \t]*" + _CJK_CONNECTOR + r"[ \t]*[「『“\"']?(" + _PW_CHAR + r"{1,128})"
# after a bare space the value must hold a digit or symbol (密码 reset is no password)
_CJK_SPACED = CJK_LABEL + r"[ \t]+([A-Za-z]{0,128}[0-9!#-&(-+\--/:<-@\[-`{-~]" + _PW_CHAR + r"{0,127})"
# an English secret word with a Chinese connector: "AppSecret是…", "API Key为…"
_EN_WORD_CJK = (
    r"(?i)(?:secret|token|key|password|passwd|pwd|pin)[ \t]*(?:是|为|為|：|＝|は|는|은)[ \t]*[「『“\"']?(" + _PW_CHAR + r"{4,128})"
)

STATEMENTS: list[tuple[str, tuple[str, ...], str, str]] = [
    ("password", ("pass", "pw", "pin", "secret", "token", "key", "code", "credential", "combination", "otp"), _EN_STATEMENT, "stated"),
    ("password", _CJK_NEEDLES, _CJK_STATEMENT, "any"),
    ("password", _CJK_NEEDLES, _CJK_SPACED, "any"),
    ("secret", ("是", "为", "為", "：", "＝", "は", "는", "은"), _EN_WORD_CJK, "random"),
]

# --- a token next to a secret word: "api_hash 0123…", "微信 AppSecret 3f9a…", "AccessKey Secret Xk9…" ------
# (passwords are left to the statements: what follows a password word is no token but a password)
# (`ak`, `sk`: the redactor keeps only the upper-case AK and SK that stand alone); the word
# ends a name (`AccessKeySecret`, `api_hash`), it is not the start of one (`tokenizer`)
SECRET_WORD = (
    r"(?:secret|token|key|credential|auth|api[_ ]?hash|app[_ ]?hash|signature|ak|sk"
    r"|密钥|密鑰|秘钥|私钥|私鑰|令牌|凭证|凭据|憑證|授权|授權|签名|簽名)s?(?![a-z0-9])"
)
NEARBY_NEEDLES = ("secret", "token", "key", "credential", "auth", "hash", "signature", "ak", "sk",
                  "密钥", "密鑰", "秘钥", "私钥", "私鑰", "令牌", "凭", "憑", "授权", "授權", "签名", "簽名")
# (group 1: what stands between, separators and up to two short words; group 2: the token,
# 16 to 256 characters)
_SEPARATORS = r"[^A-Za-z0-9\n\u3400-\u9fff]{1,6}"
NEARBY_TOKEN = (
    r"(?i)" + SECRET_WORD + r"(" + _SEPARATORS.replace("{1,6}", "{0,6}") + r"(?:[A-Za-z\u3400-\u9fff]{1,12}" + _SEPARATORS + r"){0,2})"
    r"([A-Za-z0-9][A-Za-z0-9_\-+/=.~]{14,254}[A-Za-z0-9_\-+/=~])(?![A-Za-z0-9_\-+/=~])"
)
# what, between the word and the token, says the token is no secret but an id or a digest
NOT_SECRET_BETWEEN = (
    r"(?i)[。！？!?;；]|\.\s|\b(?:commit|sha\d*|md5|hash|digest|checksum|fingerprint|uuid|guid|ids?|build|revision|rev"
    r"|version|tx|txid|txn|block|etag|request|trace|span|file|path|url|name)\b|提交|哈希|校验|指纹|编号|版本|文件|路径"
)

# the patterns here written in lower case with no case-sensitive part: the redactor runs them
# without the flag on the lower-cased text, several times faster
ON_LOWER = {_EN_STATEMENT, _EN_WORD_CJK, NEARBY_TOKEN}
