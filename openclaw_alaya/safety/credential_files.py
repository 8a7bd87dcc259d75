"""Secrets in the shapes of credential files, wherever a turn quotes one.

Key-value files (.env, .npmrc, pip.conf, .pypirc, AWS credentials, kube config, docker
config.json, .my.cnf, rclone.conf, gradle.properties, …) are covered by the redactor's key-name
patterns (`redact._VALUE_PATTERNS`: a key that ends in a secret word, any assignment syntax)
and URLs with credentials by its URL pattern (.git-credentials, pip's index-url). What is left
are the files whose syntax names no key, or names it in another way:

- `.pgpass`: `host:port:database:user:password`;
- `/etc/shadow`, `.htpasswd`: crypt(3) hashes (`$6$salt$hash`, `$2b$12$…`, `$apr1$…`, argon2);
- redis.conf, keepalived, bitcoin.conf: a directive and its value (`requirepass X`);
- XML (Maven settings.xml, NuGet.config, .NET appSettings): `<password>X</password>`,
  `<add key="ClearTextPassword" value="X"/>`;
- PHP and other config code: `define('DB_PASSWORD', 'X')`, `setenv("API_TOKEN", "X")`.

Entries are (kind, needles, pattern, check) as in `secret_statements`.
"""

from __future__ import annotations

import re

# host (a name, an address or *) : port : database : user : password; not an IPv6 address
_PGPASS = (
    r"(?<![^\s\"'`(])(?![0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){5,}(?!\S))(?=[^\s:]*[A-Za-z.*])"
    r"[A-Za-z0-9._*\-\[\]]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:(\S{1,256})"
)
_CRYPT_HASH = r"\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$[^\s:]{8,256}"
_DIRECTIVE = r"(?i)(?<![A-Za-z0-9_])(?:requirepass|masterauth|auth_pass|rpcpassword)(?:[ \t]+|[ \t]*[=:][ \t]*)[\"']?([^\s\"']{1,256})"
_XML_NAME = r"(?:[A-Za-z0-9_.\-]+:)?[A-Za-z0-9_.\-]*"
_XML_PASSWORD = r"(?i)<" + _XML_NAME + r"(?:password|passwd|passphrase|pwd)>([^<\n]{1,256})</"
_XML_SECRET = r"(?i)<" + _XML_NAME + r"(?:secret|token|apikey|api_key|accesskey|privatekey|credentials?)>([^<\n]{1,256})</"
_XML_ATTRIBUTE = (
    r"(?i)\bkey=[\"'][^\"'\n]{0,60}(?:password|passwd|secret|token|apikey|api_key|connectionstring)[^\"'\n]{0,20}[\"']"
    r"\s+value=[\"']([^\"'\n]{1,256})[\"']"
)
_QUOTED_NAME_VALUE = (
    r"[\"'][A-Z0-9_]{0,60}(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|_KEY|APIKEY|SALT|AUTH)[A-Z0-9_]{0,40}[\"']"
    r"\s*,\s*[\"']([^\"'\n]{4,256})[\"']"
)

CREDENTIAL_FILES: list[tuple[str, tuple[str, ...] | re.Pattern, str, str]] = [
    ("password", re.compile(r":(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:\S"), _PGPASS, "any"),
    ("password-hash", ("$",), _CRYPT_HASH, "any"),
    ("password", ("requirepass", "masterauth", "auth_pass", "rpcpassword"), _DIRECTIVE, "any"),
    ("password", ("</",), _XML_PASSWORD, "any"),
    ("secret", ("</",), _XML_SECRET, "random"),
    ("password", ("value=",), _XML_ATTRIBUTE, "any"),
    ("password", ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "_KEY", "APIKEY", "SALT", "AUTH"), _QUOTED_NAME_VALUE, "any"),
]
