"""Fake but realistically shaped secrets for the redaction tests. Every one is assembled from
pieces at import time, so this file holds no literal a secret scanner would flag."""

from __future__ import annotations

import random
import string

_rng = random.Random(6)


def _r(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits


def _c(*parts: str) -> str:
    return "".join(parts)


# (kind of secret, the secret, a sentence that carries it)
CORPUS: list[tuple[str, str, str]] = []


def _add(kind: str, secret: str, sentence: str) -> None:
    CORPUS.append((kind, secret, sentence.format(s=secret)))


_add("openai legacy", _c("s", "k-", _r(48)), "Use the OpenAI key {s} for the batch job.")
_add("openai project", _c("sk", "-proj-", _r(56), "_", _r(20)), "export OPENAI_API_KEY={s}")
_add("openai service account", _c("sk", "-svcacct-", _r(60)), "the service account key is {s}")
_add("anthropic", _c("sk", "-ant-", "api03-", _r(80, string.ascii_letters + string.digits + "-_"), "AA"), "ANTHROPIC_API_KEY=\"{s}\"")
_add("openrouter", _c("sk", "-or-v1-", _r(64, HEX)), "openrouter: {s}")
_add("github classic", _c("gh", "p_", _r(36)), "git clone https://{s}@github.com/acme/app.git")
_add("github oauth", _c("gh", "o_", _r(36)), "the oauth token {s} expired")
_add("github fine-grained", _c("github", "_pat_", _r(22), "_", _r(59)), "GH_TOKEN={s}")
_add("gitlab", _c("gl", "pat-", _r(20, string.ascii_letters + string.digits + "-_")), "gitlab token {s} in CI")
_add("slack bot", _c("xo", "xb-", _r(12, string.digits), "-", _r(13, string.digits), "-", _r(24)), "SLACK_BOT_TOKEN={s}")
_add("slack user", _c("xo", "xp-", _r(12, string.digits), "-", _r(12, string.digits), "-", _r(13, string.digits), "-", _r(32, HEX)), "slack user token {s}")
_add("stripe live", _c("sk", "_live_", _r(99)), "charge with {s}")
_add("stripe restricted", _c("rk", "_live_", _r(99)), "restricted stripe key {s}")
_add("google api", _c("AI", "za", "Sy", _r(33, string.ascii_letters + string.digits + "-_")), "maps key={s}")
_add("aws access key id", _c("AK", "IA", _r(16, UPPER)), "aws_access_key_id = {s}")
_add("aws secret access key", _r(40, string.ascii_letters + string.digits + "/+"), "aws_secret_access_key = {s}")
_add("azure storage", _r(86, string.ascii_letters + string.digits + "+/") + "==",
     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net")
_add("azure client secret", _c(_r(3), "8Q", "~", _r(34, string.ascii_letters + string.digits + "_-")), "AZURE_CLIENT_SECRET={s}")
_add("huggingface", _c("h", "f_", _r(34)), "HF token {s}")
_add("npm", _c("np", "m_", _r(36)), "//registry.npmjs.org/:_authToken={s}")
_add("sendgrid", _c("S", "G.", _r(22), ".", _r(43)), "sendgrid {s}")
_add("twilio api key", _c("S", "K", _r(32, HEX)), "twilio api key {s}")
_add("telegram bot", _c(_r(10, string.digits), ":", "AA", _r(33, string.ascii_letters + string.digits + "_-")), "bot token {s}")
_add("discord bot", _c("MT", _r(24), ".", _r(6), ".", _r(38)), "discord token {s}")
_add("jwt", _c("ey", "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".", "ey", "J", _r(60), ".", _r(43, string.ascii_letters + string.digits + "-_")), "session cookie {s}")
_add("bearer", _r(40, string.ascii_letters + string.digits + "._-"), "curl -H 'Authorization: Bearer {s}' https://api.acme.dev")
_add("basic auth", _r(32, string.ascii_letters + string.digits), "Authorization: Basic {s}")
_add("url password", _c("Pg", _r(14)), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app")
_add("password assignment", _c("Tr0ub4", _r(8)), "the admin password={s} (do not share)")
_add("api_key assignment", _r(32, HEX), "config: api_key: \"{s}\"")
_add("secret in json", _r(40), "{{\"client_secret\": \"{s}\"}}")
_add("chinese password", _c("Qx", _r(10)), "服务器的密码是{s}，别告诉别人")
_add("pem private key",
     _c("-----BEGIN ", "RSA PRIVATE KEY-----\n", "\n".join(_r(64, string.ascii_letters + string.digits + "+/") for _ in range(6)),
        "\n-----END ", "RSA PRIVATE KEY-----"),
     "here is the deploy key:\n{s}\nkeep it safe")
_add("openssh private key",
     _c("-----BEGIN ", "OPENSSH PRIVATE KEY-----\n", _r(70, string.ascii_letters + string.digits + "+/"), "\n-----END ", "OPENSSH PRIVATE KEY-----"),
     "{s}")
_add("google oauth secret", _c("GOC", "SPX-", _r(28, string.ascii_letters + string.digits + "_-")), "client secret {s}")
_add("pypi", _c("py", "pi-", "AgEIcHlwaS5vcmc", _r(60, string.ascii_letters + string.digits + "_-")), "twine token {s}")
_add("digitalocean", _c("do", "p_v1_", _r(64, HEX)), "DO token {s}")


def secret_pieces(secret: str) -> list[str]:
    """What must not leak: the secret, and for multi-line ones each long line of it."""
    lines = [ln for ln in secret.splitlines() if len(ln) >= 16 and "-----" not in ln]
    return [secret] + lines
