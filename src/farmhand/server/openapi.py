"""The HTTP API described as OpenAPI 3.1, served at `GET /openapi.json`.

Written by hand from the routes (the app is Starlette, not FastAPI), so schema-driven
fuzzers (schemathesis) and client generators can use it. Each dialect describes its own
paths (`dialects/<name>/openapi.py`, read through `dialect_registry.DIALECTS`); the routes
that are no dialect's are described here. Every operation answers its dialect's error object
for a client's mistake (4xx), never a 5xx.
"""

from __future__ import annotations

from typing import Any

from farmhand.dialects.openai.openapi import OPENAI_CHAT
from farmhand.dialects.openapi_parts import OBJECT, OpenApiPaths, operation
from farmhand.server.dialect_registry import DIALECTS

CONFIG = {"anyOf": [OBJECT, {"type": "string"}], "description": "farmhand.yaml keys, or YAML"}
NEW_PROJECT = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "config": CONFIG, "config_template": {}},
    "required": ["name"],
}
PROJECT_UPDATE = {"type": "object", "properties": {"config": CONFIG}, "required": ["config"]}
JSON_RPC = {
    "type": "object",
    "properties": {"jsonrpc": {"const": "2.0"}, "method": {"type": "string"}, "id": {}},
    "required": ["jsonrpc", "method"],
}


A2A_JSON_RPC = {
    "type": "object",
    "properties": {
        "jsonrpc": {"const": "2.0"},
        "method": {
            "enum": [
                "SendMessage",
                "SendStreamingMessage",
                "GetTask",
                "ListTasks",
                "CancelTask",
                "SubscribeToTask",
            ]
        },
        "id": {},
        "params": {"type": "object"},
    },
    "required": ["jsonrpc", "method", "params"],
}
A2A_VERSION = {"name": "A2A-Version", "in": "header", "required": True, "schema": {"const": "1.0"}}


PROJECT = ("namespace", "project")
HAND_CALL = {
    "type": "object",
    "properties": {
        "server": {"type": "string"},
        "tool": {"type": "string"},
        "arguments": OBJECT,
        "approved": {"type": "boolean"},
    },
    "required": ["server", "tool"],
}
HAND_ANSWER = {
    "type": "object",
    "properties": {
        "question_id": {"type": "string"},
        "action": {"type": "string", "enum": ["accept", "decline", "cancel"]},
        "content": OBJECT,
    },
    "required": ["question_id", "action"],
}


def other_paths() -> OpenApiPaths:
    """The routes that are no dialect's."""
    return {
        "/health": {"get": operation("Liveness")},
        "/ready": {"get": operation("Readiness: the store and the models; 503 while draining")},
        "/metrics": {"get": operation("Prometheus metrics (text format); 404 when turned off")},
        "/v1/projects/{namespace}": {
            "get": operation("Projects of a namespace", params=("namespace",)),
            "post": operation("Create a project", NEW_PROJECT, ("namespace",)),
        },
        "/v1/projects/{namespace}/{project}": {
            "get": operation("One project", params=PROJECT),
            "put": operation("Replace a project's config", PROJECT_UPDATE, PROJECT),
            "delete": operation("Delete a project", params=PROJECT),
        },
        "/v1/projects/{namespace}/{project}/chat/completions": {
            "post": operation("Chat with a project's models and tools", OPENAI_CHAT, PROJECT)
        },
        "/mcp": {"post": operation("farmhand's MCP server (streamable HTTP)", JSON_RPC)},
        "/a2a": {
            "post": {
                **operation("farmhand as an A2A 1.0 agent (JSON-RPC)", A2A_JSON_RPC),
                "parameters": [A2A_VERSION],
            }
        },
        "/.well-known/agent-card.json": {"get": operation("The A2A agent card")},
        "/playground/{name}": {"get": operation("A file of the playground page", params=("name",))},
        "/favicon.ico": {"get": operation("The server's icon (SVG)")},
        "/api/mcp/servers": {"get": operation("The configured MCP servers and their state")},
        "/api/mcp/call": {"post": operation("Call one MCP tool by hand", HAND_CALL)},
        "/api/mcp/call/answer": {
            "post": operation("Answer the question a tool called by hand asks", HAND_ANSWER)
        },
        "/api/conversations": {"get": operation("Stored Responses conversations")},
        "/api/eval/reports": {"get": operation("The eval reports under FARMHAND_HOME/eval/")},
        "/eval/reports/{name}": {
            "get": operation("One eval report, by its signed link", params=("name",))
        },
    }


def openapi_document(version: str) -> dict[str, Any]:
    """The OpenAPI document of `farmhand serve`."""
    paths: OpenApiPaths = {}
    for dialect in DIALECTS:
        paths.update(dialect.openapi())
    paths.update(other_paths())
    return {
        "openapi": "3.1.0",
        "info": {"title": "farmhand", "version": version},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "x-api-key": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            },
        },
        "security": [{}, {"bearer": []}, {"x-api-key": []}],
        "paths": paths,
    }
