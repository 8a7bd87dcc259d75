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


# --- issue 30 class 5: shapes generated per class ---------------------------------------------------
# Each class is crossed with several vendors, phrasings, separators and positions, so that a
# pattern that knows only the example of a class fails on its neighbours. CLASS_SIZES counts them.
CLASS_SIZES: dict[str, int] = {}
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits


def _add_class(cls: str, kind: str, secret: str, sentence: str) -> None:
    CLASS_SIZES[cls] = CLASS_SIZES.get(cls, 0) + 1
    _add(f"{cls}: {kind}", secret, sentence)


def _uuid() -> str:
    h = _r(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _stated_pw() -> str:
    """A password as people pick them: a word, a year, a symbol, digits (no quotes, spaces or @)."""
    word = _rng.choice(["Summer", "Winter", "Tiger", "Dragon", "Monkey", "Sunshine", "Qwerty", "Letmein"])
    return f"{word}{_rng.randint(1990, 2030)}{_rng.choice('!#%^*_+~$&')}{_r(3, string.digits)}"


# 1. vendor key formats: a prefix and a body (gitleaks' rules, Chinese clouds and model vendors)
VENDOR_SHAPES = [
    ("alibaba access key id", lambda: _c("LT", "AI", _r(20))),
    ("tencent secret id", lambda: _c("AK", "ID", _r(32))),
    ("volcengine access key", lambda: _c("AK", "LT", _r(40, ALNUM + "-_"))),
    ("gcp hmac key", lambda: _c("GO", "OG1E", _r(55, UPPER))),
    ("new relic user key", lambda: _c("NR", "AK-", _r(27, UPPER))),
    ("new relic insert key", lambda: _c("NR", "II-", _r(32, ALNUM))),
    ("zhipu key", lambda: _c(_r(32, HEX), ".", _r(16))),
    ("sentry user token", lambda: _c("sntr", "yu_", _r(64, HEX))),
    ("grafana service account", lambda: _c("gl", "sa_", _r(32), "_", _r(8, HEX))),
    ("dynatrace token", lambda: _c("dt0", "c01.", _r(24, UPPER), ".", _r(64, UPPER))),
    ("docker hub token", lambda: _c("dckr", "_pat_", _r(27, ALNUM + "-_"))),
    ("tailscale key", lambda: _c("tskey", "-auth-", _r(12), "-", _r(32))),
    ("pinecone key", lambda: _c("pc", "sk_", _r(60, ALNUM + "_"))),
    ("rubygems key", lambda: _c("ruby", "gems_", _r(48, HEX))),
    ("brevo key", lambda: _c("xkey", "sib-", _r(64, HEX), "-", _r(16))),
    ("planetscale password", lambda: _c("pscale", "_pw_", _r(43))),
    ("supabase token", lambda: _c("sb", "p_", _r(40, HEX))),
    ("shippo token", lambda: _c("shippo", "_live_", _r(40, HEX))),
    ("figma token", lambda: _c("fi", "gd_", _r(40, ALNUM + "-_"))),
    ("langsmith key", lambda: _c("ls", "v2_pt_", _r(32, HEX), "_", _r(10, HEX))),
    ("fly.io token", lambda: _c("fo", "1_", _r(43))),
    ("heroku v2 key", lambda: _c("HR", "KU-AA", _r(58))),
    ("square token", lambda: _c("sq0", "atp-", _r(22))),
    ("octopus key", lambda: _c("AP", "I-", _r(26, UPPER))),
    ("circleci token", lambda: _c("CCI", "PAT_", _r(22), "_", _r(40, HEX))),
    ("tavily key", lambda: _c("tv", "ly-", _r(32))),
    ("clojars token", lambda: _c("CLO", "JARS_", _r(60, LOWER_ALNUM))),
    ("openshift token", lambda: _c("sha", "256~", _r(43, ALNUM + "-_"))),
    ("hashicorp terraform token", lambda: _c(_r(14), ".", "atlas", "v1.", _r(64))),
    ("resend key", lambda: _c("r", "e_", _r(8), "_", _r(24))),
]
VENDOR_SENTENCES = [
    "export {name}={{s}}", "the {vendor} key is {{s}} (prod)", "{{{{\"{name_lower}\": \"{{s}}\"}}}}",
    "{vendor} 的密钥：{{s}}，别外传", "- {name}: {{s}}\n- region: cn-hangzhou", "use {{s}} for {vendor}",
]
for i, (vendor, make) in enumerate(VENDOR_SHAPES):
    name = re.sub(r"[^A-Z0-9]+", "_", vendor.upper())
    template = VENDOR_SENTENCES[i % len(VENDOR_SENTENCES)].format(name=name, vendor=vendor, name_lower=name.lower())
    _add_class("vendor key", vendor, make(), template)

# 2. URLs with credentials, for any scheme and any form of user
SCHEMES = ["postgres", "mysql", "mongodb+srv", "redis", "rediss", "amqp", "https", "ftp", "sftp", "smb", "ldap",
           "rtsp", "git+ssh", "nats", "clickhouse", "mssql"]
USERS = ["app", "", "bob@example.com", "default", "svc-backup"]
for i, scheme in enumerate(SCHEMES):
    user = USERS[i % len(USERS)]
    _add_class("url credentials", f"{scheme} user {user!r}", _pw(), f"{scheme.upper()}_URL={scheme}://{user}:{{s}}@host-{i}.internal:1234/db")
_add_class("url credentials", "sentry dsn", _r(32, HEX), "SENTRY_DSN=https://{s}@o123456.ingest.sentry.io/4504")
_add_class("url credentials", "token as the user", _c(_r(8, HEX), _r(32)), "git clone https://{s}@git.acme.dev/app.git")
_add_class("url credentials", "jdbc password parameter", _pw(), "jdbc:postgresql://db:5432/app?user=app&password={s}&ssl=true")
_add_class("url credentials", "pip index-url", _pw(), "[global]\nindex-url = https://deploy:{s}@pypi.acme.dev/simple")

# 3. credential files, as a turn quotes them
CREDENTIAL_FILES = [
    (".pgpass", "db.internal:5432:app:appuser:{s}"),
    (".pgpass wildcard", "*:*:*:postgres:{s}"),
    (".pgpass in prose", "my .pgpass line is 10.0.0.5:6432:shop:admin:{s} — keep it private"),
    (".netrc", "machine ftp.acme.dev login bob password {s}"),
    (".npmrc _authToken", "//registry.npmjs.org/:_authToken={uuid}"),
    (".npmrc _password", "//npm.acme.dev/:_password={s}"),
    (".git-credentials", "https://bob:{s}@github.com"),
    (".env", "DB_PASSWORD={s}\nDEBUG=false"),
    (".env camelCase", "ossrhPassword={s}"),
    ("docker config auth", "{{\"auths\": {{\"ghcr.io\": {{\"auth\": \"{b64}\"}}}}}}"),
    ("docker identitytoken", "{{\"identitytoken\": \"{tok}\"}}"),
    ("kube config token", "users:\n- name: ci\n  user:\n    token: {tok}"),
    ("aws credentials ini", "[default]\nregion = eu-west-1\naws_secret_access_key = {aws}"),
    (".pypirc", "[pypi]\nusername = __token__\npassword = {s}"),
    ("maven settings.xml", "<server><id>central</id><username>ci</username><password>{s}</password></server>"),
    ("nuget config", "<add key=\"ClearTextPassword\" value=\"{s}\" />"),
    ("redis.conf", "requirepass {s}"),
    ("shadow hash", "root:$6$saltsalt${hash}:19000:0:99999:7:::"),
    ("htpasswd bcrypt", "admin:$2y$10${bcrypt}"),
    ("wp-config", "define( 'DB_PASSWORD', '{s}' );"),
    ("yarnrc npmAuthToken", "npmAuthToken: \"{tok}\""),
    ("wpa_supplicant", "network={{\n  ssid=\"home\"\n  psk=\"{s}\"\n}}"),
    ("rclone.conf", "[s3]\ntype = s3\npass = {s}"),
    ("odbc connection string", "Driver={{ODBC Driver 18}};Server=db;Uid=sa;PWD={s};"),
    ("ado.net connection string", "Server=db;Database=app;User Id=sa;Password={s};"),
    ("spring properties", "spring.datasource.password={s}"),
    ("authorization token header", "curl -H 'Authorization: token {tok}' https://api.acme.dev"),
    ("keepalived", "authentication {{\n  auth_type PASS\n  auth_pass {s}\n}}"),
    ("bitcoin.conf", "rpcuser=alice\nrpcpassword={s}"),
    ("os.environ assignment", "os.environ[\"API_TOKEN\"] = \"{tok}\""),
]
for name, text in CREDENTIAL_FILES:
    values = {"s": _pw(), "uuid": _uuid(), "tok": _r(40), "b64": base64.b64encode(f"ci:{_pw()}".encode()).decode(),
              "aws": _r(40, ALNUM + "/+"), "hash": _r(86, ALNUM + "./"), "bcrypt": _r(53, ALNUM + "./")}
    key = next(k for k in values if "{" + k + "}" in text)
    _add_class("credential file", name, values[key], text.replace("{" + key + "}", "{s}"))

# 4. natural-language statements in English: nouns × phrasings
EN_NOUNS = ["password", "passcode", "PIN", "wifi password", "alarm code", "door code", "API key", "access token",
            "secret", "recovery code", "passphrase", "one-time code", "root password", "gate code"]
EN_PHRASES = ["my {n} is {{s}}", "The {n} for the staging db is {{s}}.", "I changed the {n} to {{s}} yesterday",
              "fyi, {n}: {{s}}", "our {n} is now \"{{s}}\"", "remember that the {n} was set to {{s}}"]
for i, noun in enumerate(EN_NOUNS):
    for j in (0, 1, 2):
        phrase = EN_PHRASES[(i + j) % len(EN_PHRASES)].format(n=noun)
        # (codes of eight digits: a byte scan cannot tell a four-digit one from the digits of any file)
        value = _r(8, string.digits) if ("PIN" in noun or "code" in noun) and j == 0 else _stated_pw()
        _add_class("statement (English)", f"{noun} / {phrase[:18]}", value, phrase)

# 5. natural-language statements in Chinese: labels × connectors
ZH_LABELS = ["密码", "口令", "QQ邮箱授权码", "API密钥", "访问令牌", "验证码", "私钥", "提取码", "支付密码", "数据库密码",
             "微信 AppSecret", "秘钥", "登录密码", "管理员口令"]
ZH_CONNECTORS = ["是", "为", "：", ": ", "改成了", " 是 ", "已经改为", "是：", "设置为"]
for i, label in enumerate(ZH_LABELS):
    for j in (0, 1):
        connector = ZH_CONNECTORS[(i * 2 + j) % len(ZH_CONNECTORS)]
        value = (_r(16, string.ascii_lowercase) if "授权码" in label else _r(8, string.digits) if label == "验证码" else _r(8) if label == "提取码"
                 else _r(32, HEX) if "AppSecret" in label else _stated_pw())
        _add_class("statement (Chinese)", f"{label}{connector}", value, f"记一下，{label}{connector}{{s}}，别告诉别人")

# 6. high-entropy tokens next to a secret word (no assignment, a few words between)
NEARBY_WORDS = ["api_hash", "AppSecret", "AccessKey Secret", "secret key", "client secret", "密钥", "令牌", "SK",
                "signing secret", "webhook secret", "private key", "私钥"]
NEARBY_TOKENS = [lambda: _r(32, HEX), lambda: _r(30), _uuid, lambda: _r(40, ALNUM + "-_"), lambda: _r(64, HEX)]
NEARBY_GAPS = [" ", " is ", "：", " for prod ", " (rotated) ", " 是 "]
for i, word in enumerate(NEARBY_WORDS):
    for j in (0, 1):
        token = NEARBY_TOKENS[(i + j) % len(NEARBY_TOKENS)]()
        gap = NEARBY_GAPS[(i + 2 * j) % len(NEARBY_GAPS)]
        _add_class("token near a secret word", f"{word}{gap!r}", token, f"telegram app {i}: {word}{gap}{{s}}")

# 7. 32-byte hex private keys (Ethereum and other chains)
for phrase in ["eth wallet {s}", "PRIVATE_KEY={s}", "metamask 私钥 {s}", "import {s} into the wallet", "key: {s}"]:
    _add_class("hex private key", phrase.split()[0], "0x" + _r(64, HEX), phrase)


# --- text near those shapes that is no secret: it must come out unchanged ---------------------------
HARMLESS_BY_CLASS: dict[str, list[str]] = {
    "ids and digests": [
        "the key commit is 3f9a2c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c", "tx hash 0x" + "5c" * 32,
        "block hash is 0x" + "ab12" * 16, "primary key uuid 550e8400-e29b-41d4-a716-446655440000",
        "token bucket id 123e4567-e89b-12d3-a456-426614174000", "sha256 of the key file: " + "9f86d0" * 10 + "abcd",
        "image sha256:" + "e3b0c442" * 8, "secret rotation ticket OPS-12345 done",
        "public key fingerprint SHA256:" + "nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"[:20],
        "request id 4bf92f3577b34da6a3ce929d0e0e4736 (trace)", "api version 2024-05-01", "commit 3f9a2c1 fixed the token refresh",
    ],
    "versions and names": [
        "the secret sauce is v1.2.3-beta.4+build.5678", "key file report_2024_final.pdf",
        "secret_name: prod-db-credentials-2024", "max_tokens: 4096", "tokens: 1500", "the key is in the drawer",
        "AK-47 and SK hynix are not keys", "keyboard layout: us-intl-2024", "password_min_length = 12",
    ],
    "prose about passwords": [
        "The password is required for login.", "the password is too short", "the token is expired",
        "the secret is out", "The API key is stored in Vault.", "the password is 12 characters long",
        "the password must be 8-20 characters", "my PIN is the same as before", "the password is case-sensitive",
        "Your one-time code is valid for 10 minutes.", "the access token was revoked yesterday",
        "password reset link sent to bob@example.com", "the passphrase protects the key file",
    ],
    "Chinese prose": [
        "密码长度为 16 位", "密码有效期为 90 天", "验证码已发送，请查收", "令牌桶算法限制了速率", "密钥管理服务 KMS 很好用",
        "密码学是一门科学", "请输入密码", "授权码模式是 OAuth2 的一种", "私钥要妥善保管", "提取码在评论区",
    ],
    "URLs and hosts": [
        "https://docs.acme.dev/api/v1/keys?page=2", "git@github.com:acme/app.git", "ssh://git@git.acme.dev:2222/app.git",
        "postgres://app@db.internal:5432/app", "fe80:0:0:0:200:f8ff:fe21:67cf", "2001:db8:85a3:0:0:8a2e:370:7334",
        "redis://cache.internal:6379/0", "https://o123456.ingest.sentry.io/api/4504/envelope/",
        "meeting at 12:30:45:00 sharp", "$HOME/$USER/bin is on the PATH",
    ],
}
HARMLESS_SHAPES = [text for texts in HARMLESS_BY_CLASS.values() for text in texts]


def leaks_in(texts: dict[str, bytes | str], corpus: list[tuple[str, str, str]] | None = None) -> list[tuple[str, str]]:
    """(kind, where) for every piece of a corpus secret (`secret_pieces`) found in the texts."""
    found = []
    for kind, secret, _ in CORPUS if corpus is None else corpus:
        for piece in secret_pieces(secret):
            needle = piece.encode()
            for where, blob in texts.items():
                if (needle in blob) if isinstance(blob, bytes) else (piece in blob):
                    found.append((kind, where))
    return sorted(set(found))
