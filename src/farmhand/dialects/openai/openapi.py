"""The Chat Completions dialect's part of the OpenAPI document."""

from __future__ import annotations

from farmhand.dialects.openapi_parts import (
    MESSAGE,
    OBJECT,
    TOOL_LOOP_FIELDS,
    OpenApiPaths,
    operation,
)

OPENAI_CHAT = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "items": MESSAGE, "minItems": 1},
        "stream": {"type": "boolean"},
        "stream_options": OBJECT,
        "tools": {"type": "array", "items": OBJECT},
        "tool_choice": {"anyOf": [{"type": "string"}, OBJECT]},
        "parallel_tool_calls": {"type": "boolean"},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "max_tokens": {"type": "integer", "minimum": 1},
        "max_completion_tokens": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "stop": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "n": {"type": "integer", "minimum": 1},
        **TOOL_LOOP_FIELDS,
        "tools_path": {"type": "string"},
        "tool_timeout": {"type": "number", "minimum": 1},
    },
    "required": ["model", "messages"],
}
"""The body of a chat completion (a project's chat route takes it too)."""


def openapi_paths() -> OpenApiPaths:
    return {
        "/v1/chat/completions": {"post": operation("OpenAI chat completion", OPENAI_CHAT)},
        "/v1/models": {"get": operation("OpenAI model list")},
        "/v1/models/{model}": {"get": operation("One model", params=("model",))},
    }
