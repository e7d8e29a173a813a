"""Errors over HTTP: one table from farmhand's errors to a status, rendered per dialect.

A client mistake (bad JSON, unknown model, a refused MCP server, a bad tool) is always a 4xx
whose message says what to fix; only farmhand's own failures and its backends' are 5xx.

    RequestError                  the request itself is wrong (status, param, code)
    BusyError                     the model's queue is full -> 429 with Retry-After
    UnknownModelError             `model` names no configured model -> 404
    ConfigError (from the request's servers, tools, ...)               -> 400
    PolicyError (a program, folder or host the operator did not allow)  -> 403
    DeploymentsDownError (every deployment of a model is down) -> 503 with Retry-After
    ProviderError (the model backend failed)                           -> 502
    ToolServerError (an MCP server failed to start or answer)          -> 502
    anything else                                                      -> 500

Each dialect renders the same (status, message, type, param, code) its own way (its
`dialects/<name>/errors.py`: OpenAI's `{"error": {"message", "type", "param", "code"}}`,
Ollama's `{"error": "message"}`, Anthropic's `{"type": "error", "error": {"type",
"message"}}`), and /mcp and /a2a (refused before the MCP or A2A SDK sees the request) answer
a JSON-RPC error object (`mcp_body`). Which shape a path answers in is
`dialect_registry.error_body_for_path`.
"""

from __future__ import annotations

import logging
from typing import Any

from farmhand.dialects.api_error import ApiError, ErrorBody
from farmhand.dialects.openai.errors import openai_body
from farmhand.errors import (
    AuthError,
    BusyError,
    ConfigError,
    DeploymentsDownError,
    LoopError,
    ModelError,
    PolicyError,
    ProviderError,
    RequestError,
    ShuttingDownError,
    TooLargeError,
    ToolError,
    ToolServerError,
    UnknownModelError,
)
from farmhand.server.json_response import JSONResponse

log = logging.getLogger("farmhand.server")

# (exception class, status, OpenAI error type, code); the first match wins, so subclasses
# come before their bases.
ERROR_TABLE: tuple[tuple[type[BaseException], int, str, str | None], ...] = (
    (AuthError, 401, "authentication_error", "invalid_api_key"),
    (TooLargeError, 413, "invalid_request_error", "request_too_large"),
    (ShuttingDownError, 503, "server_error", "shutting_down"),
    (BusyError, 429, "rate_limit_error", "model_busy"),
    (RequestError, 400, "invalid_request_error", None),
    (UnknownModelError, 404, "invalid_request_error", "model_not_found"),
    (ConfigError, 400, "invalid_request_error", None),
    (PolicyError, 403, "permission_error", "not_allowed"),
    (ModelError, 503, "server_error", "model_unavailable"),
    (DeploymentsDownError, 503, "server_error", "backends_down"),
    (ProviderError, 502, "server_error", "backend_error"),
    (ToolServerError, 502, "server_error", "tool_server_error"),
    (ToolError, 400, "invalid_request_error", None),
    (LoopError, 500, "server_error", None),
)


def api_error(exc: BaseException) -> ApiError:
    """The status and message for `exc`; unexpected exceptions are logged and hidden."""
    for kind, status, type_, code in ERROR_TABLE:
        if isinstance(exc, kind):
            if isinstance(exc, RequestError):
                return ApiError(exc.status, str(exc), type_, exc.param, exc.code or code)
            return ApiError(status, str(exc), type_, None, code)
    log.exception("unexpected error while serving a request", exc_info=exc)
    return ApiError(
        500, f"internal error ({type(exc).__name__}); see the server log", "server_error"
    )


def mcp_body(error: ApiError) -> dict[str, Any]:
    # -32600 Invalid Request for every refusal: the request never reached the MCP server.
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": error.message}}


def error_response(exc: BaseException, error_body: ErrorBody = openai_body) -> JSONResponse:
    """The HTTP response for `exc`, its body in a dialect's error shape (OpenAI's unless
    told)."""
    error = api_error(exc)
    return JSONResponse(error_body(error), status_code=error.status, headers=error_headers(exc))


def error_headers(exc: BaseException) -> dict[str, str] | None:
    """The headers an error answer carries: how to authenticate (401), how long to wait
    before retrying (429 and 503 from a busy model)."""
    if isinstance(exc, BusyError | DeploymentsDownError):
        return {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, AuthError):
        return {"WWW-Authenticate": "Bearer"}
    return None
