"""Ollama's error object: `{"error": "message"}`."""

from __future__ import annotations

from typing import Any

from farmhand.dialects.api_error import ApiError


def ollama_body(error: ApiError) -> dict[str, Any]:
    return {"error": error.message}
