"""What an A2A message says to farmhand: its text, its options, and its answer to a
question; each mistake a message that says how to send it right."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.types.a2a_pb2 import Message, Part, Role
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

from farmhand.a2aserver.parts import GivenAnswer, options, read_answer, user_text
from farmhand.errors import RequestError


def message(*parts: str | dict[str, Any] | Part, role: Role = Role.ROLE_USER) -> Message:
    made = Message(role=role, message_id="m")
    for part in parts:
        if isinstance(part, Part):
            made.parts.append(part)
        elif isinstance(part, str):
            made.parts.append(Part(text=part))
        else:
            made.parts.append(Part(data=ParseDict(part, struct_pb2.Value())))
    return made


def test_text_and_data_parts_are_the_text() -> None:
    said = user_text(message("Count these:", {"cows": 3, "names": ["Daisy"]}))
    text, data = said.split("\n")
    assert text == "Count these:"
    read = json.loads(data)
    assert read == {"cows": 3, "names": ["Daisy"]} and isinstance(read["cows"], int)  # not 3.0


@pytest.mark.parametrize(
    ("parts", "says"),
    [
        ((Part(url="file:///etc/passwd"),), "parts\\[0\\] is a file \\(url\\)"),
        ((Part(raw=b"\x00"),), "parts\\[0\\] is a file \\(raw\\)"),
        (("  ",), "the message has no text"),
        ((), "the message has no text"),
    ],
)
def test_what_farmhand_does_not_read_is_refused(parts: tuple[Any, ...], says: str) -> None:
    with pytest.raises(RequestError, match=says):
        user_text(message(*parts))


def test_options_come_from_the_request_then_the_message() -> None:
    asked = message("hi")
    asked.metadata.update({"model": "small", "max_tokens": 20})
    chosen = options({"model": "big", "project": "barns/north", "temperature": 0.5}, asked)
    assert chosen.model == "big" and chosen.project == ("barns", "north")
    assert (chosen.settings.max_tokens, chosen.settings.temperature) == (20, 0.5)


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({"model": ""}, "metadata.model must be the name"),
        ({"model": 3}, "metadata.model must be the name"),
        ({"project": "north"}, 'metadata.project must be "namespace/name"'),
        ({"max_tokens": 0}, "max_tokens must be a whole number above 0"),
        ({"max_tokens": 2.5}, "max_tokens must be a whole number above 0"),
        ({"max_tokens": True}, "max_tokens must be a whole number above 0"),
        ({"temperature": 7}, "temperature must be a number from 0 to 2"),
    ],
)
def test_bad_options_say_what_to_send(metadata: dict[str, Any], says: str) -> None:
    with pytest.raises(RequestError, match=says):
        options(metadata, message("hi"))


@pytest.mark.parametrize(
    ("parts", "kind", "answer"),
    [
        (("Approve",), "approval", GivenAnswer("accept")),
        (("no.",), "approval", GivenAnswer("decline", reason="the user declined")),
        (("cancel",), "form", GivenAnswer("cancel", reason="the user cancelled")),
        (
            ({"approve": False, "reason": "not now"},),
            "approval",
            GivenAnswer("decline", reason="not now"),
        ),
        (
            ({"name": "Ada", "toppings": 3},),
            "form",
            GivenAnswer("accept", {"name": "Ada", "toppings": 3}),
        ),
        (({"action": "decline"},), "form", GivenAnswer("decline")),
        (("done",), "url", GivenAnswer("accept")),
    ],
)
def test_answers(parts: tuple[Any, ...], kind: str, answer: GivenAnswer) -> None:
    assert read_answer(message(*parts), kind) == answer


@pytest.mark.parametrize(
    ("parts", "kind", "says"),
    [
        (("Ada, large",), "form", "this question is a form: answer with a data part"),
        (("perhaps",), "approval", 'answer "approve" or "deny"'),
        (({"approve": "yes"},), "approval", '"approve" must be true or false'),
        (({"action": "maybe"},), "form", '"action" must be "accept", "decline" or "cancel"'),
        (({"action": "accept", "content": [1]},), "form", '"content" must be an object'),
    ],
)
def test_what_does_not_answer_says_how_to(parts: tuple[Any, ...], kind: str, says: str) -> None:
    with pytest.raises(RequestError, match=says):
        read_answer(message(*parts), kind)


def test_an_answer_comes_from_the_user() -> None:
    with pytest.raises(RequestError, match="an answer comes from the user"):
        read_answer(message("approve", role=Role.ROLE_AGENT), "approval")
