"""A server's questions mid-call (elicitation), against a real stdio server, on both of the
protocol's paths: the stateless revision's "input required" round trip (2026-07-28) and the
older revisions' `elicitation/create` request (2025-11-25, forced with mode "legacy")."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
from mcp import types
from tests.support.asking import Scripted, asking

from farmhand.toolsets.mcp.callers import ServerCallers
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.connection import ServerConnection
from farmhand.toolsets.mcp.elicitation import (
    Answer,
    Asker,
    Question,
    answer_problem,
    elicit_result,
)
from farmhand.toolsets.mcp.transports import server_target
from farmhand.version import farmhand_version

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
PIZZA_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "size": {"enum": ["S", "L"], "default": "L"}},
    "required": ["name"],
}


@asynccontextmanager
async def connected(mode: str, *askers: Asker | None) -> AsyncIterator[list[MCPToolset]]:
    """One pooled connection to the asking server, and one toolset over it per asker."""
    server = asking()
    connection = ServerConnection("asking", server_target(server), mode=mode)
    async with anyio.create_task_group() as group:
        group.start_soon(connection.run)
        toolsets = [MCPToolset.pooled(server, connection, call_timeout=20, asker=a) for a in askers]
        await toolsets[0].list_tools()
        try:
            yield toolsets
        finally:
            connection.close()
    if connection.target.stderr is not None:
        connection.target.stderr.close()


@pytest.mark.parametrize("mode", MODES)
async def test_farmhand_introduces_itself_and_declares_only_elicitation(mode: str) -> None:
    async with connected(mode, None) as (toolset,):
        seen = json.loads((await toolset.call_tool("client", {})).text)
        expected_version = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert toolset.connection.protocol_version == expected_version
    assert seen["info"] == {"name": "farmhand", "title": "farmhand", "version": farmhand_version()}
    assert seen["capabilities"] == {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_form_is_answered_and_the_defaults_fill_what_the_answer_left_out(
    mode: str,
) -> None:
    asker = Scripted(lambda q: Answer.accept({"name": "Ada", "size": "small"}))
    async with connected(mode, asker) as (toolset,):
        result = await toolset.call_tool("order_pizza", {})
    assert not result.is_error, result.text
    assert result.text == "ordered a small pizza with 2 toppings for Ada"
    (question,) = asker.questions
    assert (question.server, question.tool, question.kind) == ("asking", "order_pizza", "form")
    assert question.message == "Which pizza shall I order?"
    assert question.schema["required"] == ["name"]
    assert question.schema["properties"]["toppings"]["default"] == 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", [Answer.decline(), Answer.cancel()])
async def test_a_declined_or_cancelled_question_reaches_the_server_as_such(
    mode: str, answer: Answer
) -> None:
    async with connected(mode, Scripted(lambda q: answer)) as (toolset,):
        result = await toolset.call_tool("order_pizza", {})
    assert result.text == f"no pizza ordered: the user chose {answer.action}"


@pytest.mark.parametrize("mode", MODES)
async def test_a_url_question_shows_the_page_to_open(mode: str) -> None:
    asker = Scripted(lambda q: Answer.accept())
    async with connected(mode, asker) as (toolset,):
        result = await toolset.call_tool("sign_in", {})
    assert result.text == "sign-in: accept"
    (question,) = asker.questions
    assert (question.kind, question.url) == ("url", "https://pantry.test/login")


@pytest.mark.parametrize("mode", MODES)
async def test_where_no_one_can_answer_the_question_is_refused_saying_so(mode: str) -> None:
    async with connected(mode, None) as (toolset,):
        result = await toolset.call_tool("order_pizza", {})
    assert result.is_error
    assert "no one can answer: this farmhand has no user to ask" in result.text


async def test_the_call_timeout_stands_still_while_the_user_answers() -> None:
    async def thoughtful(question: Question) -> Answer:
        await anyio.sleep(1.0)  # longer than the call may take
        return Answer.accept({"name": "Ada"})

    server = asking()
    async with MCPToolset.from_config(server, call_timeout=0.5, asker=thoughtful) as toolset:
        await toolset.list_tools()
        answered = await toolset.call_tool("order_pizza", {})
        timed_out = await toolset.call_tool("slow", {"seconds": 2})
    assert answered.text == "ordered a large pizza with 2 toppings for Ada"
    assert timed_out.is_error and "did not answer within 0.5 s" in timed_out.text


@pytest.mark.parametrize("mode", MODES)
async def test_questions_during_calls_of_two_conversations_are_refused(mode: str) -> None:
    """Nothing in the protocol says which call asks: with calls of two conversations in
    flight on one connection, farmhand cannot tell whose user to ask, and says so."""
    first = Scripted(lambda q: Answer.accept({"name": "A"}))
    second = Scripted(lambda q: Answer.decline())
    async with connected(mode, first, second) as (mine, theirs), anyio.create_task_group() as tg:
        tg.start_soon(theirs.call_tool, "slow", {"seconds": 3})
        await anyio.sleep(0.3)  # their call is in flight
        result = await mine.call_tool("order_pizza", {})
        tg.cancel_scope.cancel()
    assert result.is_error
    assert "calls from different conversations are running on server 'asking'" in result.text
    assert first.questions == second.questions == []


async def test_a_question_outside_any_call_goes_to_the_default_asker() -> None:
    """E.g. asked while the tools are listed: no call is in flight to say whose it is."""
    default = Scripted(lambda q: Answer.accept({"name": "Ada"}))
    callers = ServerCallers("asking", default)
    params = types.ElicitRequestFormParams(message="Who?", requested_schema=PIZZA_SCHEMA)
    reply = await callers.elicit(cast(Any, None), params)
    assert reply == types.ElicitResult(action="accept", content={"name": "Ada", "size": "L"})
    assert [(q.server, q.tool, q.message) for q in default.questions] == [("asking", None, "Who?")]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (Answer.accept({"name": "Ada"}), None),
        (Answer.accept({}), "'name' is a required property"),
        (Answer.accept({"name": "Ada", "size": "XL"}), "size: 'XL' is not one of ['S', 'L']"),
        (Answer.decline(), None),  # only what is accepted must fit
    ],
)
def test_an_accepted_form_must_fit_its_schema(answer: Answer, problem: str | None) -> None:
    assert answer_problem(Question("s", "?", schema=PIZZA_SCHEMA), answer) == problem


def test_a_refusal_is_an_error_that_says_why_and_a_decline_is_a_decline() -> None:
    form = Question("s", "?", schema=PIZZA_SCHEMA)
    refused = Answer("decline", reason="no one can answer: nobody home", refused=True)
    assert elicit_result(form, refused) == types.ErrorData(
        code=types.INVALID_REQUEST, message="no one can answer: nobody home"
    )
    assert elicit_result(form, Answer.decline("late")) == types.ElicitResult(action="decline")
    url = Question("s", "?", "url", url="https://x.test")
    assert elicit_result(url, Answer.accept({"ignored": 1})) == types.ElicitResult(action="accept")
