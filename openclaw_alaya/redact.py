"""Secret redaction: what must never be stored, embedded or injected (issue 6, anchors §4.13).

`Redactor.redact(text)` replaces every secret it recognises with `[REDACTED:<kind>]` and
counts them by kind. The built-in store-filter plugin (`redaction_plugin`) runs it over every
session before `Alaya.ingest` stores anything (all paths: `alaya ingest`, `--stdin`, the
session-end hook, the Python API), and `inject.build` runs it once more over the injected text
(for memories stored before redaction was on).

Patterns, most specific first (a later pattern never sees text an earlier one replaced):

- private key blocks (PEM, OpenSSH, PGP; also JSON-escaped ones, also cut-off ones);
- provider keys by their fixed prefixes (Anthropic, OpenAI, GitHub, GitLab, Slack, Stripe,
  Google, AWS, Azure, Hugging Face, npm, PyPI, SendGrid, Twilio, Telegram, Discord, …);
- a Twilio auth token next to its account SID or in text about Twilio;
- JWTs, bearer/basic authorization headers, passwords in URLs (an `@` in them included);
- values a name announces: a key named like a secret (`password=`, `secret:`, `api_key=`,
  `"token": "…"`, `PGPASSWORD=…`) followed by a value that looks like one (for password-like
  keys anything but a placeholder; for the rest a long, high-entropy value); password flags on
  command lines (`--password X`, `mysql -pX`, `curl -u user:X`, `docker login -p X`,
  `sshpass -p X`, `redis-cli -a X`, `-passout pass:X`); `.netrc` entries; passwords labelled
  in Chinese, Japanese and Korean (`密码：X`, `登录密码 X`, `パスワードは X`, `비밀번호는 X`);
- card numbers (Luhn-checked) and BIP39 seed phrases (`safety.secret_shapes`);
- any other long run of token characters with upper case, lower case, digits and high entropy
  (keys, long base64 blocks such as a kubeconfig's `client-key-data`).

Every pattern runs in time linear in the text (`bench/redact.py` shows it on 1 MB of
adversarial input).

Config (`redaction` in config.json): `enabled`, `redact_raw` (the L3 copy is redacted too;
off keeps the original there, while L2, L1 and injection still get the redacted text),
`extra_patterns` (`{"name", "pattern"}`) and `allowlist` (regexes; a match they fully match
is kept).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .safety.secret_shapes import CARD_CANDIDATE, is_card_number, seed_phrase_spans
from .store.fsutil import atomic_write

if TYPE_CHECKING:
    from .memory import Memory
    from .models import Session

STATS_FILE = "redactions.json"  # in state/: how many secrets were redacted, by kind
MARKER = "[REDACTED:{kind}]"
MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")

# Characters a token is made of; a secret ends where they end.
_T = r"A-Za-z0-9_\-"
_END = r"(?![A-Za-z0-9_\-])"
_START = r"(?<![A-Za-z0-9_\-])"

# (kind, needles, pattern, group): the pattern runs only on text containing one of the needles
# (lower-cased for (?i) patterns: a cheap substring test first), and `group` is the part
# replaced (0 = the whole match).
_PATTERNS: list[tuple[str, tuple[str, ...], str, int]] = [
    # --- key material ---------------------------------------------------------------------
    ("private-key", ('PRIVATE KEY',), r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[^-]*(?:-(?!----)[^-]*)*(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?", 0),
    ("age-secret-key", ('AGE-SECRET-KEY-1',), r"AGE-SECRET-KEY-1[0-9A-Z]{58}", 0),
    # --- LLM providers --------------------------------------------------------------------
    ("anthropic-key", ('sk-ant-',), _START + r"sk-ant-[A-Za-z0-9]{2,8}-[" + _T + r"]{20,}", 0),
    ("openrouter-key", ('sk-or-v1-',), _START + r"sk-or-v1-[a-f0-9]{32,}" + _END, 0),
    ("openai-key", ('sk-',), _START + r"sk-(?:proj|svcacct|admin|None)-[" + _T + r"]{20,}", 0),
    ("openai-key", ('sk-',), _START + r"sk-[A-Za-z0-9][A-Za-z0-9_\-]{19,}" + _END, 0),
    ("groq-key", ('gsk_',), _START + r"gsk_[A-Za-z0-9]{40,}" + _END, 0),
    ("xai-key", ('xai-',), _START + r"xai-[A-Za-z0-9]{40,}" + _END, 0),
    ("perplexity-key", ('pplx-',), _START + r"pplx-[A-Za-z0-9]{40,}" + _END, 0),
    ("replicate-key", ('r8_',), _START + r"r8_[A-Za-z0-9]{36,}" + _END, 0),
    ("huggingface-token", ('hf_', 'api_org_'), _START + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}" + _END, 0),
    # --- code hosting and packages ----------------------------------------------------------
    ("github-token", ('gh', 'github_pat_'), _START + r"gh[pousr]_[A-Za-z0-9]{36,}" + _END, 0),
    ("github-token", ('gh', 'github_pat_'), _START + r"github_pat_[A-Za-z0-9_]{22,}" + _END, 0),
    ("gitlab-token", ('gl',), _START + r"gl(?:pat|ptt|dt|rt|soat|cbt|imt|ft|agent)-[" + _T + r"]{20,}" + _END, 0),
    ("npm-token", ('npm_',), _START + r"npm_[A-Za-z0-9]{36}" + _END, 0),
    ("pypi-token", ('pypi-AgE',), _START + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _END, 0),
    ("atlassian-token", ('ATATT3',), _START + r"ATATT3[A-Za-z0-9_=\-]{60,}" + _END, 0),
    ("linear-key", ('lin_api_',), _START + r"lin_api_[A-Za-z0-9]{40}" + _END, 0),
    ("notion-token", ('secret_', 'ntn_'), _START + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _END, 0),
    ("postman-key", ('PMAK-',), _START + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _END, 0),
    # --- chat and messaging ---------------------------------------------------------------
    ("slack-token", ('xox', 'xapp-'), _START + r"xox[abposre]-(?:\d+-)?[A-Za-z0-9\-]{10,}" + _END, 0),
    ("slack-token", ('xox', 'xapp-'), _START + r"xapp-\d-[A-Za-z0-9\-]{20,}" + _END, 0),
    ("slack-webhook", ('hooks.slack.com',), r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}", 0),
    ("discord-webhook", ('/api/webhooks/',), r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[" + _T + r"]{20,}", 0),
    ("discord-token", ('.',), _START + r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + _END, 0),
    ("telegram-bot-token", (':AA',), r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _END, 0),
    ("sendgrid-key", ('SG.',), _START + r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}" + _END, 0),
    ("twilio-key", ('SK',), _START + r"SK[0-9a-f]{32}" + _END, 0),
    # an auth token (32 hex digits) next to its account SID, or anywhere in text about Twilio
    ("twilio-auth-token", ('AC',), _START + r"AC[0-9a-f]{32}[\"',:\s]{1,6}([0-9a-f]{32})" + _END, 1),
    ("twilio-auth-token", ('twilio',), r"(?i)" + _START + r"[0-9a-f]{32}" + _END, 0),
    ("mailgun-key", ('key-',), _START + r"key-[0-9a-f]{32}" + _END, 0),
    ("mailchimp-key", ('-us',), _START + r"[0-9a-f]{32}-us\d{1,2}" + _END, 0),
    # --- payments and commerce --------------------------------------------------------------
    ("stripe-key", ('_live_', '_test_'), _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _END, 0),
    ("stripe-webhook-secret", ('whsec_',), _START + r"whsec_[A-Za-z0-9]{24,}" + _END, 0),
    ("shopify-token", ('shp',), _START + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END, 0),
    # --- clouds ---------------------------------------------------------------------------
    ("aws-access-key-id", ('AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AROA', 'AIPA', 'ANPA', 'ANVA', 'APKA'), _START + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}" + _END, 0),
    ("aws-secret-access-key", ('secret', 'session'), r"(?i)(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|aws_?session_?token)[\"']?\s*(?:[:=]|=>)\s*[\"']?([A-Za-z0-9/+=]{40,})", 1),
    ("google-api-key", ('AIza',), _START + r"AIza[0-9A-Za-z_\-]{35}" + _END, 0),
    ("google-oauth-secret", ('GOCSPX-',), _START + r"GOCSPX-[A-Za-z0-9_\-]{24,}" + _END, 0),
    ("google-oauth-token", ('ya29.',), _START + r"ya29\.[0-9A-Za-z_\-]{20,}" + _END, 0),
    ("azure-storage-key", ('accountkey', 'sharedaccesskey'), r"(?i)(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{40,}={0,2})", 1),
    ("azure-sas-signature", ('sig=',), r"(?i)[?&]sig=([A-Za-z0-9%+/=]{30,})", 1),
    ("azure-client-secret", ('Q~',), _START + r"[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + _END, 0),
    ("digitalocean-token", ('_v1_',), _START + r"do[opr]_v1_[a-f0-9]{64}" + _END, 0),
    ("databricks-token", ('dapi',), _START + r"dapi[a-f0-9]{32}(?:-\d)?" + _END, 0),
    ("vault-token", ('hvs.', 'hvb.', 'hvr.'), _START + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}" + _END, 0),
    ("doppler-token", ('dp.',), _START + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}" + _END, 0),
    # --- generic shapes -------------------------------------------------------------------
    ("jwt", ('eyJ',), _START + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", 0),
    # the password may hold an `@`: it ends at the last one before the host
    ("url-password", ('://',), r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@?#\[\]]{1,128}:([^\s/?#]{1,256})@", 1),
    ("basic-auth", ('authorization',), r"(?i)\bAuthorization\s*[:=]\s*[\"']?Basic\s+([A-Za-z0-9+/]{8,}={0,2})", 1),
    ("bearer-token", ('bearer',), r"(?i)\bBearer\s+([A-Za-z0-9._~+/\-]{16,}=*)", 1),
]

# Values: a secret a label, a key name or a command-line flag announces. The value is the first
# group that matched; a placeholder (`$PASS`, `<password>`, `changeme`, …) is kept; `strict`
# values are kept unless they look random (long, mixed, high entropy), the others unless
# shorter than 4 characters. Key names are matched from their last word (`DB_PASSWORD`
# from `PASSWORD`): a pattern for the words before it backtracked quadratically on long
# dash-separated runs. Every repetition here is bounded or stops at a delimiter it cannot
# contain, so each pattern runs in time linear in the text.
_PASSWORD_KEYS = r"(?:pass(?:word|wd|phrase)?|pwd|db_?pass(?:word)?|passcode|pin_?code)"
_SECRET_KEYS = (
    r"(?:secret|token|api_?key|apikey|access_?key|auth_?key|private_?key|client_?secret|credentials?|auth|"
    r"session_?key|signing_?key|encryption_?key|master_?key|x-api-key)"
)
# the word before is not a word part, or an upper-case name ends in PASSWORD (`PGPASSWORD`)
_PASSWORD_NAME = r"(?:(?<![A-Za-z0-9])" + _PASSWORD_KEYS + r"|(?-i:(?<=[A-Z0-9])(?:PASSWORD|PASSWD|PASSPHRASE|PWD)))"
_ASSIGN = r"[\"']?\s*(?:[:=]|=>|:=)\s*(?:[\"']([^\"'\n]+)[\"']|([^\s\"',;&<>]+))"
# a flag's value: quoted, or a word that is no other flag
_FLAG_VALUE = r"""(?:"([^"\n]{1,256})"|'([^'\n]{1,256})'|(?![-$])([^\s"';|&<>]{1,256}))"""
_ON_COMMAND_LINE = r"\b[^\n|;&]{0,300}?\s"  # the rest of one command, lazily, up to the flag
_CJK_LABEL = r"(?:密码|密碼|口令|暗証番号|パスワード|비밀번호|패스워드|암호|비번)"
_PW_CHAR = r"[!#-&(-+\--:<-~]"  # printable ASCII but quotes, comma, semicolon, space
_VALUE_PATTERNS: list[tuple[str, tuple[str, ...], str, bool]] = [
    ("password", ("pass", "pwd", "pin"), r"(?i)" + _PASSWORD_NAME + _ASSIGN, False),
    ("secret", ("secret", "token", "key", "auth", "credential"), r"(?i)(?<![A-Za-z0-9])" + _SECRET_KEYS + _ASSIGN, True),
    # command lines: --password VALUE, mysql -pVALUE, curl -u user:VALUE, docker login -p VALUE, …
    ("password", ("--",), r"(?i)" + _START + r"--(?!no-)(?:[a-z0-9]{1,30}-){0,3}(?:password|passwd|pass|pwd)" + _END + r"[ \t]+" + _FLAG_VALUE, False),
    ("password", ("mysql", "mariadb"), _START + r"(?:mysql|mariadb)[\w-]{0,20}" + _ON_COMMAND_LINE + r"-p" + _FLAG_VALUE, False),
    ("password", ("curl",), _START + r"curl" + _ON_COMMAND_LINE + r"""(?:-u|--user)(?:[ \t]+|=)?["']?[^\s:"']{1,128}:([^\s"']{1,256})""", False),
    ("password", ("login",), _START + r"(?:docker|podman|buildah|skopeo|nerdctl|oras|helm registry|cf)[ \t]+login"
                             + _ON_COMMAND_LINE + r"-p[ \t]+" + _FLAG_VALUE, False),
    ("password", ("sshpass",), _START + r"sshpass" + _ON_COMMAND_LINE + r"-p[ \t]*" + _FLAG_VALUE, False),
    ("password", ("redis-cli",), _START + r"redis-cli" + _ON_COMMAND_LINE + r"-a[ \t]+" + _FLAG_VALUE, False),
    ("password", ("pass:",), _START + r"-pass(?:in|out|word)?[ \t]+pass:" + _FLAG_VALUE, False),
    # .netrc: machine HOST [login USER] [account ACCT] password VALUE, on one line or several
    ("password", ("password",), r"(?i)\b(?:machine[ \t\n]+\S{1,253}|default)(?:\s+(?:login|account)\s+\S{1,256}){0,2}\s+password\s+(\S{1,256})", False),
    # Chinese, Japanese, Korean: a label, then a separator or particle, then an ASCII value;
    # after a bare space the value must hold a digit or symbol (密码 reset is no password)
    ("password", ("密", "口令", "暗証", "パスワード", "비밀번호", "패스워드", "암호", "비번"),
     _CJK_LABEL + r"[ \t]*(?:[:：=＝]|是|为|為|は|が|는|은)[ \t]*[「『“\"']?(" + _PW_CHAR + r"{1,128})", False),
    ("password", ("密", "口令", "暗証", "パスワード", "비밀번호", "패스워드", "암호", "비번"),
     _CJK_LABEL + r"[ \t]+([A-Za-z]{0,128}[0-9!#-&(-+\--/:<-@\[-`{-~]" + _PW_CHAR + r"{0,127})", False),
]
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\*+|x{3,}|\.{3,}|<[^>]*>|\{\{.*\}\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|%[A-Za-z_]+%|\[REDACTED[^\]]*\]|"
    r"none|null|nil|true|false|undefined|empty|redacted|changeme|change_me|example|your[_\-].*|my[_\-]?(?:password|secret|token|key)|"
    r"password|secret|token|required|optional|string|str|env|os\.environ.*|process\.env.*|getenv.*|stdin|prompt|"
    # an OpenClaw session key (`session_key: agent:main:subagent:<uuid>`) is an address, not a secret
    r"agent:[A-Za-z0-9_.-]{1,64}(?::[A-Za-z0-9_.@+-]{1,128}){1,6})$"
)


def _needles(needles: tuple[str, ...], pattern: str) -> list[tuple[bool, str]]:
    ci = pattern.startswith("(?i)")
    return [(ci, n.lower() if ci else n) for n in needles]


# a whole run of token characters (a kubeconfig's client-key-data is thousands long)
_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{32,}(?![A-Za-z0-9+/=_\-])")
_RANDOM_ENTROPY = 4.3


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(value: str) -> bool:
    """A token-like value: long enough, letters and digits mixed, high entropy."""
    if len(value) < 12 or " " in value:
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return classes >= 2 and entropy(value) >= 3.0


@functools.cache
def _built(source: str) -> re.Pattern:
    """A pattern, compiled the first time a text holds one of its needles: compiling all 63
    built-in ones costs about 20 ms, which a session start whose memories hold no secret
    never needs."""
    return re.compile(source)


@dataclass
class Redactor:
    extra_patterns: list[tuple[str, str]] = field(default_factory=list)
    allowlist: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # patterns stay source text until a text holds one of their needles (`_built`); a
        # user's own patterns (no needles: always tried) are compiled now, so a bad one fails at once
        self._shapes = [(kind, _needles(n, p), p, g) for kind, n, p, g in _PATTERNS]
        self._shapes += [(_kind(name), None, _built(p).pattern, 0) for name, p in self.extra_patterns]
        self._values = [(kind, _needles(n, p), p, strict) for kind, n, p, strict in _VALUE_PATTERNS]
        self._allow = [re.compile(p) for p in self.allowlist]

    def redact(self, text: str) -> tuple[str, Counter]:
        """(redacted text, count per kind)."""
        counts: Counter = Counter()
        if not text:
            return text, counts
        lower = text.lower()
        for kind, needles, source, group in self._shapes:
            if needles is None or any(n in (lower if ci else text) for ci, n in needles):
                before = sum(counts.values())
                text = self._sub(_built(source), text, kind, group, counts)
                if sum(counts.values()) != before:
                    lower = text.lower()
        for kind, needles, source, strict in self._values:
            if any(n in (lower if ci else text) for ci, n in needles):
                text = self._sub_value(_built(source), text, kind, counts, strict=strict)
        text = self._sub(CARD_CANDIDATE, text, "card-number", 0, counts, check=is_card_number)
        text = self._sub_spans(text, list(seed_phrase_spans(text)), "seed-phrase", counts)
        text = self._sub_random(text, counts)
        return text, counts

    def _sub_random(self, text: str, counts: Counter) -> str:
        """A long token of upper- and lower-case letters and digits with high entropy and no
        context is a key in all likelihood (hex digests and UUIDs have no upper case)."""
        def replace(m: re.Match) -> str:
            value = m.group(0)
            if (entropy(value) < _RANDOM_ENTROPY or not (re.search("[a-z]", value) and re.search("[A-Z]", value)
                    and re.search("[0-9]", value)) or self._allowed(value)):
                return value
            counts["high-entropy-token"] += 1
            return MARKER.format(kind="high-entropy-token")

        return _RANDOM_TOKEN.sub(replace, text)

    def _allowed(self, secret: str) -> bool:
        return any(p.fullmatch(secret) for p in self._allow)

    def _sub(self, pattern: re.Pattern, text: str, kind: str, group: int, counts: Counter,
             check: Callable[[str], bool] | None = None) -> str:
        def replace(m: re.Match) -> str:
            secret = m.group(group)
            if not secret or MARKER_RE.fullmatch(secret) or self._allowed(secret) or (check and not check(secret)):
                return m.group(0)
            return _mark(m, group, kind, counts)

        return pattern.sub(replace, text)

    def _sub_spans(self, text: str, spans: list[tuple[int, int]], kind: str, counts: Counter) -> str:
        """The text with each (start, end) span, in order and not overlapping, replaced."""
        out, at = [], 0
        for start, end in spans:
            if self._allowed(text[start:end]):
                continue
            out += [text[at:start], MARKER.format(kind=kind)]
            counts[kind] += 1
            at = end
        return "".join(out) + text[at:] if out else text

    def _sub_value(self, pattern: re.Pattern, text: str, kind: str, counts: Counter, *, strict: bool) -> str:
        """Replace the value a match announces: its first group that matched."""
        def replace(m: re.Match) -> str:
            group = next((i for i in range(1, pattern.groups + 1) if m.group(i) is not None), 0)
            value = m.group(group)
            if (not value or MARKER_RE.search(value) or _PLACEHOLDER.match(value.strip())
                    or self._allowed(value)):
                return m.group(0)
            if strict and not _looks_random(value):
                return m.group(0)
            if not strict and len(value.strip()) < 4:
                return m.group(0)
            return _mark(m, group, kind, counts)

        return pattern.sub(replace, text)


def _kind(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "custom"


def from_config(config: Any) -> Redactor | None:
    """The redactor the config asks for, or None when redaction is off."""
    section = getattr(config, "redaction", None)
    if section is None:
        return Redactor()
    if not section.enabled:
        return None
    return Redactor([(p.name, p.pattern) for p in section.extra_patterns], list(section.allowlist))


# --- sessions -------------------------------------------------------------------------------


def redact_session(session: "Session", redactor: Redactor) -> tuple["Session", Counter]:
    """A copy of the session with every turn's content, name and tool calls, the title, the
    channel and the metadata redacted."""
    total: Counter = Counter()
    turns = []
    for turn in session.turns:
        content, counts = redactor.redact(turn.content)
        name, name_counts = redactor.redact(turn.name) if turn.name else (turn.name, Counter())
        calls, call_counts = _redact_value(turn.tool_calls, redactor)
        total += counts + name_counts + call_counts
        changed = counts or name_counts or call_counts
        turns.append(turn if not changed else turn.model_copy(update={"content": content, "name": name, "tool_calls": calls}))
    update: dict[str, Any] = {}
    for key in ("title", "channel", "metadata"):
        value, counts = _redact_value(getattr(session, key), redactor)
        total += counts
        update[key] = value
    if not total:
        return session, total
    return session.model_copy(update={"turns": turns, **update}), total


def _redact_value(value: Any, redactor: Redactor) -> tuple[Any, Counter]:
    """Every string inside a JSON value (keys too) redacted."""
    if isinstance(value, str):
        return redactor.redact(value) if value else (value, Counter())
    total: Counter = Counter()
    if isinstance(value, list):
        out = []
        for item in value:
            clean, counts = _redact_value(item, redactor)
            out.append(clean)
            total += counts
        return out, total
    if isinstance(value, dict):
        found = {}
        for key, item in value.items():
            clean_key, key_counts = _redact_value(key, redactor) if isinstance(key, str) else (key, Counter())
            clean, counts = _redact_value(item, redactor)
            found[clean_key] = clean
            total += key_counts + counts
        return found, total
    return value, total


def apply_store_filters(memory: "Memory", session: "Session") -> "Session":
    """Run every `store_filter` hook implementation of `memory.hooks` in turn, each on the
    previous one's output (pluggy's own call would hand all of them the original)."""
    from .models import Session

    hook = memory.hooks.hook.store_filter
    for impl in reversed(hook.get_hookimpls()):  # registration order: built-in first
        kwargs = {"session": session, "memory": memory}
        result = impl.function(**{name: kwargs[name] for name in impl.argnames})
        if isinstance(result, Session) and result.id == session.id and result.agent_id == session.agent_id:
            session = result
    return session


def count_markers(texts: Iterable[str]) -> Counter:
    counts: Counter = Counter()
    for text in texts:
        counts.update(MARKER_RE.findall(text or ""))
    return counts


# --- the engine's side (Alaya.ingest, Alaya.distill) ------------------------------------------


def redact_raw(memory: "Memory") -> bool:
    section = getattr(memory.config, "redaction", None)
    return True if section is None else bool(section.redact_raw)


def for_ingest(memory: "Memory", session: "Session") -> "Session":
    """What L3 gets: the session through the store filters, unless `redact_raw` is off (then
    the original; what is derived from it is filtered on the way, `for_derived`)."""
    clean = apply_store_filters(memory, session)
    return clean if redact_raw(memory) else session


def for_derived(memory: "Memory", session: "Session | None") -> "Session | None":
    """A session loaded from L3, made safe for distilling (a no-op when L3 is redacted)."""
    if session is None or redact_raw(memory):
        return session
    return apply_store_filters(memory, session)


def clean_text(memory: "Memory", text: str | None) -> str | None:
    redactor = from_config(memory.config)
    return text if redactor is None or not text else redactor.redact(text)[0]


def record_new_turns(memory: "Memory", turns: list[Any]) -> None:
    """Count the secrets redacted from newly stored turns (`alaya status`); under the write lock."""
    if not turns:
        return
    if redact_raw(memory):
        counts = count_markers(t.content for t in turns)
    else:
        redactor = from_config(memory.config)
        counts = Counter()
        for turn in turns if redactor is not None else []:
            counts += redactor.redact(turn.content)[1]
    record(memory, counts)


def for_alignment(memory: "Memory", session_id: str, agent_id: str, turns: list[Any]) -> list[Any]:
    """Incoming hook turns as L3 would store them, so that they line up with stored turns."""
    from .models import Session

    if not turns or not redact_raw(memory):
        return turns
    return apply_store_filters(memory, Session(id=session_id, agent_id=agent_id, turns=turns)).turns


# --- the running totals (`alaya status`) -----------------------------------------------------


def record(memory: "Memory", counts: Counter) -> None:
    """Add the secrets redacted from newly stored turns to the running totals (caller holds
    the write lock)."""
    if not counts:
        return
    stats = stats_of(memory)
    stats["total"] += sum(counts.values())
    by_kind = Counter(stats["by_kind"])
    by_kind.update(counts)
    stats["by_kind"] = dict(sorted(by_kind.items()))
    atomic_write(memory.dirs.state / STATS_FILE, json.dumps(stats, sort_keys=True))


def stats_of(memory: "Memory") -> dict[str, Any]:
    try:
        data = json.loads((memory.dirs.state / STATS_FILE).read_text(encoding="utf-8"))
        return {"total": int(data["total"]), "by_kind": {str(k): int(v) for k, v in dict(data["by_kind"]).items()}}
    except (OSError, ValueError, KeyError, TypeError):
        return {"total": 0, "by_kind": {}}


def status(memory: "Memory") -> dict[str, Any]:
    section = getattr(memory.config, "redaction", None)
    stats = stats_of(memory)
    return {
        "enabled": bool(section.enabled) if section is not None else True,
        "redact_raw": bool(section.redact_raw) if section is not None else True,
        "redacted": stats["total"],
        "by_kind": stats["by_kind"],
    }


def _mark(m: re.Match, group: int, kind: str, counts: Counter) -> str:
    """The match with its secret group replaced by the redaction marker, counted by kind."""
    counts[kind] += 1
    start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
    whole = m.group(0)
    return whole[:start] + MARKER.format(kind=kind) + whole[end:]
