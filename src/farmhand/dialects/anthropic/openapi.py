"""The Messages dialect's part of the OpenAPI document."""

from __future__ import annotations

from typing import Any

from farmhand.dialects.openapi_parts import OBJECT, OpenApiPaths, operation

ANTHROPIC_MESSAGE = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "enum": ["user", "assistant", "system"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": OBJECT}]},
    },
    "required": ["role", "content"],
}
ANTHROPIC_FIELDS: dict[str, Any] = {
    "model": {"type": "string"},
    "messages": {"type": "array", "items": ANTHROPIC_MESSAGE, "minItems": 1},
    "system": {"anyOf": [{"type": "string"}, {"type": "array", "items": OBJECT}]},
    "tools": {"type": "array", "items": OBJECT},
    "tool_choice": OBJECT,
    "mcp_servers": {"type": "array", "items": OBJECT, "description": "The MCP connector"},
    "thinking": OBJECT,
}
ANTHROPIC_MESSAGES = {
    "type": "object",
    "properties": {
        **ANTHROPIC_FIELDS,
        "max_tokens": {"type": "integer", "minimum": 1},
        "stream": {"type": "boolean"},
        "stop_sequences": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "temperature": {"type": "number", "minimum": 0, "maximum": 1},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0},
        "metadata": OBJECT,
    },
    "required": ["model", "messages", "max_tokens"],
}
ANTHROPIC_COUNT = {
    "type": "object",
    "properties": ANTHROPIC_FIELDS,
    "required": ["model", "messages"],
}


def openapi_paths() -> OpenApiPaths:
    return {
        "/v1/messages": {"post": operation("Anthropic Messages", ANTHROPIC_MESSAGES)},
        "/v1/messages/count_tokens": {"post": operation("Anthropic token count", ANTHROPIC_COUNT)},
    }
