"""The door of `alaya mcp --http`: a request without a valid bearer token (store/tokens.py) is
answered 401 before the MCP SDK sees it; one with a token carries its caller to the tools.

The caller is handed on the way the SDK's own OAuth middleware does it (a starlette user in
the ASGI scope, and the SDK's auth context variable), so the SDK binds each MCP session to the
token that opened it (a session id used with another token is "Session not found") and the
tools read the caller with `current_caller()`. The Host check and the body limit stay the
SDK's (transport security). TLS is not done here: bind to loopback, or put a reverse proxy that
terminates TLS in front (README, "MCP server").
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from ..errors import AlayaError
from ..store.tokens import OWNER, Caller, TokenBook

ASGIApp = Any


class BearerGate:
    """ASGI middleware: 401 for a missing, malformed or unknown token; the caller otherwise."""

    def __init__(self, app: ASGIApp, book: TokenBook) -> None:
        self.app = app
        self.book = book

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts and stops
            await self.app(scope, receive, send)
            return
        caller = self._caller(scope)
        if caller is None:
            await _unauthorized(send)
            return
        user = AuthenticatedUser(AccessToken(token="", client_id=caller.name, scopes=[]))
        reset = auth_context_var.set(user)
        try:
            await self.app({**scope, "user": user}, receive, send)
        finally:
            auth_context_var.reset(reset)

    def _caller(self, scope: dict[str, Any]) -> Caller | None:
        header = next((value for key, value in scope["headers"] if key == b"authorization"), b"")
        scheme, _, token = header.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        try:
            return self.book.caller(token)
        except AlayaError as exc:  # a token file opened to others since the start: nobody gets in
            print(f"alaya mcp: {exc}", file=sys.stderr)
            return None


def current_caller() -> Caller | None:
    """Who the tool call under way comes from: the caller of the request's token, or None when
    the call carries none (stdio, where the client started this process as the owner)."""
    token = get_access_token()
    if token is None:
        return None
    return Caller(token.client_id, owner=token.client_id == OWNER)


async def _unauthorized(send: Any) -> None:
    body = json.dumps({"error": "invalid_token",
                       "error_description": "a bearer token is required: `alaya mcp token show` (the owner's) or "
                                            "`alaya mcp token add NAME`"}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b'Bearer realm="alaya", error="invalid_token"')]})
    await send({"type": "http.response.body", "body": body})
