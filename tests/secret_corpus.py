"""Fake but realistically shaped secrets for the redaction tests. Every one is assembled from
pieces at import time, so this file holds no literal a secret scanner would flag."""

from __future__ import annotations

import base64
import random
import re
import string
from pathlib import Path

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

# --- passwords on command lines, in .netrc, in Chinese, Japanese and Korean prose ---------------
PW = string.ascii_letters + string.digits + "!#%^*_+~"


def _pw(n: int = 14) -> str:
    """A password: letters, digits and a symbol or two (no quotes, spaces or @)."""
    return _c(_r(3, string.ascii_uppercase), _r(n - 5), _r(1, "!#%^*_+~"), _r(1, string.digits))


_add("PGPASSWORD env", _pw(), "PGPASSWORD={s} psql -h db.internal -U app app")
_add("PGPASSWORD export", _pw(), "export PGPASSWORD='{s}'; pg_dump app > app.sql")
_add("MYSQL_PWD env", _pw(), "MYSQL_PWD={s} mysql -u root -e 'show databases'")
_add("mysql -p attached", _pw(), "mysql -uroot -p{s} shop < dump.sql")
_add("mysqldump -p attached", _pw(), "mysqldump -u backup -p{s} --all-databases > all.sql")
_add("mysql -p quoted", _pw(), "mysql -h 10.0.0.5 -u admin -p\"{s}\" -e 'select 1'")
_add("mysql --password space", _pw(), "mysql --user=root --password {s} shop")
_add("mysql -p in chinese prose", _pw(), "在服务器上运行mysql -uroot -p{s}就能登录")
_add("curl -u", _pw(), "curl -u deploy:{s} https://ci.acme.dev/api/build")
_add("curl --user quoted", _pw(), "curl --user 'ci-bot:{s}' -X POST https://jenkins.acme.dev/job/x/build")
_add("docker login -p", _pw(), "docker login -u ci -p {s} registry.acme.dev")
_add("docker login --password", _pw(), "docker login --username ci --password {s} ghcr.io")
_add("sshpass -p", _pw(), "sshpass -p {s} ssh root@10.0.0.7 uptime")
_add("sshpass -p attached", _pw(), "sshpass -p'{s}' scp backup.tgz admin@nas:/vol1/")
_add("openssl passout", _pw(), "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{s}")
_add("redis-cli -a", _pw(), "redis-cli -h cache.internal -a {s} ping")
_add("netrc multi-line", _pw(), "~/.netrc:\nmachine api.acme.dev\n  login bob\n  password {s}\n")
_add("netrc one line", _pw(), "machine git.acme.dev login ci password {s}")
_add("japanese password", _pw(), "サーバーのパスワードは {s} です")
_add("japanese password colon", _pw(), "管理画面のパスワード：{s}")
_add("chinese login password", _pw(), "登录密码 {s}")
_add("chinese account and password", _pw(), "账号 admin 密码 {s}")
_add("traditional chinese password", _pw(), "資料庫密碼為 {s}")
_add("chinese passphrase", _pw(), "数据库口令: {s}")
_add("korean password", _pw(), "비밀번호는 {s} 입니다")
_add("korean password colon", _pw(), "관리자 암호: {s}")
_add("url password with @", _c(_r(6), "@", _r(4), "@", _r(8)), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app")
_add("http url password with @", _c(_r(7), "@", _r(9)), "git remote add origin https://bob:{s}@git.acme.dev/app.git")


# --- card numbers (valid Luhn check digit) --------------------------------------------------------
def _luhn(prefix: str, length: int) -> str:
    body = prefix + _r(length - len(prefix) - 1, string.digits)
    total = 0
    for i, d in enumerate(reversed(body)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return body + str((10 - total % 10) % 10)


def _groups(number: str, sizes: tuple[int, ...], sep: str) -> str:
    out, at = [], 0
    for size in sizes:
        out.append(number[at:at + size])
        at += size
    return sep.join(out)


_add("visa spaced", _groups(_luhn("4539", 16), (4, 4, 4, 4), " "), "charge it to my card {s}, expiry 09/27")
_add("mastercard dashed", _groups(_luhn("5425", 16), (4, 4, 4, 4), "-"), "the company card is {s}")
_add("amex spaced", _groups(_luhn("37", 15), (4, 6, 5), " "), "Amex {s} cvv 1234")
_add("card digits only", _luhn("6011", 16), "{{\"card_number\": \"{s}\", \"exp\": \"11/26\"}}")
_add("visa 19 digits", _luhn("4", 19), "卡号{s}，有效期 2027 年")


# --- seed phrases, long base64 blocks, an unlabelled Twilio auth token -----------------------------
BIP39 = (Path(__file__).resolve().parents[1] / "openclaw_alaya" / "safety" / "bip39-english.txt").read_text().split()
_add("bip39 12 words", " ".join(_rng.choice(BIP39) for _ in range(12)), "my wallet seed: {s}")
_add("bip39 24 words numbered", " ".join(f"{i}. {_rng.choice(BIP39)}" for i in range(1, 25)), "recovery phrase:\n{s}\nstore it offline")
_add("bip39 24 words lines", "\n".join(_rng.choice(BIP39) for _ in range(24)), "{s}")
_add("bip39 15 words", " ".join(_rng.choice(BIP39) for _ in range(15)), "Ledger backup words are {s}.")
_PEM = _c("-----BEGIN ", "RSA PRIVATE KEY-----\n", "\n".join(_r(64, string.ascii_letters + string.digits + "+/") for _ in range(25)),
          "\n-----END ", "RSA PRIVATE KEY-----\n")
_add("kubeconfig client-key-data", base64.b64encode(_PEM.encode()).decode(),
     "users:\n- name: admin\n  user:\n    client-key-data: {s}\n")
_add("long base64 blob", _r(3000, string.ascii_letters + string.digits + "+/"), "the sealed blob is {s} (base64)")
_add("twilio auth token with sid", _r(32, HEX),
     _c("client = Client(\"AC", _r(32, HEX), "\", \"{s}\")"))
_add("twilio auth token in prose", _r(32, HEX), "Twilio creds for the SMS job: {s}")


def secret_pieces(secret: str) -> list[str]:
    """What must not leak: the secret; for multi-line ones each long line of it; for one
    with an `@` each side of it (a URL password cut at its first `@`); for a seed phrase
    each half of it."""
    lines = [ln for ln in secret.splitlines() if len(ln) >= 16 and "-----" not in ln]
    parts = [p for p in secret.split("@") if len(p) >= 4] if "@" in secret else []
    words = list(re.finditer(r"\S+", secret))
    mid = words[len(words) // 2].start() if len(words) >= 12 else 0
    halves = [secret[:mid].strip(), secret[mid:]] if mid else []
    return [secret] + lines + parts + halves
