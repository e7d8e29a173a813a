"""The Responses API's `mcp` tool -> a `service.mcp_tools.McpTool`.

    {"type": "mcp", "server_label": "docs", "server_url": "https://host/mcp",
     "headers": {...}, "authorization": "token", "allowed_tools": [...] | {"tool_names",
     "read_only"}, "require_approval": "always" | "never" | {"always": {...}, "never": {...}}}

Without `server_url`, `server_label` names a server the operator defined (farmhand's
extension; OpenAI's hosted `connector_id`s do not exist here). As with OpenAI, a call needs
the client's approval unless `require_approval` says otherwise. Whether the URL's host may
be reached is the request policy's call, made when the response runs.

The output items of these tools are built here too: `mcp_list_tools`, `mcp_call` and
`mcp_approval_request`.
"""

from __future__ import annotations

import re
from typing import Any

from farmhand.config.models import McpServerConfig
from farmhand.errors import RequestError
from farmhand.messages import ToolCall, ToolResult
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.service.mcp_tools import ApprovalRule, McpTool, split_name
from farmhand.tools.definition import ToolDefinition

LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def parse_mcp_tool(tool: dict[str, Any], where: str) -> McpTool:
    label = tool.get("server_label")
    if not isinstance(label, str) or not LABEL.match(label):
        raise RequestError(
            f"{where}: an mcp tool needs a server_label of letters, digits, _ and -",
            param="tools",
        )
    if tool.get("connector_id") is not None:
        raise RequestError(
            f"{where}: connector_id names an OpenAI-hosted connector, which farmhand does not"
            " have; give the server's server_url instead",
            param="tools",
        )
    allowed, read_only = _allowed(tool.get("allowed_tools"), where)
    return McpTool(
        label=label,
        server=_server(tool, label, where),
        allowed=allowed,
        read_only=read_only,
        approval=_approval(tool.get("require_approval"), where),
    )


def _server(tool: dict[str, Any], label: str, where: str) -> McpServerConfig | str:
    url = tool.get("server_url")
    if url is None:
        return label
    headers = tool.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise RequestError(f"{where}.headers must map header names to strings", param="tools")
    token = tool.get("authorization")
    if token is not None:
        if not isinstance(token, str):
            raise RequestError(f"{where}.authorization must be a string", param="tools")
        headers = {**headers, "Authorization": f"Bearer {token}"}
    transport = "sse" if isinstance(url, str) and url.rstrip("/").endswith("/sse") else "http"
    server = {"name": label, "url": url, "transport": transport, "headers": headers}
    return parse_mcp_servers([server], param=f"{where}.server_url")[0]


def _allowed(value: object, where: str) -> tuple[frozenset[str] | None, bool]:
    if value is None:
        return None, False
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value), False
    if isinstance(value, dict):
        names = value.get("tool_names")
        if names is not None and not (
            isinstance(names, list) and all(isinstance(v, str) for v in names)
        ):
            raise RequestError(
                f"{where}.allowed_tools.tool_names must be a list of names", param="tools"
            )
        return (frozenset(names) if names is not None else None), value.get("read_only") is True
    raise RequestError(
        f'{where}.allowed_tools must be a list of tool names or {{"tool_names": [...],'
        ' "read_only": true}',
        param="tools",
    )


def _approval(value: object, where: str) -> ApprovalRule:
    if value is None or value == "always":
        return ApprovalRule(default=True)
    if value == "never":
        return ApprovalRule(default=False)
    if isinstance(value, dict) and set(value) <= {"always", "never"}:
        always, always_read_only = _filter(value.get("always"), f"{where}.require_approval.always")
        never, never_read_only = _filter(value.get("never"), f"{where}.require_approval.never")
        return ApprovalRule(True, always, never, always_read_only, never_read_only)
    raise RequestError(
        f'{where}.require_approval must be "always", "never" or {{"always": {{"tool_names":'
        ' [...]}, "never": {"tool_names": [...]}}',
        param="tools",
    )


def _filter(value: object, where: str) -> tuple[frozenset[str], bool]:
    if value is None:
        return frozenset(), False
    if not isinstance(value, dict):
        raise RequestError(
            f'{where} must be {{"tool_names": [...], "read_only": ...}}', param="tools"
        )
    names = value.get("tool_names") or []
    if not isinstance(names, list) or not all(isinstance(v, str) for v in names):
        raise RequestError(f"{where}.tool_names must be a list of names", param="tools")
    return frozenset(names), value.get("read_only") is True


def list_tools_item(item_id: str, label: str, tools: tuple[ToolDefinition, ...]) -> dict[str, Any]:
    listed = [
        {
            "name": t.name,
            "description": t.description,
            "input_schema": t.parameters,
            "annotations": t.annotations or None,
        }
        for t in tools
    ]
    return {"id": item_id, "type": "mcp_list_tools", "server_label": label, "tools": listed}


def mcp_call_item(item_id: str, call: ToolCall, approval_id: str | None = None) -> dict[str, Any]:
    """An `mcp_call` in progress; `complete_mcp_call` ends it."""
    label, tool = split_name(call.name)
    return {
        "id": item_id,
        "type": "mcp_call",
        "status": "in_progress",
        "server_label": label,
        "name": tool or call.name,
        "arguments": call.arguments_json(),
        "approval_request_id": approval_id,
        "output": None,
        "error": None,
    }


def complete_mcp_call(item: dict[str, Any], result: ToolResult) -> str:
    """Completes an `mcp_call` item with what the tool returned; "completed" or "failed"."""
    if result.is_error:
        item["status"] = "failed"
        text = [{"type": "text", "text": result.content}]
        item["error"] = {"type": "mcp_tool_execution_error", "content": text}
    else:
        item["status"] = "completed"
        item["output"] = result.content
    return str(item["status"])


def approval_request_item(call: ToolCall) -> dict[str, Any]:
    label, tool = split_name(call.name)
    return {
        "id": call.id,
        "type": "mcp_approval_request",
        "server_label": label,
        "name": tool,
        "arguments": call.arguments_json(),
    }
