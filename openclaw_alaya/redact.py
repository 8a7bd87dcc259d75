"""Secret redaction: what must never be stored, embedded or injected (issue 6, anchors §4.13).

`Redactor.redact(text)` replaces every secret it recognises with `[REDACTED:<kind>]` and
counts them by kind. The built-in store-filter plugin (`redaction_plugin`) runs it over every
session before `Alaya.ingest` stores anything (all paths: `alaya ingest`, `--stdin`, the
session-end hook, the Python API), and `inject.build` runs it once more over the injected text
(for memories stored before redaction was on).

Patterns, most specific first (a later pattern never sees text an earlier one replaced). They
are grouped by the class of secret they close (issue 30), not by the example that was found:

- private key blocks (PEM, OpenSSH, PGP; also JSON-escaped ones, also cut-off ones);
- vendor key formats: provider keys by their fixed prefixes (Anthropic, OpenAI, GitHub, GitLab,
  Slack, Stripe, Google, AWS, Azure, Hugging Face, …, here) and the table of
  `safety.vendor_keys` (gitleaks' and detect-secrets' prefixes, the Chinese clouds), searched
  in one pass; 32-byte hex private keys (`0x…`, not a tx hash); Zhipu's `<hex32>.<alnum16>`;
- a Twilio auth token next to its account SID or in text about Twilio;
- JWTs, bearer/basic authorization headers;
- values a name announces: a key named like a secret, matched by the name's last word
  (`password=`, `secret:`, `_authToken=`, `"identitytoken": "…"`, `PGPASSWORD=…`,
  `AccessKeySecret：…`) followed by a value that looks like one (for password-like keys
  anything but a placeholder; for the rest a long, high-entropy value); an Authorization
  header of any scheme; URLs of any scheme with a password (the user empty or an e-mail
  address) or with a token as the user (a Sentry DSN); password flags on command lines
  (`--password X`, `mysql -pX`, `curl -u user:X`, `docker login -p X`, `sshpass -p X`,
  `redis-cli -a X`, `-passout pass:X`); `.netrc` entries;
- credential files whose syntax names no key (`safety.credential_files`: `.pgpass`, crypt(3)
  hashes, `requirepass X`, XML, `define('DB_PASSWORD', …)`);
- statements (`safety.secret_statements`): "my password is …", "the door code for … is …",
  "I changed the PIN to …", `密码是…`, `QQ邮箱授权码：…`, `访问令牌是 …`, `AppSecret是…`,
  `パスワードは…`, `비밀번호는…`; and a high-entropy token a few words after a secret word
  (`api_hash 0123…`, `微信 AppSecret 3f9a…`, `AccessKey Secret Xk9…`) unless what stands
  between names an id or a digest (`key commit 3f9a…`);
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

from .safety import vendor_keys
from .safety.credential_files import CREDENTIAL_FILES
from .safety.secret_shapes import CARD_CANDIDATE, is_card_number, seed_phrase_spans
from .safety.secret_statements import (
    NEARBY_NEEDLES,
    NEARBY_TOKEN,
    NOT_SECRET_BETWEEN,
    ON_LOWER,
    STATEMENTS,
)
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
_PATTERNS: list[tuple[str, tuple[str, ...] | None, str, int]] = [
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
    ("aws-secret-access-key", ('secret_access', 'secretaccess', 'secret_key', 'secretkey', 'session_token', 'sessiontoken'), r"(?i)(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|aws_?session_?token)[\"']?\s*(?:[:=]|=>)\s*[\"']?([A-Za-z0-9/+=]{40,})", 1),
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
    # formats without a prefix, shapes no ordinary id has (`safety.vendor_keys` has the rest;
    # Zhipu's `<hex32>.<alnum16>` is found with the random tokens, `_sub_random`)
    ("terraform-token", ('atlasv1',), _START + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}" + _END, 0),
    ("maxmind-key", ('_mmk',), _START + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _END, 0),
    ("jwt", ('eyJ',), _START + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", 0),
    # an Ethereum (or other 32-byte hex) private key; not one a hash word announces (a tx hash)
    ("hex-private-key", ('0x',), r"0x(?<![A-Za-z0-9_]0x)[0-9a-fA-F]{64}(?![0-9A-Za-z_])", 0),
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
_PASSWORD_KEYS = r"(?:pass(?:word|wd|phrase)?|pwd|db_?pass(?:word)?|passcode|pin_?code|psk)"
# a secret key name is matched by its last word, whatever comes before (`_authToken`,
# `identitytoken`, `AccessKeySecret`): the value must look random, so `tokens: 1500` stays
_SECRET_KEYS = (
    r"(?:secret|token|api_?key|access_?key|auth_?key|private_?key|credentials?|auth|authorization|"
    r"session_?key|signing_?key|encryption_?key|master_?key|x-api-key|api_?hash|app_?hash|signature)"
    r"(?:[_.\-](?:base|prod|dev|live|test|staging|v?\d{1,2}))?"
)
# the word before is not a word part, or a name ends in PASSWORD (`PGPASSWORD`, `ossrhPassword`)
_PASSWORD_NAME = (r"(?:(?<![A-Za-z0-9])" + _PASSWORD_KEYS + r"|(?-i:(?<=[A-Z0-9])(?:PASSWORD|PASSWD|PASSPHRASE|PWD))"
                  r"|(?-i:(?<=[a-z0-9])(?:Password|Passwd|Passphrase|Pwd)))")
# `=`, `:`, `=>`, `:=`, full-width ones, after a quoted or indexed name (`os.environ["X"] = …`)
_ASSIGN = r"[\"']?\]?\s*(?:[:=：＝]|=>|:=)\s*(?:[\"']([^\"'\n]+)[\"']|([^\s\"',;&<>]+))"
# a flag's value: quoted, or a word that is no other flag
_FLAG_VALUE = r"""(?:"([^"\n]{1,256})"|'([^'\n]{1,256})'|(?![-$])([^\s"';|&<>]{1,256}))"""
_ON_COMMAND_LINE = r"\b[^\n|;&]{0,300}?\s"  # the rest of one command, lazily, up to the flag
_VALUE_PATTERNS: list[tuple[str, tuple[str, ...] | re.Pattern, str, str]] = [
    ("password", ("pass", "pwd", "pin", "psk"), r"(?i)" + _PASSWORD_NAME + _ASSIGN, "any"),
    ("secret", ("secret", "token", "key", "auth", "credential", "hash", "signature"), r"(?i)" + _SECRET_KEYS + _ASSIGN, "random"),
    # URLs of any scheme: the user may be empty (`redis://:PASS@host`) or hold an `@` (an
    # e-mail address), the password too (and a raw `#` or `?`): it ends at the last `@` before
    # the host; or a token is the user (a Sentry DSN's key, `https://<token>@github.com`)
    ("url-password", ('://',), r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?:[^\s:/?#\[\]]{0,128}:([^\s/]{1,256})"
                               r"|(?=[a-z_\-]{0,80}[0-9])(?=[0-9_\-]{0,80}[a-z])([a-z0-9_\-]{16,128}))@", "any"),
    # an HTTP Authorization header of any scheme (`token …`, `Digest …`, `SSWS …`)
    ("secret", ("authorization",), r"(?i)\bAuthorization\s*[:=]\s*[\"']?[A-Za-z][A-Za-z0-9_\-]{0,30}\s+([^\s\"']{8,512})", "any"),
    # command lines: --password VALUE, mysql -pVALUE, curl -u user:VALUE, docker login -p VALUE, …
    ("password", ("--",), r"(?i)" + _START + r"--(?!no-)(?:[a-z0-9]{1,30}-){0,3}(?:password|passwd|pass|pwd)" + _END + r"[ \t]+" + _FLAG_VALUE, "any"),
    ("password", ("mysql", "mariadb"), _START + r"(?:mysql|mariadb)[\w-]{0,20}" + _ON_COMMAND_LINE + r"-p" + _FLAG_VALUE, "any"),
    ("password", ("curl",), _START + r"curl" + _ON_COMMAND_LINE + r"""(?:-u|--user)(?:[ \t]+|=)?["']?[^\s:"']{1,128}:([^\s"']{1,256})""", "any"),
    ("password", ("login",), _START + r"(?:docker|podman|buildah|skopeo|nerdctl|oras|helm registry|cf)[ \t]+login"
                             + _ON_COMMAND_LINE + r"-p[ \t]+" + _FLAG_VALUE, "any"),
    ("password", ("sshpass",), _START + r"sshpass" + _ON_COMMAND_LINE + r"-p[ \t]*" + _FLAG_VALUE, "any"),
    ("password", ("redis-cli",), _START + r"redis-cli" + _ON_COMMAND_LINE + r"-a[ \t]+" + _FLAG_VALUE, "any"),
    ("password", ("pass:",), _START + r"-pass(?:in|out|word)?[ \t]+pass:" + _FLAG_VALUE, "any"),
    # .netrc: machine HOST [login USER] [account ACCT] password VALUE, on one line or several
    ("password", ("password",), r"(?i)\b(?:machine[ \t\n]+\S{1,253}|default)(?:\s+(?:login|account)\s+\S{1,256}){0,2}\s+password\s+(\S{1,256})", "any"),
    *CREDENTIAL_FILES,
    *STATEMENTS,
]
# case-insensitive patterns written in lower case, with no case-sensitive part: `_matches`
# runs them on the lower-cased text
_ON_LOWER: set[str] = {_VALUE_PATTERNS[1][2], *ON_LOWER}


_PLACEHOLDER = re.compile(
    r"(?i)^(?:\*+|x{3,}|\.{3,}|<[^>]*>|\{\{.*\}\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|%[A-Za-z_]+%|\[REDACTED[^\]]*\]|"
    r"none|null|nil|true|false|undefined|empty|redacted|changeme|change_me|example|your[_\-].*|my[_\-]?(?:password|secret|token|key)|"
    r"password|secret|token|required|optional|string|str|env|os\.environ.*|process\.env.*|getenv.*|stdin|prompt|"
    # an OpenClaw session key (`session_key: agent:main:subagent:<uuid>`) is an address, not a secret
    r"agent:[A-Za-z0-9_.-]{1,64}(?::[A-Za-z0-9_.@+-]{1,128}){1,6})$"
)


_Needles = list[tuple[bool, str, frozenset[str]]]


def _needles(needles: tuple[str, ...] | re.Pattern, pattern: str) -> _Needles | re.Pattern:
    """The needles as they are tested: lower-cased for a case-insensitive pattern, with the
    lower-case characters each needs; a compiled needle (a cheap pattern that must match
    first) stays as it is."""
    if isinstance(needles, re.Pattern):
        return needles
    ci = pattern.startswith("(?i)")
    return [(ci, n.lower() if ci else n, frozenset(n.lower())) for n in needles]


def _present(needles: _Needles | re.Pattern | None, text: str, lower: str, chars: frozenset[str] | set[str]) -> bool:
    """The text holds one of the needles. `chars` is the set of the lower-cased text's
    characters: a needle with a character the text lacks is not searched for (a missing
    needle costs a scan of the whole text, and there are some 180 needles: a third of the
    redactor's time on word-dense text, issue 30's throughput)."""
    if needles is None:
        return True
    if isinstance(needles, re.Pattern):
        return needles.search(text) is not None
    return any(need <= chars and n in (lower if ci else text) for ci, n, need in needles)


# a whole run of token characters (a kubeconfig's client-key-data is thousands long), and
# the `.<alnum16>` after it that makes 32 hex digits a Zhipu key
_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{32,}(\.[A-Za-z0-9]{16})?(?![A-Za-z0-9+/=_\-])")
_ZHIPU_ID = re.compile(r"[0-9a-f]{32}")
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


_VERSION = re.compile(r"(?i)v?\d+\.\d+")
_WORDS_OR_NUMBERS = re.compile(r"(?:[A-Za-z]+|\d+)(?:[_\-./](?:[A-Za-z]+|\d+))+")


def _tokenish(value: str) -> bool:
    """A token next to a secret word is one when it has letters and digits, is no version
    (`v1.2.3-beta.4`) and no name made of words and numbers (`report_2024_final.pdf`)."""
    return (len(value) >= 16 and re.search(r"[0-9]", value) is not None and re.search(r"[A-Za-z]", value) is not None
            and not _VERSION.match(value) and not _WORDS_OR_NUMBERS.fullmatch(value) and entropy(value) >= 3.0)


# what a value must be for its pattern's replacement (`secret_statements` describes them)
_CHECKS: dict[str, Callable[[str], bool]] = {
    "any": lambda value: len(value.strip()) >= 4,
    "random": _looks_random,
    "stated": lambda value: len(value) >= 4 and not re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)+", value),
}
# a match of these patterns is redacted only when the check on the whole match says so
_HASH_WORD_BEFORE = re.compile(
    r"(?i)\b(?:tx|txid|txn|hash|transaction|block|blockhash|root|topic|slot|commit|digest|sha256|交易|哈希|区块)\w{0,20}"
    r"(?:\s+(?:is|was|=))?[\s:=：#\"'`]{0,6}$"
)
_SHAPE_CHECKS: dict[str, Callable[[re.Match], bool]] = {
    # a 32-byte hex value is a key unless a hash word stands right before it (a tx hash)
    "hex-private-key": lambda m: not _HASH_WORD_BEFORE.search(m.string[max(0, m.start() - 40):m.start()]),
}


@functools.cache
def _built(source: str) -> re.Pattern:
    """A pattern, compiled the first time a text holds one of its needles: compiling all the
    built-in ones costs tens of milliseconds, which a session start whose memories hold no
    secret never needs."""
    return re.compile(source)


class _OnText:
    """A match found in the lower-cased text, read in the text itself (same positions)."""

    __slots__ = ("start", "end", "re", "string")

    def __init__(self, m: re.Match, text: str) -> None:
        self.start, self.end, self.re, self.string = m.start, m.end, m.re, text

    def group(self, i: int = 0) -> str | None:
        start = self.start(i)
        return None if start < 0 else self.string[start:self.end(i)]


def _substituted(pattern: re.Pattern | str, text: str, lower: str, replace: Callable[[re.Match], str | None]) -> str:
    """The text with each match of the pattern replaced by what `replace` makes of it (None:
    left as it is), as `re.sub` would. A case-insensitive pattern in `_ON_LOWER` is run without
    the flag on the lower-cased text (a case-insensitive alternation of words costs sre several
    times a case-sensitive one, at every position of the text), its matches read in the text."""
    if isinstance(pattern, str) and pattern in _ON_LOWER and len(lower) == len(text):  # no character moved
        out, at = [], 0
        for found in _built(pattern.removeprefix("(?i)")).finditer(lower):
            new = replace(_OnText(found, text))  # type: ignore[arg-type]
            if new is not None:
                out += [text[at:found.start()], new]
                at = found.end()
        return "".join(out) + text[at:] if out else text
    compiled = _built(pattern) if isinstance(pattern, str) else pattern
    return compiled.sub(lambda m: replace(m) or m.group(0), text)


@dataclass
class Redactor:
    extra_patterns: list[tuple[str, str]] = field(default_factory=list)
    allowlist: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # patterns stay source text until a text holds one of their needles (`_built`); a
        # user's own patterns (no needles: always tried) are compiled now, so a bad one fails at once
        self._shapes = [(kind, None if n is None else _needles(n, p), p, g) for kind, n, p, g in _PATTERNS]
        self._shapes += [(_kind(name), None, _built(p).pattern, 0) for name, p in self.extra_patterns]
        self._values = [(kind, _needles(n, p), p, check) for kind, n, p, check in _VALUE_PATTERNS]
        self._nearby = _needles(NEARBY_NEEDLES, NEARBY_TOKEN)
        self._allow = [re.compile(p) for p in self.allowlist]

    def redact(self, text: str) -> tuple[str, Counter]:
        """(redacted text, count per kind)."""
        counts: Counter = Counter()
        if not text:
            return text, counts
        lower = text.lower()
        chars = set(lower)
        for kind, needles, source, group in self._shapes:
            if _present(needles, text, lower, chars):
                before = sum(counts.values())
                text = self._sub(source, text, lower, kind, group, counts, check=_SHAPE_CHECKS.get(kind))
                if sum(counts.values()) != before:
                    lower = text.lower()
                    chars = set(lower)
        redacted = self._sub_vendor_keys(text, counts)
        if redacted is not text:
            text, lower = redacted, redacted.lower()
            chars = set(lower)
        for kind, needles, source, check in self._values:
            if _present(needles, text, lower, chars):
                redacted = self._sub_value(source, text, lower, kind, counts, check=_CHECKS[check])
                if redacted is not text:
                    text, lower = redacted, redacted.lower()
                    chars = set(lower)
        if _present(self._nearby, text, lower, chars):
            text = self._sub_nearby(text, lower, counts)
        text = self._sub(CARD_CANDIDATE, text, text, "card-number", 0, counts, check=lambda m: is_card_number(m.group(0)))
        text = self._sub_spans(text, list(seed_phrase_spans(text)), "seed-phrase", counts)
        text = self._sub_random(text, counts)
        return text, counts

    def _sub_vendor_keys(self, text: str, counts: Counter) -> str:
        """Every vendor key format in one scan (`safety.vendor_keys`)."""
        out, at = [], 0
        for found in vendor_keys.FINDER.finditer(text):
            if found.start() < at:
                continue
            m = vendor_keys.KEY_AFTER[found.group(0)].match(text, found.start())
            if m is None or self._allowed(m.group(0)):
                continue
            kind = vendor_keys.KINDS[m.lastgroup or ""]
            counts[kind] += 1
            out += [text[at:m.start()], MARKER.format(kind=kind)]
            at = m.end()
        return "".join(out) + text[at:] if out else text

    def _sub_nearby(self, text: str, lower: str, counts: Counter) -> str:
        """A token that a secret word announces a few words before (`secret_statements`),
        unless what stands between says it is an id or a digest."""
        def replace(m: re.Match) -> str | None:
            token, whole = m.group(2), m.group(0)
            marker = text.rfind("[REDACTED:", max(0, m.start() - 40), m.start() + 1)
            if ((marker >= 0 and "]" not in text[marker:m.start()]) or (whole[:2].lower() in ("ak", "sk") and (whole[:2] not in ("AK", "SK") or text[m.start() - 1:m.start()].isalnum()))
                    or re.search(NOT_SECRET_BETWEEN, m.group(1)) or not _tokenish(token) or MARKER_RE.search(whole)
                    or self._allowed(token)):
                return None
            return _mark(m, 2, "secret", counts)

        return _substituted(NEARBY_TOKEN, text, lower, replace)

    def _sub_random(self, text: str, counts: Counter) -> str:
        """A long token of upper- and lower-case letters and digits with high entropy and no
        context is a key in all likelihood (hex digests and UUIDs have no upper case)."""
        def replace(m: re.Match) -> str:
            value = m.group(0)
            if m.group(1) and _ZHIPU_ID.fullmatch(value[:-17]) and not self._allowed(value):
                counts["zhipu-key"] += 1
                return MARKER.format(kind="zhipu-key")
            if (entropy(value) < _RANDOM_ENTROPY or not (re.search("[a-z]", value) and re.search("[A-Z]", value)
                    and re.search("[0-9]", value)) or self._allowed(value)):
                return value
            counts["high-entropy-token"] += 1
            return MARKER.format(kind="high-entropy-token")

        return _RANDOM_TOKEN.sub(replace, text)

    def _allowed(self, secret: str) -> bool:
        return any(p.fullmatch(secret) for p in self._allow)

    def _sub(self, pattern: re.Pattern | str, text: str, lower: str, kind: str, group: int, counts: Counter,
             check: Callable[[re.Match], bool] | None = None) -> str:
        def replace(m: re.Match) -> str | None:
            secret = m.group(group)
            if not secret or MARKER_RE.fullmatch(secret) or self._allowed(secret) or (check and not check(m)):
                return None
            return _mark(m, group, kind, counts)

        return _substituted(pattern, text, lower, replace)

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

    def _sub_value(self, source: str, text: str, lower: str, kind: str, counts: Counter, *,
                   check: Callable[[str], bool]) -> str:
        """Replace the value a match announces: its first group that matched, when it passes
        `check` and is no placeholder."""
        def replace(m: re.Match) -> str | None:
            group = next((i for i in range(1, m.re.groups + 1) if m.start(i) >= 0), 0)
            value = m.group(group)
            if (not value or MARKER_RE.search(value) or _PLACEHOLDER.match(value.strip())
                    or self._allowed(value) or not check(value)):
                return None
            return _mark(m, group, kind, counts)

        return _substituted(source, text, lower, replace)


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
