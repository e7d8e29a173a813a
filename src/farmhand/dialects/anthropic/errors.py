"""Anthropic's error object: `{"type": "error", "error": {"type", "message"}}`."""

from __future__ import annotations

from typing import Any

from farmhand.dialects.api_error import ApiError

# Anthropic names its error types by status (docs: "Errors"); other 5xx are api_error.
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}


def anthropic_body(error: ApiError) -> dict[str, Any]:
    kind = ANTHROPIC_TYPES.get(error.status)
    if kind is None:
        kind = "api_error" if error.status >= 500 else "invalid_request_error"
    return {"type": "error", "error": {"type": kind, "message": error.message}}
