"""The bearer tokens of `alaya mcp --http`: who may reach the memory tools over the network.

- The owner's token, `tokens/owner` (one line, mode 0600 in the owner-only data directory),
  made on first use. The owner's own processes read it; nobody else can. Its calls act as the
  owner: their writes are deliberate (`manual`) and may be injected.
- Agent tokens, `alaya mcp token add NAME`: shown once, kept only as a SHA-256 digest in
  `tokens/agents.json`. A call with one acts as agent NAME (its scope) and what it writes is
  stored as `untrusted`: found by search, never injected on its own (docs/provenance.md).
  `alaya mcp token revoke NAME` ends it for a running server at its next request.

A token is compared by digest with `hmac.compare_digest`, against every token, without stopping
at the first that matches (constant time in what the caller sent). A token file another user
could read or change is refused with a one-line message saying what to chmod.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, NotFoundError
from ..models import check_id, now_iso
from .fsutil import atomic_write, ensure_dir
from .trust import UntrustedDataDirError

OWNER = "owner"  # the caller a token of tokens/owner is
_PREFIX = "alaya_"


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: the owner, or the agent a token was made for."""

    name: str
    owner: bool


class TokenBook:
    """The tokens of one data directory (its `tokens/` folder)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "tokens"
        self.owner_file = self.folder / "owner"
        self.agents_file = self.folder / "agents.json"
        self._cache: tuple[tuple[object, ...], dict[str, bytes]] | None = None

    # --- the owner's token --------------------------------------------------------------

    def owner_token(self) -> str:
        """The owner's token, made now if there is none yet."""
        try:
            return self._read_private(self.owner_file).strip()
        except FileNotFoundError:
            ensure_dir(self.folder)
            token = _new_token()
            try:  # O_EXCL: two first uses at once end with one token
                fd = os.open(self.owner_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return self._read_private(self.owner_file).strip()
            with os.fdopen(fd, "w") as handle:
                handle.write(token + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            return token

    # --- agent tokens -------------------------------------------------------------------

    def add(self, name: str) -> str:
        """A new token for agent `name` (shown once; only its digest is kept)."""
        check_id(name, "token name")
        if name == OWNER:
            raise InputError(f"{OWNER!r} is the owner's token (`alaya mcp token show`); name the agent")
        agents = self._agents()
        if name in agents:
            raise InputError(f"a token named {name!r} exists; `alaya mcp token revoke {name}` first")
        token = _new_token()
        agents[name] = {"sha256": _digest(token).hex(), "created": now_iso()}
        self._write_agents(agents)
        return token

    def revoke(self, name: str) -> None:
        agents = self._agents()
        if agents.pop(name, None) is None:
            raise NotFoundError(f"no token named {name!r} (see `alaya mcp token list`)")
        self._write_agents(agents)

    def listing(self) -> list[dict[str, str]]:
        return [{"name": name, "created": entry.get("created", "")} for name, entry in sorted(self._agents().items())]

    # --- checking a request -------------------------------------------------------------

    def caller(self, presented: str) -> Caller | None:
        """Who `presented` (a bearer token) is, or None. Every token is compared, each by
        `hmac.compare_digest`, so the time taken does not tell how much of a guess was right."""
        wanted = _digest(presented.strip())
        found: Caller | None = None
        for name, digest in self._digests().items():
            if hmac.compare_digest(wanted, digest) and found is None:
                found = Caller(name, owner=name == OWNER)
        return found

    def _digests(self) -> dict[str, bytes]:
        """Name → token digest, the owner's included; read again only when a file changed (one
        stat each per request), so a revoke reaches a running server at once."""
        if self._cache is None or self._cache[0] != self._files():
            digests = {name: bytes.fromhex(e["sha256"]) for name, e in self._agents().items()}
            digests[OWNER] = _digest(self.owner_token())
            self._cache = (self._files(), digests)  # after owner_token, which may have made its file
        return self._cache[1]

    def _files(self) -> tuple[object, ...]:
        return tuple(_stamp(p) for p in (self.owner_file, self.agents_file))

    def _agents(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self._read_private(self.agents_file))
        except FileNotFoundError:
            return {}
        except ValueError:
            raise InputError(f"{self.agents_file} is not valid JSON; remove it and add the tokens again") from None
        if not isinstance(data, dict) or not all(
                isinstance(e, dict) and _is_digest(e.get("sha256")) for e in data.values()):
            raise InputError(f"{self.agents_file} is not a token list; remove it and add the tokens again")
        return data

    def _write_agents(self, agents: dict[str, dict[str, str]]) -> None:
        atomic_write(self.agents_file, json.dumps(agents, indent=2, sort_keys=True))

    def _read_private(self, path: Path) -> str:
        """`path`'s text, refused unless it is this user's and no one else may read or change it
        (checked on the open file, so it is the file that was read)."""
        with open(path, encoding="utf-8") as handle:
            st = os.fstat(handle.fileno())
            if st.st_uid != os.getuid():
                raise UntrustedDataDirError(f"{path} belongs to uid {st.st_uid}, not to you; remove it "
                                            "and make the tokens again")
            if stat.S_IMODE(st.st_mode) & 0o077:
                raise UntrustedDataDirError(f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o}); "
                                            f"run `chmod 600 {path}` and make new tokens (others may have read it)")
            return handle.read()


def _new_token() -> str:
    return _PREFIX + secrets.token_urlsafe(32)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size
