"""OpenAI's error object: `{"error": {"message", "type", "param", "code"}}`."""

from __future__ import annotations

from typing import Any

from farmhand.dialects.api_error import ApiError


def openai_body(error: ApiError) -> dict[str, Any]:
    return {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": error.param,
            "code": error.code,
        }
    }
