"""Vendor key formats: a fixed prefix, then a body of a known alphabet and length.

The formats are those that gitleaks' rules (config/gitleaks.toml) and detect-secrets' plugins
know by prefix and the redactor's own list did not, plus the Chinese clouds (Alibaba `LTAI`,
Tencent `AKID`, Volcengine `AKLT`, Baidu `bce-v3/ALTAK-`) and Zhipu's `<hex32>.<alnum16>`.
Formats without a prefix (a 40-character Cloudflare token, a 32-hex Telegram `api_hash`)
cannot be told from ordinary ids by shape: the redactor finds those next to a word that
announces a secret (`secret_words`).

The whole table costs one scan of the text: `FINDER`, a trie of the prefixes (sre skips every
position whose character starts none of them), finds the candidates, and a match at each one
tells which format it is (`KEY_AFTER[prefix]`, `KINDS[m.lastgroup]`). Each body is a bounded repetition, so both are
linear in the text.
"""

from __future__ import annotations

import re

from .word_trie import trie

# (kind, literal prefix, body after it)
VENDOR_KEYS: list[tuple[str, str, str]] = [
    # --- clouds ---------------------------------------------------------------------------
    ("alibaba-access-key-id", "LTAI", r"[A-Za-z0-9]{12,30}"),
    ("tencent-secret-id", "AKID", r"[A-Za-z0-9]{13,40}"),
    ("volcengine-access-key", "AKLT", r"[A-Za-z0-9_\-]{20,64}"),
    ("baidu-access-token", "bce-v3/ALTAK-", r"[A-Za-z0-9]{10,}/[A-Za-z0-9]{20,}"),
    ("gcp-hmac-key", "GOOG", r"(?=[A-Z]{0,79}[0-9])[A-Z0-9]{20,80}"),
    ("aws-access-key-id", "A3T", r"[A-Z0-9]{17}"),
    ("aws-bedrock-key", "ABSK", r"[A-Za-z0-9+/]{100,270}={0,2}"),
    ("cloudflare-origin-ca-key", "v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}"),
    ("flyio-token", "fo1_", r"[A-Za-z0-9_\-]{43}"),
    ("flyio-token", "fm1", r"[ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    ("flyio-token", "fm2_", r"[A-Za-z0-9+/]{100,}={0,3}"),
    ("heroku-key", "HRKU-AA", r"[A-Za-z0-9_\-]{58}"),
    ("openshift-token", "sha256~", r"[A-Za-z0-9_\-]{43}"),
    ("yandex-key", "AQVN", r"[A-Za-z0-9_\-]{35,38}"),
    ("yandex-key", "t1.", r"[A-Za-z0-9_\-]{10,}=*\.[A-Za-z0-9_\-]{86}=*"),
    ("tailscale-key", "tskey-", r"[a-z]{3,8}-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}"),
    ("planetscale-token", "pscale_", r"(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}"),
    ("supabase-key", "sbp_", r"[a-f0-9]{40}"),
    ("supabase-key", "sb_secret_", r"[A-Za-z0-9_\-]{20,}"),
    ("render-key", "rnd_", r"[A-Za-z0-9]{32}"),
    ("netlify-token", "nfp_", r"[A-Za-z0-9]{36,}"),
    ("clickhouse-key", "4b1d", r"[A-Za-z0-9]{38}"),
    # --- observability ------------------------------------------------------------------------
    ("newrelic-key", "NR", r"(?:AK|AA|II|IQ|JS|RA|SP)-[A-Za-z0-9\-]{19,40}"),
    ("sentry-token", "sntryu_", r"[a-f0-9]{64}"),
    ("sentry-token", "sntrys_", r"eyJ[A-Za-z0-9+/=_]{40,}"),
    ("dynatrace-token", "dt0c01.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("grafana-token", "glc_", r"[A-Za-z0-9+/]{32,400}={0,3}"),
    ("grafana-token", "glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("langsmith-key", "lsv2_", r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    # --- code, packages, CI ---------------------------------------------------------------------
    ("gitlab-token", "glffct-", r"[A-Za-z0-9_\-]{20,}"),
    ("gitlab-token", "gloas-", r"[A-Za-z0-9_\-]{20,}"),
    ("gitlab-token", "GR1348941", r"[A-Za-z0-9_\-]{20}"),
    ("bitbucket-token", "ATBB", r"[A-Za-z0-9_=.\-]{32,}"),
    ("docker-hub-token", "dckr_", r"(?:pat|oat)_[A-Za-z0-9_\-]{27,}"),
    ("rubygems-key", "rubygems_", r"[a-f0-9]{48}"),
    ("nuget-key", "oy2", r"[a-z0-9]{43}"),
    ("clojars-token", "CLOJARS_", r"[a-z0-9]{60}"),
    ("circleci-token", "CCIPAT_", r"[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    ("buildkite-token", "bkua_", r"[a-f0-9]{40}"),
    ("sonar-token", "sq", r"[upa]_[a-f0-9]{40}"),
    ("figma-token", "figd_", r"[A-Za-z0-9_\-]{40,}"),
    ("prefect-key", "pnu_", r"[A-Za-z0-9]{36}"),
    ("pulumi-token", "pul-", r"[a-f0-9]{40}"),
    ("readme-key", "rdme_", r"[a-z0-9]{70}"),
    ("harness-key", "pat.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("harness-key", "sat.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("airtable-token", "pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("artifactory-key", "AKCp", r"[A-Za-z0-9]{69}"),
    ("infracost-key", "ico-", r"[A-Za-z0-9]{32}"),
    ("octopus-key", "API-", r"[A-Z0-9]{26}"),
    ("onepassword-token", "ops_eyJ", r"[A-Za-z0-9+/]{100,}={0,3}"),
    ("onepassword-token", "A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"),
    # --- payments, commerce, messaging ------------------------------------------------------------
    ("square-token", "sq0", r"(?:atp|csp)-[A-Za-z0-9_\-]{22,60}"),
    ("square-token", "EAAA", r"[A-Za-z0-9_\-]{22,60}"),
    ("facebook-token", "EAA", r"[CM][A-Za-z0-9]{100,}"),
    ("stripe-key", "sk_prod_", r"[A-Za-z0-9]{10,99}"),
    ("stripe-key", "rk_prod_", r"[A-Za-z0-9]{10,99}"),
    ("shippo-token", "shippo_", r"(?:live|test)_[a-fA-F0-9]{40}"),
    ("duffel-token", "duffel_", r"(?:test|live)_[A-Za-z0-9_\-=]{43}"),
    ("flutterwave-key", "FLW", r"(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{12,32}(?:-X)?"),
    ("easypost-key", "EZ", r"[AT]K[A-Za-z0-9]{54}"),
    ("brevo-key", "xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("brevo-key", "xsmtpsib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("resend-key", "re_", r"[A-Za-z0-9]{8}_[A-Za-z0-9]{24}"),
    ("typeform-token", "tfp_", r"[A-Za-z0-9_\-.=]{59}"),
    ("frameio-token", "fio-u-", r"[A-Za-z0-9_\-=]{64}"),
    ("mapbox-token", "sk.eyJ", r"[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("adobe-secret", "p8e-", r"[A-Za-z0-9]{32}"),
    ("settlemint-token", "sm_", r"(?:aat|pat|sat)_[A-Za-z0-9]{16}"),
    ("scalingo-token", "tk-us-", r"[A-Za-z0-9_\-]{48}"),
    ("intra42-secret", "s-s4t2", r"(?:ud|af)-[a-f0-9]{64}"),
    # --- model and search APIs ---------------------------------------------------------------
    ("pinecone-key", "pcsk_", r"[A-Za-z0-9_]{40,}"),
    ("tavily-key", "tvly-", r"(?:dev-)?[A-Za-z0-9]{32}"),
    ("firecrawl-key", "fc-", r"[a-f0-9]{32}"),
    ("elevenlabs-key", "sk_", r"[a-f0-9]{48}"),
]

_T = r"A-Za-z0-9_\-"


KINDS: dict[str, str] = {f"v{i}": kind for i, (kind, _, _) in enumerate(VENDOR_KEYS)}
_PREFIXES = sorted({prefix for _, prefix, _ in VENDOR_KEYS})
# the trie's empty branch sorts first, so FINDER matches the shortest prefix at a position
FINDER = re.compile(trie(_PREFIXES, not_after="[" + _T + "]"))


def _keys_after(found: str) -> re.Pattern:
    """The formats whose prefix starts with `found`, as one pattern with a group per format."""
    alts = [f"(?P<v{i}>{re.escape(p)}{body})" for i, (_, p, body) in enumerate(VENDOR_KEYS) if p.startswith(found)]
    return re.compile("(?:" + "|".join(alts) + r")(?![" + _T + r"])")


KEY_AFTER: dict[str, re.Pattern] = {prefix: _keys_after(prefix) for prefix in _PREFIXES}
