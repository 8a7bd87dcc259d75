"""Reaching the database (issue 34): the URL from `ALAYA_DATABASE_URL` or `storage.url` (never
with a password in config.json: config.py refuses one), and a connection that fails as one line
naming the server (`DatabaseError`, exit 1), not a driver traceback. TLS and every other libpq
setting pass through in the URL (`?sslmode=verify-full&sslrootcert=…`), as do the PG* variables
and a pgpass file."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, DatabaseError

if TYPE_CHECKING:
    import psycopg

    from ...config import Config

URL_ENV = "ALAYA_DATABASE_URL"
CONNECT_TIMEOUT = 10  # seconds; libpq's default is to wait forever on a server that drops packets


def database_url(config: "Config") -> str:
    """The database this data directory's memory lives in: the environment first, so that a
    host can point the same config.json at its own server or add a password."""
    url = os.environ.get(URL_ENV) or config.storage.url
    if not url:
        raise ConfigError(f"storage.backend postgres needs a database: set {URL_ENV} or storage.url")
    return url


def shown(url: str) -> str:
    """The URL as a message may show it: host, port, user and database, no password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - an unparsable URL: say so rather than echo it
        return "the database URL (unparsable)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def driver() -> Any:
    """psycopg, or a one-line error naming the extra that brings it."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError("storage.backend postgres needs the postgres extra: "
                          "pip install 'openclaw-alaya[postgres]'") from None
    return psycopg


def connect(url: str, *, application: str = "alaya") -> "psycopg.Connection":
    """A connection in autocommit mode (transactions are opened explicitly, one per write
    hold), named after this host and process in `pg_stat_activity` so that a lock's holder can
    be named; `DatabaseError` in one line when the server cannot be reached or refuses."""
    psycopg = driver()
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                               application_name=f"{application} {socket.gethostname()} pid {os.getpid()}"[:63])
    except psycopg.Error as exc:
        raise DatabaseError(f"storage: cannot connect to {shown(url)}: {first_line(exc)}") from None


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
