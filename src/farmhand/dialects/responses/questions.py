"""The questions a chat pauses on, as Responses items, and the client's answers to them.

A tool call of an operator's MCP server may wait for the user: the server asks something
(elicitation), or its `require_approval` wants the call approved. The response ends with
the question as its last output item; the client answers in the next request (with
`previous_response_id`), and the paused chat goes on (`service.parked`):

    approval  out {"type": "mcp_approval_request", "id", "server_label", "name", "arguments"}
              in  {"type": "mcp_approval_response", "approval_request_id", "approve",
                   "reason"?}
    form/url  out {"type": "mcp_elicitation_request", "id", "server_label", "name", "mode":
                   "form" | "url", "message", "requested_schema" | "url"}   (farmhand's own)
              in  {"type": "mcp_elicitation_response", "elicitation_request_id", "action":
                   "accept" | "decline" | "cancel", "content"?}

The approval looks like the ones the request's own `mcp` tools ask for (OpenAI's flow);
the id tells them apart: a question's id is `PendingAnswers`' ("ask_..."), a held call's is
the model's call id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from farmhand.errors import RequestError
from farmhand.runtime.events import InputRequested

QUESTION_PREFIX = "ask_"
"""How the ids `runtime.questions.PendingAnswers` gives its questions begin."""
ACTIONS = ("accept", "decline", "cancel")


@dataclass(frozen=True)
class QuestionAnswer:
    """The client's answer to the question `id` a paused chat waits on (the service's
    `ChatRunner.answer` takes it as it is)."""

    id: str
    action: str  # "accept" | "decline" | "cancel"
    content: dict[str, Any] | None = None
    reason: str = ""


def is_question_id(item_id: str) -> bool:
    return item_id.startswith(QUESTION_PREFIX)


def question_item(event: InputRequested) -> dict[str, Any]:
    """The output item that asks the client."""
    question = event.question
    if question.kind == "approval":
        return {
            "id": event.id,
            "type": "mcp_approval_request",
            "server_label": question.server,
            "name": question.tool or "",
            "arguments": json.dumps(question.arguments or {}, ensure_ascii=False),
        }
    item: dict[str, Any] = {
        "id": event.id,
        "type": "mcp_elicitation_request",
        "server_label": question.server,
        "name": question.tool,
        "mode": question.kind,
        "message": question.message,
    }
    if question.kind == "url":
        item["url"] = question.url
    else:
        item["requested_schema"] = question.schema
    return item


def approval_answer(item: dict[str, Any], question_id: str, where: str) -> QuestionAnswer:
    """An `mcp_approval_response` to a question."""
    approve = item.get("approve")
    if not isinstance(approve, bool):
        raise RequestError(f"{where}.approve must be true or false", param="input")
    if approve:
        return QuestionAnswer(question_id, "accept")
    return QuestionAnswer(question_id, "decline", reason=_reason(item))


def elicitation_answer(item: dict[str, Any], where: str) -> QuestionAnswer:
    """An `mcp_elicitation_response`."""
    question_id = item.get("elicitation_request_id")
    if not isinstance(question_id, str) or not question_id:
        raise RequestError(
            f"{where} needs 'elicitation_request_id': the id of the mcp_elicitation_request"
            " it answers",
            param="input",
        )
    action = item.get("action")
    if action not in ACTIONS:
        raise RequestError(f'{where}.action must be "accept", "decline" or "cancel"', param="input")
    content = item.get("content")
    if content is not None and not isinstance(content, dict):
        raise RequestError(
            f"{where}.content must be an object of the requested form's fields", param="input"
        )
    if action == "accept":
        return QuestionAnswer(question_id, "accept", content)
    return QuestionAnswer(question_id, str(action), reason=_reason(item))


def _reason(item: dict[str, Any]) -> str:
    reason = item.get("reason")
    return reason if isinstance(reason, str) else ""
