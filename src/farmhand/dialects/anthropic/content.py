"""The content of an Anthropic Messages request -> farmhand's messages: `system` (a string
or text blocks) and `messages` with their content blocks (text, tool_use, tool_result,
thinking, and the MCP connector's mcp_tool_use / mcp_tool_result sent back as history).
RequestError (400) names the block to fix."""

from __future__ import annotations

from typing import Any

from farmhand.errors import RequestError
from farmhand.messages import Message, ToolCall
from farmhand.tools.definition import SEPARATOR

ROLES = ("user", "assistant", "system")
UNSUPPORTED_BLOCKS = ("image", "document", "search_result", "container_upload")
TEXT_BLOCK = '{"type": "text", "text": "..."}'


def system_messages(value: object) -> list[Message]:
    if value is None:
        return []
    text = _text(value, "system")
    return [Message.system(text)] if text else []


def conversation(value: object) -> list[Message]:
    if value is None:
        raise RequestError("`messages` is required: a list of messages", param="messages")
    if not isinstance(value, list) or not value:
        raise RequestError("`messages` must be a non-empty list of messages", param="messages")
    names: dict[str, str] = {}  # tool_use id -> tool name, for the tool_result blocks
    out: list[Message] = []
    for index, item in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where} must be an object with 'role' and 'content'", param=where)
        role = item.get("role")
        if role not in ROLES:
            raise RequestError(
                f"{where}.role is {role!r}; use user or assistant", param=f"{where}.role"
            )
        content = item.get("content")
        if role == "system":  # Claude Code sends one inside `messages`
            out.append(Message.system(_text(content, f"{where}.content")))
        elif role == "assistant":
            out.extend(_assistant(content, f"{where}.content", names))
        else:
            out.extend(_user(content, f"{where}.content", names))
    return out


def _blocks(content: object, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestError(f"{where} must be a string or a list of content blocks", param=where)
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RequestError(
                f"{where}[{i}] must be a content block like {TEXT_BLOCK}", param=where
            )
        if block["type"] in UNSUPPORTED_BLOCKS:
            raise RequestError(
                f"{where}[{i}] is a {block['type']} block; farmhand's models take text only",
                param=where,
            )
    return content


def _text(content: object, where: str) -> str:
    """Text blocks (or a string) as one string."""
    texts = []
    for i, block in enumerate(_blocks(content, where)):
        if block["type"] != "text" or not isinstance(block.get("text"), str):
            raise RequestError(f"{where}[{i}] must be a text block {TEXT_BLOCK}", param=where)
        texts.append(block["text"])
    return "".join(texts)


def _user(content: object, where: str, names: dict[str, str]) -> list[Message]:
    """Tool results first (they answer the previous turn's calls), then the text."""
    results: list[Message] = []
    texts: list[str] = []
    for i, block in enumerate(_blocks(content, where)):
        kind = block["type"]
        if kind == "text":
            texts.append(_text([block], f"{where}[{i}]"))
        elif kind in ("tool_result", "mcp_tool_result"):
            results.append(_tool_result(block, f"{where}[{i}]", names))
        else:
            raise RequestError(
                f"{where}[{i}] is a {kind!r} block; a user message takes text and tool_result"
                " blocks",
                param=where,
            )
    return [*results, Message.user("".join(texts))] if texts else results


def _tool_result(block: dict[str, Any], where: str, names: dict[str, str]) -> Message:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(
            f"{where}.tool_use_id must be the id of the tool_use block it answers",
            param=where,
        )
    content = block.get("content")
    text = "" if content is None else _text(content, f"{where}.content")
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise RequestError(f"{where}.is_error must be true or false", param=where)
    if is_error and not text.startswith("Error"):
        text = f"Error: {text}"  # farmhand's messages carry failure in the text
    return Message("tool", text, tool_call_id=call_id, name=names.get(call_id, ""))


def _assistant(content: object, where: str, names: dict[str, str]) -> list[Message]:
    """One assistant turn; farmhand-run MCP calls inside it (an earlier answer of this
    dialect) become a turn of their own followed by its results."""
    out: list[Message] = []
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for i, block in enumerate(_blocks(content, where)):
        kind, at = block["type"], f"{where}[{i}]"
        if kind == "text":
            texts.append(_text([block], at))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            reasoning.append(block["thinking"])
        elif kind == "redacted_thinking":
            continue  # encrypted by Anthropic; nothing a local model can read
        elif kind in ("tool_use", "mcp_tool_use", "server_tool_use"):
            call = _tool_use(block, at)
            names[call.id] = call.name
            calls.append(call)
        elif kind == "mcp_tool_result":
            out.append(_turn(texts, reasoning, calls))
            texts, reasoning, calls = [], [], []
            out.append(_tool_result(block, at, names))
        else:
            raise RequestError(
                f"{at} is a {kind!r} block; an assistant message takes text, thinking and"
                " tool_use blocks",
                param=where,
            )
    if texts or reasoning or calls or not out:
        out.append(_turn(texts, reasoning, calls))
    return out


def _turn(texts: list[str], reasoning: list[str], calls: list[ToolCall]) -> Message:
    thought = "".join(reasoning) or None
    return Message("assistant", "".join(texts), reasoning=thought, tool_calls=tuple(calls))


def _tool_use(block: dict[str, Any], where: str) -> ToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.id must be the call's id (a non-empty string)", param=where)
    if not isinstance(name, str) or not name:
        raise RequestError(f"{where}.name must be the tool's name", param=where)
    if not isinstance(arguments, dict):
        raise RequestError(f"{where}.input must be an object", param=where)
    server = block.get("server_name")
    if block["type"] == "mcp_tool_use" and isinstance(server, str) and server:
        name = f"{server}{SEPARATOR}{name}"  # farmhand's name for a server's tool
    return ToolCall(name, arguments, call_id)
