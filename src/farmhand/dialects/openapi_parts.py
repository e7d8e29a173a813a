"""Pieces of the OpenAPI 3.1 document (`GET /openapi.json`) that more than one dialect uses:
loose schemas for the fields several APIs share, and one operation's description.

Request bodies list the fields farmhand reads, loosely typed where a dialect accepts several
shapes; every operation answers its dialect's error object for a client's mistake (4xx)."""

from __future__ import annotations

from typing import Any

JSON = "application/json"
OBJECT: dict[str, Any] = {"type": "object"}

MESSAGE = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "enum": ["system", "developer", "user", "assistant", "tool"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "array"}, {"type": "null"}]},
        "tool_calls": {"type": "array"},
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
    },
    "required": ["role"],
}
MCP_SERVERS = {
    "type": "array",
    "items": {"anyOf": [{"type": "string"}, {"type": "object"}]},
    "description": "Names of the operator's servers, or server objects (request policy).",
}
TEMPLATE_KWARGS = {
    "type": "object",
    "maxProperties": 32,
    "description": "Variables for the chat template's render (llama-server's field), e.g."
    ' {"enable_thinking": false}; a request\'s own chat_template is refused.',
}
TOOL_LOOP_FIELDS: dict[str, Any] = {
    "mcp_servers": MCP_SERVERS,
    "max_tool_rounds": {"type": "integer", "minimum": 1},
    "jit_tools": {"type": "boolean"},
    "jit_max_tools": {"type": "integer", "minimum": 1},
    "jit_connect_eager": {"type": "boolean"},
    "include_tool_results": {"type": "boolean"},
    "chat_template_kwargs": TEMPLATE_KWARGS,
}
"""farmhand's own fields of a chat body, the same in OpenAI's and Ollama's dialects: the
tool loop's servers and switches, and the chat template's variables."""

OpenApiPaths = dict[str, dict[str, Any]]
"""A part of the document's `paths`: path -> method -> operation."""


def path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def operation(
    summary: str, body: dict[str, Any] | None = None, params: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One operation: its summary, its JSON body's schema, its path parameters."""
    described: dict[str, Any] = {
        "summary": summary,
        "responses": {
            "200": {"description": "OK"},
            "4XX": {"description": "The request was wrong; the body says what to fix."},
        },
    }
    if params:
        described["parameters"] = [path_param(p) for p in params]
    if body is not None:
        described["requestBody"] = {"required": True, "content": {JSON: {"schema": body}}}
    return described
