"""Calls an OpenAI-compatible server returns as text: read out of its content with the
model family's parser (issue: llama-server with a small Qwen passes the model's JSON call
on as plain text, and the loop ended with no call)."""

from __future__ import annotations

import pytest
from tests.providers.fake_backend import Server
from tests.providers.test_openai_compat import (
    call_fragment,
    calls_of,
    delta,
    run,
    sse,
    text_of,
)

from farmhand.messages import Finish, TextDelta
from farmhand.providers.text_calls import rescue_family

pytestmark = pytest.mark.anyio

# The model writes the name the server was sent: weather:get_current goes as weather__get_current.
CALL = '{"name": "weather__get_current", "arguments": {"location": "Paris"}}'
HERMES = f"Checking.<tool_call>\n{CALL}\n</tool_call>"
FENCED = f"```json\n{CALL}\n```"


def content(text: str, size: int = 5) -> bytes:
    pieces = [delta(content=text[i : i + size]) for i in range(0, len(text), size)]
    return sse(*pieces, delta("stop"))


@pytest.mark.parametrize("text", [HERMES, FENCED])
async def test_a_call_written_as_text_becomes_a_call(text: str) -> None:
    server = Server(content(text), split=3)
    events = await run(server.provider(text_calls_family="hermes_2_pro"))
    [call] = calls_of(events)
    assert (call.name, call.arguments) == ("weather:get_current", {"location": "Paris"})
    assert "<tool_call>" not in text_of(events, TextDelta)
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"


async def test_off_the_text_stays_text() -> None:
    events = await run(Server(content(HERMES)).provider())
    assert calls_of(events) == []
    assert text_of(events, TextDelta) == HERMES


async def test_plain_answers_pass_through_untouched() -> None:
    answer = "Paris is sunny, 21 C. {not a call} [1, 2]"
    events = await run(Server(content(answer)).provider(text_calls_family="hermes_2_pro"))
    assert text_of(events, TextDelta) == answer and calls_of(events) == []


async def test_a_call_the_server_returned_is_not_doubled() -> None:
    args = '{"location": "Paris"}'
    body = sse(
        *[delta(content=HERMES[i : i + 9]) for i in range(0, len(HERMES), 9)],
        call_fragment(0, args, id="call_1", name="weather__get_current"),
        delta("tool_calls"),
    )
    events = await run(Server(body).provider(text_calls_family="hermes_2_pro"))
    assert [c.id for c in calls_of(events)] == ["call_1"]


async def test_no_tools_no_rescue() -> None:
    events = await run(Server(content(HERMES)).provider(text_calls_family="hermes_2_pro"), tools=())
    assert calls_of(events) == []


def test_the_family_comes_from_tool_parser_else_the_model_name_else_the_known_shapes() -> None:
    assert rescue_family("hermes", "anything") == "hermes_2_pro"
    assert rescue_family(None, "qwen2.5-coder:0.5b") == "hermes_2_pro"
    assert rescue_family(None, "some-unknown-model") == "known_shapes"
