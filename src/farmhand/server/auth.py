"""The API's gate: API keys (when any are set; as a Bearer token or Anthropic's
`x-api-key`), a limit on request body size, and bodies that are strict JSON sent as
`application/json`.

One pure ASGI middleware, so streaming responses pass through untouched. Refusals use the
error shape of the dialect the path belongs to (see `dialect_registry.error_body_for_path`).

Why the media type matters: a web page can POST `text/plain` or a form to any address
without a CORS preflight; `application/json` needs one, which farmhand answers only for the
operator's `server.allowed_origins`. So a body sent as anything else is refused (415) before
it is read, and every body that is read is checked once (`json_body.load_json`) and kept for
the handler.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.errors import AuthError, ConfigError, RequestError, TooLargeError
from farmhand.server.browser_guard import OPEN_PATHS
from farmhand.server.dialect_registry import error_body_for_path
from farmhand.server.errors import error_response
from farmhand.server.eval_reports_api import is_report_path
from farmhand.server.json_body import load_json, remember
from farmhand.service.state import CLIENT_KEY

API_KEYS_VARIABLE = "FARMHAND_API_KEYS"
MAX_BODY_VARIABLE = "FARMHAND_MAX_REQUEST_BYTES"
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
BODY_METHODS = ("POST", "PUT", "PATCH")
JSON_MEDIA_TYPE = "application/json"


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
        raise ConfigError(f"{MAX_BODY_VARIABLE}={raw!r} must be a positive number of bytes")
    return value


class GateMiddleware:
    """Checks `Authorization: Bearer <key>` when keys are set, buffers request bodies up to
    `max_body_bytes` (413 beyond that) so handlers never see an oversized body, refuses a
    body that is not `application/json` (415), and reads it strictly once (400)."""

    def __init__(self, app: ASGIApp, *, api_keys: Iterable[str] = (), max_body_bytes: int) -> None:
        self.app = app
        self.api_keys = tuple(k.encode() for k in api_keys)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        key = self._key(scope) if self.api_keys else None
        if key is not None:  # names the client, for bounds per client (/mcp sessions)
            scope[CLIENT_KEY] = hashlib.sha256(key).hexdigest()[:16]
        elif self.api_keys and path not in OPEN_PATHS and not is_report_path(path):
            refusal: RequestError = AuthError(
                "missing or invalid API key; send it as `Authorization: Bearer <key>`"
                " or `x-api-key: <key>` (the server's keys are set by FARMHAND_API_KEYS)"
            )
            await error_response(refusal, error_body_for_path(path))(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        if scope.get("method") not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        media_type = _media_type(scope)
        if media_type != JSON_MEDIA_TYPE and _has_body(scope):
            refusal = RequestError(
                f"the request body must be JSON sent with `Content-Type: {JSON_MEDIA_TYPE}`"
                f" (got {media_type or 'no Content-Type'}); with curl add"
                f" -H 'Content-Type: {JSON_MEDIA_TYPE}'",
                code="unsupported_media_type",
                status=415,
            )
            await error_response(refusal, error_body_for_path(path))(scope, receive, send)
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
        raw = b"".join(chunks)
        if raw.strip():  # an empty body is refused by whatever needs one (or by routing)
            try:
                remember(scope, load_json(raw))
            except RequestError as exc:
                await error_response(exc, error_body_for_path(path))(scope, receive, send)
                return
        await self.app(scope, _replay(raw, receive), send)

    def _key(self, scope: Scope) -> bytes | None:
        """The server's key the request sent as `Authorization: Bearer <key>` or as
        Anthropic's `x-api-key: <key>`, if any."""
        offered: list[bytes] = []
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, token = bytes(value).partition(b" ")
                if scheme.lower() == b"bearer":
                    offered.append(token.strip())
            elif name == b"x-api-key":
                offered.append(bytes(value).strip())
        for key in self.api_keys:
            if any(hmac.compare_digest(token, key) for token in offered):
                return key
        return None

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = TooLargeError(
            f"request body is larger than the server's limit of {self.max_body_bytes} bytes;"
            f" send less (the operator can raise it with {MAX_BODY_VARIABLE})"
        )
        path: str = scope.get("path", "")
        await error_response(refusal, error_body_for_path(path))(scope, receive, send)


def _has_body(scope: Scope) -> bool:
    """Whether the request carries a body at all (one without is refused by the handler
    that needs it, or by routing: a 405 says more than a 415 there)."""
    for name, value in scope.get("headers", []):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


def _media_type(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            return bytes(value).decode("latin-1").split(";", 1)[0].strip().lower()
    return ""


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
