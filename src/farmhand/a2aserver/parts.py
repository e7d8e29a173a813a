"""A2A messages to and from farmhand's terms: what a user's message says, the options it
carries in its metadata, and the questions a paused chat asks (with the answers to them).

A message's text parts are its text; a data part is read as JSON text (the model sees it
as written). Files (raw bytes or URLs) are refused: farmhand would have to fetch or read
them, and nothing here asks for that.

Options ride in the request's or the message's `metadata` (the request's win):
`model` (a configured model's name), `project` ("namespace/name" of a stored project),
`max_tokens` and `temperature`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a.types.a2a_pb2 import Message as A2AMessage
from a2a.types.a2a_pb2 import Part, Role
from google.protobuf.json_format import MessageToDict

from farmhand.errors import RequestError
from farmhand.providers.base import GenerationSettings
from farmhand.runtime.events import InputRequested, ToolCallFinished, ToolCallStarted

OPTIONS = ("model", "project", "max_tokens", "temperature")
APPROVE = frozenset({"approve", "approved", "yes", "y", "accept", "ok", "done"})
DENY = frozenset({"deny", "denied", "no", "n", "decline", "reject"})
CANCEL = frozenset({"cancel", "stop"})


@dataclass(frozen=True)
class Options:
    model: str | None = None
    project: tuple[str, str] | None = None
    settings: GenerationSettings = field(default_factory=GenerationSettings)


@dataclass(frozen=True)
class GivenAnswer:
    """The user's answer to a question: accept (with the form's content), decline or
    cancel."""

    action: str
    content: dict[str, Any] | None = None
    reason: str = ""


def user_text(message: A2AMessage) -> str:
    """What the message says, for the model. RequestError for a part farmhand does not
    read, or a message with nothing in it."""
    pieces: list[str] = []
    for index, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            pieces.append(part.text)
        elif kind == "data":
            pieces.append(json.dumps(part_data(part), ensure_ascii=False))
        else:
            raise RequestError(
                f"message.parts[{index}] is a file ({kind}); farmhand's agent reads text and"
                " data parts only: send the file's content as text"
            )
    text = "\n".join(p for p in pieces if p)
    if not text.strip():
        raise RequestError("the message has no text: send a text part with what to do")
    return text


def part_data(part: Part) -> Any:
    """A data part's value as JSON, whole numbers as ints (the protobuf Value under A2A's
    data parts stores every number as a double)."""
    return _whole_numbers(MessageToDict(part)["data"])


def _whole_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return value


def options(request_metadata: Mapping[str, Any], message: A2AMessage) -> Options:
    """The chat's options from the request's metadata, then the message's."""
    given = {**MessageToDict(message.metadata), **request_metadata}
    model = given.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise RequestError("metadata.model must be the name of one of the agent's models")
    project = given.get("project")
    where: tuple[str, str] | None = None
    if project is not None:
        namespace, _, name = project.partition("/") if isinstance(project, str) else ("", "", "")
        if not namespace or not name:
            raise RequestError('metadata.project must be "namespace/name" of a stored project')
        where = (namespace, name)
    max_tokens = given.get("max_tokens")
    if max_tokens is not None and not (
        _number(max_tokens) and float(max_tokens).is_integer() and max_tokens > 0
    ):
        raise RequestError("metadata.max_tokens must be a whole number above 0")
    temperature = given.get("temperature")
    if temperature is not None and not (_number(temperature) and 0 <= temperature <= 2):
        raise RequestError("metadata.temperature must be a number from 0 to 2")
    settings = GenerationSettings(
        max_tokens=int(max_tokens) if max_tokens is not None else None,
        temperature=float(temperature) if temperature is not None else None,
    )
    return Options(model or None, where, settings)


def call_note(event: ToolCallStarted | ToolCallFinished) -> tuple[str, dict[str, Any]]:
    """What the agent says of a tool call it makes, or of its result: in words and as data."""
    data: dict[str, Any]
    if isinstance(event, ToolCallStarted):
        call = event.call
        data = {"tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments}}
        return f"calling {call.name}", data
    result = event.result
    data = {
        "tool_result": {
            "id": result.call_id,
            "name": result.name,
            "content": result.content,
            "is_error": result.is_error,
        }
    }
    return f"{result.name} {'failed' if result.is_error else 'answered'}", data


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def question_parts(event: InputRequested) -> tuple[str, dict[str, Any]]:
    """What the agent says when a chat waits on the user: the question in words, and as
    data (kind, server, tool, the call's arguments, the form's schema or the page)."""
    question = event.question
    data: dict[str, Any] = {"kind": question.kind, "server": question.server}
    if question.tool:
        data["tool"] = question.tool
    if question.kind == "approval":
        data["arguments"] = question.arguments or {}
        arguments = json.dumps(question.arguments or {}, ensure_ascii=False)
        text = (
            f"{question.server} asks to approve the call of {question.tool} with {arguments}."
            ' Reply "approve" or "deny" (or a data part {"approve": true|false, "reason": ...}).'
        )
    elif question.kind == "url":
        data["url"] = question.url
        text = (
            f"{question.server} asks you to open {question.url}: {question.message}"
            ' Reply "done" when you have, or "decline".'
        )
    else:
        data["requested_schema"] = question.schema
        text = (
            f"{question.server} asks: {question.message} Reply with a data part holding"
            ' the form\'s fields (its schema is in "requested_schema"), or "decline".'
        )
    data["message"] = question.message
    return text, data


def read_answer(message: A2AMessage, kind: str) -> GivenAnswer:
    """The user's answer to a question of `kind` (approval, form, url). RequestError when
    the message does not answer it, saying how to."""
    if message.role != Role.ROLE_USER:
        raise RequestError("an answer comes from the user (role ROLE_USER)")
    data = [part_data(p) for p in message.parts if p.WhichOneof("content") == "data"]
    objects = [d for d in data if isinstance(d, dict)]
    if objects:
        return _data_answer(objects[0], kind)
    words = " ".join(p.text for p in message.parts if p.WhichOneof("content") == "text")
    word = words.strip().strip(".!").lower()
    if word in CANCEL:
        return GivenAnswer("cancel", reason="the user cancelled")
    if word in DENY:
        return GivenAnswer("decline", reason="the user declined")
    if word in APPROVE and kind != "form":
        return GivenAnswer("accept")
    if kind == "form":
        raise RequestError(
            'this question is a form: answer with a data part holding its fields, or "decline"'
        )
    raise RequestError('answer "approve" or "deny" (or "cancel" to stop the task)')


def _data_answer(data: dict[str, Any], kind: str) -> GivenAnswer:
    reason = data.get("reason") if isinstance(data.get("reason"), str) else ""
    if "action" in data:
        action = data["action"]
        if action not in ("accept", "decline", "cancel"):
            raise RequestError('"action" must be "accept", "decline" or "cancel"')
        content = data.get("content")
        if content is not None and not isinstance(content, dict):
            raise RequestError('"content" must be an object of the form\'s fields')
        return GivenAnswer(action, content, str(reason))
    if kind == "approval" or "approve" in data:
        approve = data.get("approve")
        if not isinstance(approve, bool):
            raise RequestError('"approve" must be true or false')
        return GivenAnswer("accept") if approve else GivenAnswer("decline", reason=str(reason))
    return GivenAnswer("accept", data)
