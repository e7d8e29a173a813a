"""The `messages` of an OpenAI chat.completions request -> neutral Messages, or a
RequestError naming the message and field to fix (`param`: `messages[2].role`, ...).

Text only: a content part of another kind (an image, audio, a file) is refused by name. A
tool message's tool name comes from the assistant call it answers; arguments that are not a
JSON object stay in the history as the model wrote them (the loop's repair handles them).
"""

from __future__ import annotations

from farmhand.dialects.strict_json import strict_loads
from farmhand.errors import RequestError
from farmhand.messages import Message, ToolCall

ROLES = ("system", "developer", "user", "assistant", "tool")
UNSUPPORTED_PARTS = ("image_url", "input_audio", "file")


def chat_messages(value: object) -> list[Message]:
    if value is None:
        raise RequestError("`messages` is required: a list of chat messages", param="messages")
    if not isinstance(value, list) or not value:
        raise RequestError("`messages` must be a non-empty list of messages", param="messages")
    names: dict[str, str] = {}  # tool call id -> tool name, for the tool messages
    messages = []
    for index, item in enumerate(value):
        message = _message(item, f"messages[{index}]", names)
        for call in message.tool_calls:
            names[call.id] = call.name
        messages.append(message)
    return messages


def _message(item: object, where: str, names: dict[str, str]) -> Message:
    if not isinstance(item, dict):
        raise RequestError(f"{where} must be an object with 'role' and 'content'", param=where)
    role = item.get("role")
    if role not in ROLES:
        raise RequestError(
            f"{where}.role is {role!r}; use one of {', '.join(ROLES)}", param=f"{where}.role"
        )
    content = _content(item.get("content"), f"{where}.content")
    if role in ("system", "developer"):
        return Message.system(content)
    if role == "user":
        return Message.user(content)
    if role == "assistant":
        calls = item.get("tool_calls") or []
        if not isinstance(calls, list):
            raise RequestError(f"{where}.tool_calls must be a list", param=f"{where}.tool_calls")
        parsed = tuple(_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls))
        return Message.assistant(content, parsed)
    call_id = item.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(
            f"{where} is a tool message without tool_call_id; set it to the id of the"
            " assistant tool call it answers",
            param=f"{where}.tool_call_id",
        )
    name = names.get(call_id) or item.get("name")
    return Message(
        "tool", content, tool_call_id=call_id, name=name if isinstance(name, str) else ""
    )


def _content(value: object, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for i, part in enumerate(value):
            if (
                isinstance(part, dict)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
            ):
                texts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in UNSUPPORTED_PARTS:
                raise RequestError(
                    f"{where}[{i}] is a {part['type']} part; farmhand takes text parts only",
                    param=where,
                )
            else:
                raise RequestError(
                    f'{where}[{i}] must be a text part {{"type": "text", "text": "..."}}',
                    param=where,
                )
        return "".join(texts)
    raise RequestError(f"{where} must be a string or a list of text parts", param=where)


def _call(value: object, where: str) -> ToolCall:
    if not isinstance(value, dict) or not isinstance(value.get("function"), dict):
        raise RequestError(
            f'{where} must be {{"id", "type": "function", "function": {{"name", "arguments"}}}}',
            param=where,
        )
    function = value["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{where}.function.name must be a non-empty string", param=where)
    call_id = value.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.id must be the call's id (a non-empty string)", param=where)
    raw = function.get("arguments", "{}")
    if isinstance(raw, dict):
        return ToolCall(name, raw, call_id)
    if not isinstance(raw, str):
        raise RequestError(f"{where}.function.arguments must be a JSON string", param=where)
    try:
        arguments = strict_loads(raw or "{}", f"{where}.function.arguments")
    except RequestError:
        arguments = None
    if not isinstance(arguments, dict):
        # What the model wrote stays in the history; the loop's repair handles it.
        return ToolCall(name, {}, call_id, parse_error=f"arguments were not a JSON object: {raw}")
    return ToolCall(name, arguments, call_id)
