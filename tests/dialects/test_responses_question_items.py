"""The Responses shapes of a paused chat's questions, and the answers read back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from farmhand.dialects.responses.questions import (
    QuestionAnswer,
    approval_answer,
    elicitation_answer,
    is_question_id,
    question_item,
)
from farmhand.errors import RequestError
from farmhand.runtime.questions import PendingAnswers
from farmhand.toolsets.mcp.elicitation import Question


def test_question_ids_are_told_apart_from_held_call_ids() -> None:
    opened = PendingAnswers().open(Question("gate", "ok?", "approval", tool="wipe"))
    assert is_question_id(opened.id) and not is_question_id("call_1")


def test_an_approval_is_an_mcp_approval_request() -> None:
    question = Question("gate", "Run?", "approval", tool="wipe", arguments={"target": "é"})
    item = question_item(PendingAnswers().open(question))
    assert item["type"] == "mcp_approval_request" and item["id"].startswith("ask_")
    assert (item["server_label"], item["name"]) == ("gate", "wipe")
    assert json.loads(item["arguments"]) == {"target": "é"}


def test_form_and_url_questions_are_elicitation_requests() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    form = question_item(PendingAnswers().open(Question("ask", "Who?", schema=schema, tool="t")))
    assert form["type"] == "mcp_elicitation_request" and form["mode"] == "form"
    assert form["requested_schema"] == schema and form["message"] == "Who?"
    url = question_item(PendingAnswers().open(Question("ask", "Sign in", "url", url="https://x")))
    assert url["mode"] == "url" and url["url"] == "https://x" and "requested_schema" not in url


def test_answers_are_read() -> None:
    assert approval_answer({"approve": True}, "ask_1", "input[0]") == QuestionAnswer(
        "ask_1", "accept"
    )
    denied = approval_answer({"approve": False, "reason": "no"}, "ask_1", "input[0]")
    assert (denied.action, denied.reason) == ("decline", "no")
    item = {"elicitation_request_id": "ask_2", "action": "accept", "content": {"name": "Ada"}}
    assert elicitation_answer(item, "input[0]") == QuestionAnswer(
        "ask_2", "accept", {"name": "Ada"}
    )
    cancelled = elicitation_answer({"elicitation_request_id": "ask_2", "action": "cancel"}, "i")
    assert cancelled.action == "cancel" and cancelled.content is None


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"action": "accept"}, "needs 'elicitation_request_id'"),
        ({"elicitation_request_id": "ask_2", "action": "yes"}, "action must be"),
        ({"elicitation_request_id": "ask_2", "action": "accept", "content": [1]}, "content"),
    ],
)
def test_malformed_answers_say_what_to_fix(item: dict[str, Any], says: str) -> None:
    with pytest.raises(RequestError, match=says):
        elicitation_answer(item, "input[0]")
    with pytest.raises(RequestError, match="approve must be true or false"):
        approval_answer({"approve": "yes"}, "ask_1", "input[0]")
