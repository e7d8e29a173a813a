"""The Ollama dialect's part of the OpenAPI document (farmhand's tool and task routes under
/api included)."""

from __future__ import annotations

from farmhand.dialects.openapi_parts import (
    MCP_SERVERS,
    MESSAGE,
    OBJECT,
    TOOL_LOOP_FIELDS,
    OpenApiPaths,
    operation,
)

OLLAMA_OPTIONS = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number", "minimum": 0},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0},
        "num_predict": {"type": "integer"},
        "seed": {"type": "integer"},
        "stop": {"type": "array", "items": {"type": "string"}},
        "num_ctx": {"type": "integer", "minimum": 1},
    },
}
OLLAMA_FORMAT = {"anyOf": [{"enum": ["", "json"]}, OBJECT]}
KEEP_ALIVE = {"anyOf": [{"type": "number"}, {"type": "string"}]}
THINK = {"anyOf": [{"type": "boolean"}, {"enum": ["low", "medium", "high"]}]}
OLLAMA_CHAT = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "items": MESSAGE},
        "tools": {"type": "array", "items": OBJECT},
        "stream": {"type": "boolean"},
        "options": OLLAMA_OPTIONS,
        "format": OLLAMA_FORMAT,
        "keep_alive": KEEP_ALIVE,
        "think": THINK,
        **TOOL_LOOP_FIELDS,
        "tool_timeout": {"type": "integer", "minimum": 1},
        "task_id": {"type": "string"},
    },
    "required": ["model", "messages"],
}
OLLAMA_GENERATE = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "prompt": {"type": "string"},
        "system": {"type": "string"},
        "template": {"type": "string"},
        "context": {"type": "array", "items": {"type": "integer"}},
        "stream": {"type": "boolean"},
        "raw": {"type": "boolean"},
        "format": OLLAMA_FORMAT,
        "options": OLLAMA_OPTIONS,
        "keep_alive": KEEP_ALIVE,
        "think": THINK,
    },
    "required": ["model"],
}
OLLAMA_MODEL = {
    "type": "object",
    "properties": {"model": {"type": "string"}, "verbose": {"type": "boolean"}},
    "required": ["model"],
}
OLLAMA_PULL = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "stream": {"type": "boolean"},
        "insecure": {"type": "boolean"},
    },
    "required": ["model"],
}
OLLAMA_EMBED = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "input": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "truncate": {"type": "boolean"},
        "dimensions": {"type": "integer", "minimum": 1},
        "options": OLLAMA_OPTIONS,
        "keep_alive": KEEP_ALIVE,
    },
    "required": ["model", "input"],
}
OLLAMA_EMBEDDINGS = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "prompt": {"type": "string"},
        "options": OLLAMA_OPTIONS,
        "keep_alive": KEEP_ALIVE,
    },
    "required": ["model"],
}
TOOL_SEARCH = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string"},
        "mcp_servers": MCP_SERVERS,
        "model": {"type": "string"},
        "context": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
    },
}


def openapi_paths() -> OpenApiPaths:
    return {
        "/api/chat": {"post": operation("Ollama chat", OLLAMA_CHAT)},
        "/api/tags": {"get": operation("Ollama model list")},
        "/api/show": {"post": operation("Ollama model details", OLLAMA_MODEL)},
        "/api/ps": {"get": operation("Ollama loaded models")},
        "/api/generate": {"post": operation("Ollama completion", OLLAMA_GENERATE)},
        "/api/embed": {"post": operation("Ollama embeddings", OLLAMA_EMBED)},
        "/api/embeddings": {"post": operation("Ollama embedding (legacy)", OLLAMA_EMBEDDINGS)},
        "/api/pull": {"post": operation("Pull a catalog model", OLLAMA_PULL)},
        "/api/tools": {"get": operation("Tools of the configured MCP servers")},
        "/api/tools/search": {"post": operation("Search MCP tools", TOOL_SEARCH)},
        "/api/tasks/{task_id}": {"get": operation("A chat's task record", params=("task_id",))},
        "/api/version": {"get": operation("Ollama version")},
    }
