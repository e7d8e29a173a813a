"""The API's gate: Bearer API keys (when any are set) and a limit on request body size.

One pure ASGI middleware, so streaming responses pass through untouched. Refusals use the
error shape of the dialect the path belongs to (see `errors.dialect_for_path`).
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.server.errors import AuthError, TooLargeError, dialect_for_path, error_response

API_KEYS_VARIABLE = "FARMHAND_API_KEYS"
MAX_BODY_VARIABLE = "FARMHAND_MAX_REQUEST_BYTES"
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
OPEN_PATHS = frozenset({"/", "/health"})
"""Paths that answer without a key (liveness checks)."""


def api_keys_from_env(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The keys in `FARMHAND_API_KEYS` (comma-separated; blanks ignored)."""
    source = os.environ if environ is None else environ
    raw = source.get(API_KEYS_VARIABLE, "")
    return frozenset(key.strip() for key in raw.split(",") if key.strip())


def max_body_from_env(environ: dict[str, str] | None = None) -> int:
    source = os.environ if environ is None else environ
    raw = source.get(MAX_BODY_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_BODY_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{MAX_BODY_VARIABLE}={raw!r} must be a positive number of bytes")
    return value


class GateMiddleware:
    """Checks `Authorization: Bearer <key>` when keys are set, and buffers request bodies
    up to `max_body_bytes` (413 beyond that) so handlers never see an oversized body."""

    def __init__(self, app: ASGIApp, *, api_keys: Iterable[str] = (), max_body_bytes: int) -> None:
        self.app = app
        self.api_keys = tuple(k.encode() for k in api_keys)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if self.api_keys and path not in OPEN_PATHS and not self._authorized(scope):
            refusal = AuthError(
                "missing or invalid API key; send it as `Authorization: Bearer <key>`"
                " (the server's keys are set by FARMHAND_API_KEYS)"
            )
            await error_response(refusal, dialect_for_path(path))(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body: bytes = message.get("body", b"")
            size += len(body)
            if size > self.max_body_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, token = bytes(value).partition(b" ")
                if scheme.lower() != b"bearer":
                    return False
                token = token.strip()
                return any(hmac.compare_digest(token, key) for key in self.api_keys)
        return False

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = TooLargeError(
            f"request body is larger than the server's limit of {self.max_body_bytes} bytes;"
            f" send less (the operator can raise it with {MAX_BODY_VARIABLE})"
        )
        path: str = scope.get("path", "")
        await error_response(refusal, dialect_for_path(path))(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
