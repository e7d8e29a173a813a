"""The HTTP API described as OpenAPI 3.1, served at `GET /openapi.json`.

Written by hand from the routes (the app is Starlette, not FastAPI), so schema-driven
fuzzers (schemathesis) and client generators can use it. Request bodies list the fields
farmhand reads, loosely typed where the dialect accepts several shapes; every operation
answers its dialect's error object for a client's mistake (4xx), never a 5xx.
"""

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
        "mcp_servers": MCP_SERVERS,
        "max_tool_rounds": {"type": "integer", "minimum": 1},
        "tool_timeout": {"type": "integer", "minimum": 1},
        "include_tool_results": {"type": "boolean"},
        "jit_tools": {"type": "boolean"},
        "jit_max_tools": {"type": "integer", "minimum": 1},
        "jit_connect_eager": {"type": "boolean"},
        "task_id": {"type": "string"},
        "chat_template_kwargs": TEMPLATE_KWARGS,
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


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _operation(
    summary: str, body: dict[str, Any] | None = None, params: tuple[str, ...] = ()
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": {
            "200": {"description": "OK"},
            "4XX": {"description": "The request was wrong; the body says what to fix."},
        },
    }
    if params:
        operation["parameters"] = [_path_param(p) for p in params]
    if body is not None:
        operation["requestBody"] = {"required": True, "content": {JSON: {"schema": body}}}
    return operation


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


def openapi_document(version: str) -> dict[str, Any]:
    """The OpenAPI document of `farmhand serve`."""
    paths: dict[str, dict[str, Any]] = {
        "/health": {"get": _operation("Liveness")},
        "/v1/chat/completions": {"post": _operation("OpenAI chat completion", OPENAI_CHAT)},
        "/v1/models": {"get": _operation("OpenAI model list")},
        "/v1/responses": {"post": _operation("OpenAI Responses: create a response", RESPONSES)},
        "/v1/responses/{response_id}": {
            "get": _operation("A stored response", params=("response_id",)),
            "delete": _operation("Delete a stored response", params=("response_id",)),
        },
        "/v1/responses/{response_id}/input_items": {
            "get": _operation("A stored response's input items", params=("response_id",))
        },
        "/v1/models/{model}": {"get": _operation("One model", params=("model",))},
        "/v1/projects/{namespace}": {
            "get": _operation("Projects of a namespace", params=("namespace",)),
            "post": _operation("Create a project", NEW_PROJECT, ("namespace",)),
        },
        "/v1/projects/{namespace}/{project}": {
            "get": _operation("One project", params=PROJECT),
            "put": _operation("Replace a project's config", PROJECT_UPDATE, PROJECT),
            "delete": _operation("Delete a project", params=PROJECT),
        },
        "/v1/projects/{namespace}/{project}/chat/completions": {
            "post": _operation("Chat with a project's models and tools", OPENAI_CHAT, PROJECT)
        },
        "/v1/messages": {"post": _operation("Anthropic Messages", ANTHROPIC_MESSAGES)},
        "/v1/messages/count_tokens": {"post": _operation("Anthropic token count", ANTHROPIC_COUNT)},
        "/api/chat": {"post": _operation("Ollama chat", OLLAMA_CHAT)},
        "/api/tags": {"get": _operation("Ollama model list")},
        "/api/show": {"post": _operation("Ollama model details", OLLAMA_MODEL)},
        "/api/ps": {"get": _operation("Ollama loaded models")},
        "/api/generate": {"post": _operation("Ollama completion", OLLAMA_GENERATE)},
        "/api/embed": {"post": _operation("Ollama embeddings", OLLAMA_EMBED)},
        "/api/embeddings": {"post": _operation("Ollama embedding (legacy)", OLLAMA_EMBEDDINGS)},
        "/api/pull": {"post": _operation("Pull a catalog model", OLLAMA_PULL)},
        "/api/tools": {"get": _operation("Tools of the configured MCP servers")},
        "/api/tools/search": {"post": _operation("Search MCP tools", TOOL_SEARCH)},
        "/api/tasks/{task_id}": {"get": _operation("A chat's task record", params=("task_id",))},
        "/api/version": {"get": _operation("Ollama version")},
        "/mcp": {"post": _operation("farmhand's MCP server (streamable HTTP)", JSON_RPC)},
        "/playground/{name}": {
            "get": _operation("A file of the playground page", params=("name",))
        },
        "/favicon.ico": {"get": _operation("The server's icon (SVG)")},
        "/api/mcp/servers": {"get": _operation("The configured MCP servers and their state")},
        "/api/mcp/call": {"post": _operation("Call one MCP tool by hand", HAND_CALL)},
        "/api/mcp/call/answer": {
            "post": _operation("Answer the question a tool called by hand asks", HAND_ANSWER)
        },
        "/api/conversations": {"get": _operation("Stored Responses conversations")},
        "/api/eval/reports": {"get": _operation("The eval reports under FARMHAND_HOME/eval/")},
        "/eval/reports/{name}": {
            "get": _operation("One eval report, by its signed link", params=("name",))
        },
    }
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
