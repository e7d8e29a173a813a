"""The Chat Completions dialect's part of the OpenAPI document."""

from __future__ import annotations

from farmhand.dialects.openapi_parts import (
    MCP_SERVERS,
    MESSAGE,
    OBJECT,
    TEMPLATE_KWARGS,
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
        "mcp_servers": MCP_SERVERS,
        "tools_path": {"type": "string"},
        "max_tool_rounds": {"type": "integer", "minimum": 1},
        "tool_timeout": {"type": "number", "minimum": 1},
        "jit_tools": {"type": "boolean"},
        "jit_max_tools": {"type": "integer", "minimum": 1},
        "jit_connect_eager": {"type": "boolean"},
        "include_tool_results": {"type": "boolean"},
        "chat_template_kwargs": TEMPLATE_KWARGS,
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
