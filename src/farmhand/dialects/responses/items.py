"""Responses input items (a stored conversation's, then the request's own) -> farmhand's
messages, and the approvals the request answers.

    message (role user / assistant / system / developer; text or input_text/output_text
        parts)                                     -> a message; system ones lead
    function_call, custom_tool_call                -> the assistant turn's tool calls
    function_call_output, custom_tool_call_output  -> tool results (text; images noted)
    reasoning                                      -> the next assistant turn's reasoning
    mcp_list_tools                                 -> the label is listed already
    mcp_call                                       -> a call farmhand ran, and its result
                                                      (one still in_progress: a call that
                                                      was waiting on a question; skipped)
    mcp_approval_request                           -> a call held for approval
    mcp_approval_response                          -> run it (approve) or say it was denied
    mcp_approval_request / _response, mcp_elicitation_request / _response with a
        question's id ("ask_...")                  -> the answers a paused chat waits on
                                                      (`questions.py`); old: skipped
    additional_tools                               -> tools (read with the request's tools)
    item_reference                                 -> the stored item it names, put in its
                                                      place before this reads the input
                                                      (`references.py`)

Items of hosted tools farmhand never runs (web_search_call, computer_call, ...) are
skipped; anything else is a 400 naming the item.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from farmhand.dialects.responses.custom import as_call
from farmhand.dialects.responses.questions import (
    QuestionAnswer,
    approval_answer,
    elicitation_answer,
    is_question_id,
)
from farmhand.dialects.responses.request import ResponsesRequest
from farmhand.errors import RequestError
from farmhand.messages import Message, ToolCall
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_chat import DENIED, Approval
from farmhand.service.mcp_tools import split_name
from farmhand.tools.definition import SEPARATOR
from farmhand.tools.preview import preview

TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "reasoning_text")
MEDIA_PARTS = ("input_image", "input_file", "input_audio", "image_url")
SKIPPED = frozenset(
    {
        "additional_tools", "web_search_call", "file_search_call", "computer_call",
        "computer_call_output", "code_interpreter_call", "image_generation_call",
        "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
        "apply_patch_call", "apply_patch_call_output", "tool_search_call", "tool_search_output",
        "compaction", "compaction_summary",
    }
)  # fmt: skip
MEDIA_NOTE = "[{kind} left out: farmhand passes text only]"


@dataclass
class Conversation:
    """What the model is shown, and what the request decided about held calls."""

    messages: list[Message] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)
    answers: list[QuestionAnswer] = field(default_factory=list)
    """The request's answers to the questions a paused chat waits on."""
    other_input: bool = False
    """The request brings input items besides those answers."""


@dataclass
class _Reader:
    parsed: ResponsesRequest
    conversation: Conversation = field(default_factory=Conversation)
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    held: dict[str, ToolCall] = field(default_factory=dict)  # approval id -> call
    reasoning: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[Message]:
        return self.conversation.messages


def read_conversation(
    parsed: ResponsesRequest, previous: list[dict[str, Any]] | None = None
) -> Conversation:
    """The messages for `parsed`: its instructions, the items of the response it continues
    (`previous`, as stored) and its own input items."""
    reader = _Reader(parsed)
    for index, item in enumerate(previous or []):
        _read(reader, item, f"previous response item {index}", new=False)
    for index, item in enumerate(parsed.input_items):
        answers = len(reader.conversation.answers)
        _read(reader, item, f"input[{index}]", new=True)
        if len(reader.conversation.answers) == answers:
            reader.conversation.other_input = True
    conversation = reader.conversation
    conversation.messages = _leading_system(parsed.instructions, reader.messages)
    return conversation


def _read(reader: _Reader, item: dict[str, Any], where: str, *, new: bool) -> None:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        _message(reader, item, where)
    elif kind in ("function_call", "custom_tool_call"):
        _call(reader, _client_call(reader.parsed, item, where))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = _string(item, "call_id", where)
        text = _output_text(item.get("output"), f"{where}.output")
        name = reader.names.get(call_id, "")
        reader.messages.append(Message("tool", text, tool_call_id=call_id, name=name))
    elif kind == "reasoning":
        reader.reasoning += _reasoning_text(item)
    elif kind == "mcp_list_tools":
        reader.conversation.listed.add(str(item.get("server_label")))
    elif kind == "mcp_call":
        _mcp_call(reader, item, where)
    elif kind == "mcp_elicitation_request":
        pass  # a question asked: the paused chat has the call
    elif kind == "mcp_elicitation_response":
        if new:
            reader.conversation.answers.append(elicitation_answer(item, where))
    elif kind == "mcp_approval_request" and is_question_id(str(item.get("id"))):
        pass
    elif kind == "mcp_approval_request":
        call = _mcp_tool_call(item, where, _string(item, "id", where))
        reader.held[call.id] = call
        _call(reader, call)
    elif kind == "mcp_approval_response":
        _approval(reader, item, where, new=new)
    elif kind == "item_reference":  # `resolve_references` replaces them first
        raise RequestError(
            f"{where}: an item_reference is not read here; send the item itself",
            param="input",
        )
    elif kind not in SKIPPED:
        raise RequestError(
            f"{where} has type {preview(kind)}; farmhand reads message, function_call,"
            " function_call_output, custom_tool_call, custom_tool_call_output, reasoning,"
            " item_reference, mcp_call, mcp_approval_request and mcp_approval_response items",
            param="input",
        )


def _message(reader: _Reader, item: dict[str, Any], where: str) -> None:
    role = item.get("role")
    text = _content(item.get("content"), f"{where}.content")
    if role in ("system", "developer"):
        reader.messages.append(Message.system(text))
    elif role == "user":
        reader.messages.append(Message.user(text))
    elif role == "assistant":
        reasoning = "".join(reader.reasoning) or None
        reader.reasoning = []
        reader.messages.append(Message("assistant", text, reasoning=reasoning))
    else:
        raise RequestError(
            f"{where}.role is {preview(role)}; use user, assistant, system or developer",
            param="input",
        )


def _call(reader: _Reader, call: ToolCall) -> None:
    """Calls join the assistant turn they follow (its text, its other calls)."""
    reader.names[call.id] = call.name
    last = reader.messages[-1] if reader.messages else None
    if last is not None and last.role == "assistant":
        reader.messages[-1] = dataclasses.replace(last, tool_calls=(*last.tool_calls, call))
        return
    reasoning = "".join(reader.reasoning) or None
    reader.reasoning = []
    reader.messages.append(Message("assistant", "", reasoning=reasoning, tool_calls=(call,)))


def _client_call(parsed: ResponsesRequest, item: dict[str, Any], where: str) -> ToolCall:
    name = _string(item, "name", where)
    call_id = _string(item, "call_id", where)
    namespace = item.get("namespace")
    exposed = parsed.tools.exposed_name(name, namespace if isinstance(namespace, str) else None)
    if item.get("type") == "custom_tool_call":
        return as_call(exposed, call_id, item.get("input"))
    return _with_arguments(exposed, call_id, item.get("arguments"), where)


def _with_arguments(name: str, call_id: str, raw: object, where: str) -> ToolCall:
    if isinstance(raw, dict):
        return ToolCall(name, raw, call_id)
    if raw is not None and not isinstance(raw, str):
        raise RequestError(f"{where}.arguments must be a JSON string", param="input")
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        # What the model wrote stays in the history; the loop's repair handles it.
        return ToolCall(name, {}, call_id, parse_error=f"arguments were not a JSON object: {raw}")
    return ToolCall(name, arguments, call_id)


def _mcp_tool_call(item: dict[str, Any], where: str, call_id: str) -> ToolCall:
    label = _string(item, "server_label", where)
    name = f"{label}{SEPARATOR}{_string(item, 'name', where)}"
    return _with_arguments(name, call_id, item.get("arguments"), where)


def _mcp_call(reader: _Reader, item: dict[str, Any], where: str) -> None:
    if item.get("status") == "in_progress":
        return  # it waited on a question; the response that went on has it done
    if item.get("status") == "incomplete":
        return  # written by the model, never run (the loop dropped it)
    approval_id = item.get("approval_request_id")
    if isinstance(approval_id, str) and approval_id in reader.held:
        call = reader.held.pop(approval_id)  # already in the history, held
    else:
        call = _mcp_tool_call(item, where, _string(item, "id", where))
        _call(reader, call)
    error = item.get("error")
    output = item.get("output")
    text = output if isinstance(output, str) else ""
    if error:
        text = f"Error: {_error_text(error)}"
    reader.messages.append(Message("tool", text, tool_call_id=call.id, name=call.name))


def _error_text(error: object) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str):
            return message
        return _output_text(error.get("content"), "error")
    return json.dumps(error)


def _approval(reader: _Reader, item: dict[str, Any], where: str, *, new: bool) -> None:
    approval_id = _string(item, "approval_request_id", where)
    call = reader.held.get(approval_id)
    if call is None and is_question_id(approval_id):
        if new:
            reader.conversation.answers.append(approval_answer(item, approval_id, where))
        return
    if call is None:
        raise RequestError(
            f"{where}: approval_request_id {approval_id!r} names no mcp_approval_request"
            " waiting in this conversation; continue the response that asked for it with"
            " previous_response_id",
            param="input",
        )
    approve = item.get("approve")
    if not isinstance(approve, bool):
        raise RequestError(f"{where}.approve must be true or false", param="input")
    reason = item.get("reason") if isinstance(item.get("reason"), str) else ""
    label, _ = split_name(call.name)
    if new and label not in {t.label for t in reader.parsed.tools.mcp}:
        raise RequestError(
            f"{where} answers a call to server {label!r}, but the request has no mcp tool"
            " with that server_label; send the mcp tool again with the answer",
            param="tools",
        )
    if new:
        reader.conversation.approvals.append(Approval(call, approve, reason or ""))
        del reader.held[approval_id]
    elif not approve:  # an old denial: the model was told then, and is told again
        del reader.held[approval_id]
        note = DENIED.format(reason=f" ({reason})" if reason else "")
        reader.messages.append(Message("tool", note, tool_call_id=call.id, name=call.name))


def _content(value: object, where: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        raise RequestError(f"{where} must be a string or a list of content parts", param="input")
    texts = []
    for index, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        elif kind in MEDIA_PARTS:
            raise RequestError(
                f"{where}[{index}] is an {kind} part; farmhand's models take text only",
                param="input",
            )
        else:
            raise RequestError(
                f'{where}[{index}] must be a text part {{"type": "input_text", "text": "..."}}',
                param="input",
            )
    return "".join(texts)


def _output_text(value: object, where: str) -> str:
    """A tool's output: a string, or parts whose text is kept and media noted."""
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    texts = []
    for part in value:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in MEDIA_PARTS:
            texts.append(MEDIA_NOTE.format(kind=kind))
        else:
            texts.append(json.dumps(part, ensure_ascii=False))
    return "\n".join(texts)


def _reasoning_text(item: dict[str, Any]) -> list[str]:
    for key in ("content", "summary"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts = [
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            if texts:
                return texts
    return []


def _string(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise RequestError(f"{where} needs {key!r} (a non-empty string)", param="input")
    return value


def _leading_system(instructions: str | None, messages: list[Message]) -> list[Message]:
    """Instructions and the system messages that open the conversation, as one system
    message: many chat templates take a single one, first."""
    leading = 0
    while leading < len(messages) and messages[leading].role == "system":
        leading += 1
    texts = [t for t in [instructions, *(m.content for m in messages[:leading])] if t]
    head = [Message.system("\n\n".join(texts))] if texts else []
    return [*head, *messages[leading:]]


def chat_request(parsed: ResponsesRequest, conversation: Conversation) -> ChatRequest:
    """The chat farmhand runs for `parsed` over `conversation`."""
    return ChatRequest(
        model=parsed.model,
        messages=conversation.messages,
        settings=parsed.settings,
        client_tools=parsed.tools.client,
        mcp_servers=parsed.mcp_servers,
        max_tool_rounds=parsed.max_tool_rounds,
        # A server switched off for this chat offers the model none of its tools.
        allowed_tools={name: frozenset() for name in parsed.disabled_servers},
    )
