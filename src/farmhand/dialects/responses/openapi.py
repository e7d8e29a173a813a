"""The Responses dialect's part of the OpenAPI document."""

from __future__ import annotations

from farmhand.dialects.openapi_parts import (
    MCP_SERVERS,
    OBJECT,
    TEMPLATE_KWARGS,
    OpenApiPaths,
    operation,
)

RESPONSES = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "input": {"anyOf": [{"type": "string"}, {"type": "array", "items": OBJECT}]},
        "instructions": {"type": "string"},
        "stream": {"type": "boolean"},
        "store": {"type": "boolean"},
        "previous_response_id": {"type": "string"},
        "tools": {"type": "array", "items": OBJECT},
        "tool_choice": {"anyOf": [{"type": "string"}, OBJECT]},
        "parallel_tool_calls": {"type": "boolean"},
        "max_output_tokens": {"type": "integer", "minimum": 1},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "metadata": OBJECT,
        "text": OBJECT,
        "reasoning": OBJECT,
        "mcp_servers": MCP_SERVERS,
        "disabled_mcp_servers": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "max_tool_rounds": {"type": "integer", "minimum": 1},
        "chat_template_kwargs": TEMPLATE_KWARGS,
    },
    "required": ["model", "input"],
}


def openapi_paths() -> OpenApiPaths:
    response = ("response_id",)
    return {
        "/v1/responses": {"post": operation("OpenAI Responses: create a response", RESPONSES)},
        "/v1/responses/{response_id}": {
            "get": operation("A stored response", params=response),
            "delete": operation("Delete a stored response", params=response),
        },
        "/v1/responses/{response_id}/input_items": {
            "get": operation("A stored response's input items", params=response)
        },
    }
