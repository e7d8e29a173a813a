"""The OpenAI Responses dialect with the real `openai` SDK against a real uvicorn: scripted
model turns; `responses.create`, `responses.stream`, stored responses and their errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai
import pytest
from tests.support.farms import Farm

from farmhand.errors import ProviderError
from farmhand.messages import Message, StreamEvent, ToolCall, Usage
from farmhand.parsing.registry import parser_for
from farmhand.providers.scripted import Step
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "strict": True,
}


def written(text: str, tools: Sequence[str]) -> Step:
    """A turn as a model writes it in Hermes tags, read by the real parser a few characters
    at a time: text and call deltas as they are written, then the calls."""
    parser = parser_for(None, None, list(tools), family="hermes_2_pro")
    events: list[StreamEvent] = []
    for at in range(0, len(text), 5):
        events += parser.feed(text[at : at + 5])
    events += parser.finish()
    return Step(tuple(events))


def seen(messages: Sequence[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


# responses.create


def test_a_string_input_gets_a_response_with_its_text(farm: Farm) -> None:
    farm.script.add(Step.text("Hello from the farm.", usage=Usage(12, 5)))
    response = farm.client.responses.create(
        model="farm",
        input="hello",
        temperature=0.3,
        top_p=0.8,
        max_output_tokens=40,
        store=False,
    )
    assert response.object == "response" and response.status == "completed"
    assert response.id.startswith("resp_")
    assert response.output_text == "Hello from the farm."
    message = response.output[0]
    assert message.type == "message" and message.role == "assistant"
    assert message.content[0].type == "output_text"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 5)
    assert (response.temperature, response.max_output_tokens) == (0.3, 40)
    request = farm.script.requests[0]
    assert seen(request.messages) == [("user", "hello")]
    assert (request.settings.temperature, request.settings.max_tokens) == (0.3, 40)
    assert request.settings.top_p == 0.8
    assert request.settings.stream is False  # the backend may answer in one piece


def test_instructions_and_system_and_developer_items_lead_as_one_system_message(
    farm: Farm,
) -> None:
    farm.script.add(Step.text("Fine."))
    farm.client.responses.create(
        model="farm",
        instructions="Be brief.",
        input=[
            {"role": "developer", "content": "You are on a farm."},
            {
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": "Speak plainly."}],
            },
            {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
            {"role": "user", "content": "How are the cows?"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
        ],
        store=False,
    )
    assert seen(farm.script.requests[0].messages) == [
        ("system", "Be brief.\n\nYou are on a farm.\n\nSpeak plainly."),
        ("user", "Hi"),
        ("assistant", "Hello."),
        ("user", "How are the cows?"),
    ]


def test_a_function_call_round_trip_through_function_call_output(farm: Farm) -> None:
    call = ToolCall("get_weather", {"city": "Oslo"}, "call_w1")
    farm.script.add(Step.calls(call, text="Let me look."))
    first = farm.client.responses.create(model="farm", input="Weather in Oslo?", tools=[WEATHER])
    assert [item.type for item in first.output] == ["message", "function_call"]
    function_call = first.output[1]
    assert function_call.type == "function_call"
    assert (function_call.name, function_call.call_id) == ("get_weather", "call_w1")
    assert json.loads(function_call.arguments) == {"city": "Oslo"}
    assert farm.script.requests[0].tools[0].name == "get_weather"

    def sees_result(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-2].tool_calls[0].id == "call_w1"
        assert (messages[-1].role, messages[-1].content) == ("tool", "Sunny, 21 C")
        assert messages[-1].tool_call_id == "call_w1"

    farm.script.add(Step.text("It is sunny in Oslo.", expect=sees_result))
    second = farm.client.responses.create(
        model="farm",
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"type": "function_call_output", "call_id": "call_w1", "output": "Sunny, 21 C"},
        ],
        tools=[WEATHER],
    )
    assert second.output_text == "It is sunny in Oslo."


def test_tool_choice_and_parallel_tool_calls_reach_the_model(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("get_weather", {"city": "Rome"})))
    farm.client.responses.create(
        model="farm",
        input="Rome?",
        tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
        parallel_tool_calls=False,
        store=False,
    )
    settings = farm.script.requests[0].settings
    assert settings.tool_choice == ToolChoice.tool("get_weather")
    assert settings.parallel_tool_calls is False


def test_stored_responses_continue_and_can_be_read_and_deleted(farm: Farm) -> None:
    farm.script.add(Step.text("Your name is Ada."))
    first = farm.client.responses.create(
        model="farm", instructions="Remember names.", input="My name is Ada."
    )

    def sees_history(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        # instructions are not carried over: the second request has its own
        assert seen(messages) == [
            ("system", "Answer in one word."),
            ("user", "My name is Ada."),
            ("assistant", "Your name is Ada."),
            ("user", "What is my name?"),
        ]

    farm.script.add(Step.text("Ada.", expect=sees_history))
    second = farm.client.responses.create(
        model="farm",
        instructions="Answer in one word.",
        input="What is my name?",
        previous_response_id=first.id,
    )
    assert second.previous_response_id == first.id
    again = farm.client.responses.retrieve(second.id)
    assert again.output_text == "Ada." and again.id == second.id
    items = farm.client.responses.input_items.list(second.id, order="asc")
    texts = [item.content[0].text for item in items.data]  # type: ignore[union-attr]
    assert texts == ["My name is Ada.", "Your name is Ada.", "What is my name?"]
    deleted = farm.http.delete(f"/v1/responses/{second.id}")
    assert deleted.json() == {"id": second.id, "object": "response", "deleted": True}
    with pytest.raises(openai.NotFoundError, match="no stored response"):
        farm.client.responses.retrieve(second.id)


def test_store_false_keeps_nothing_to_continue(farm: Farm) -> None:
    farm.script.add(Step.text("ok"))
    response = farm.client.responses.create(model="farm", input="hi", store=False)
    with pytest.raises(openai.NotFoundError) as caught:
        farm.client.responses.create(model="farm", input="again", previous_response_id=response.id)
    assert caught.value.body["code"] == "previous_response_not_found"  # type: ignore[index]


# responses.stream


def test_a_streamed_answer_follows_the_documented_event_sequence(farm: Farm) -> None:
    farm.script.add(Step.text("Hay is dry today.", reasoning="Think about hay.", usage=Usage(3, 4)))
    with farm.client.responses.stream(model="farm", input="hay?", store=False) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"

    def of_item(index: int) -> list[str]:
        return [e.type for e in events if getattr(e, "output_index", None) == index]

    deltas = kinds.count("response.output_text.delta")
    assert of_item(1) == [
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    reasoning = of_item(0)
    assert reasoning[:2] == ["response.output_item.added", "response.content_part.added"]
    assert reasoning[-3:] == [
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    assert kinds.count("response.reasoning_text.delta") >= 2 and deltas >= 3
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Hay is dry today." == final.output_text
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.usage is not None and final.usage.total_tokens == 7


def test_streamed_function_call_arguments_arrive_as_deltas(farm: Farm) -> None:
    reply = (
        'Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo, Norway"}}'
        "</tool_call>"
    )
    farm.script.add(written(reply, ["get_weather"]))
    with farm.client.responses.stream(model="farm", input="Oslo?", tools=[WEATHER]) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [e.item.type for e in added] == ["message", "function_call"]
    call_events = kinds[
        kinds.index("response.output_item.added", kinds.index("response.output_item.done")) :
    ]
    pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(pieces) >= 2
    assert call_events == [
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * len(pieces),
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert json.loads("".join(pieces)) == json.loads(done.arguments) == {"city": "Oslo, Norway"}
    call = final.output[1]
    assert call.type == "function_call" and call.name == "get_weather"
    assert call.status == "completed"
    kept = farm.client.responses.retrieve(final.id)  # a streamed response is stored too
    kept_call = kept.output[1]
    assert kept_call.type == "function_call" and kept_call.call_id == call.call_id
    assert kept_call.arguments == call.arguments


# What clients send that farmhand cannot run


def test_hosted_tools_and_namespaces_are_accepted_and_named(farm: Farm) -> None:
    def sees_functions(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [t.name for t in tools] == ["get_weather", "exec", "spawn_agent"]

    farm.script.add(
        Step.calls(ToolCall("spawn_agent", {"task": "x"}, "call_s"), expect=sees_functions)
    )
    tools: list[Any] = [
        WEATHER,
        {"type": "web_search", "external_web_access": True},
        {"type": "web_search_preview"},
        {"type": "file_search", "vector_store_ids": ["vs_1"]},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {
            "type": "computer_use_preview",
            "display_width": 1,
            "display_height": 1,
            "environment": "linux",
        },
        {"type": "image_generation"},
        {"type": "local_shell"},
        {
            "type": "custom",
            "name": "exec",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
        },
        {
            "type": "namespace",
            "name": "agents",
            "description": "Sub-agents.",
            "tools": [
                {
                    "type": "function",
                    "name": "spawn_agent",
                    "strict": False,
                    "parameters": {"type": "object", "properties": {"task": {"type": "string"}}},
                },
            ],
        },
    ]
    response = farm.client.responses.create(model="farm", input="go", tools=tools, store=False)
    call = response.output[0]
    assert call.type == "function_call" and call.name == "spawn_agent"
    assert call.namespace == "agents"
    ignored = response.model_extra["farmhand"]["ignored_tools"]  # type: ignore[index]
    assert ignored == [
        "web_search", "web_search_preview", "file_search", "code_interpreter",
        "computer_use_preview", "image_generation", "local_shell",
    ]  # fmt: skip
    notes = response.model_extra["farmhand"]["notes"]  # type: ignore[index]
    assert notes == [
        "custom tool 'exec': its lark grammar is not enforced; the model is shown it and"
        " writes the input freely"
    ]


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        ({"input": "x"}, "model", "`model` is required"),
        ({"model": "farm"}, "input", "`input` is required"),
        ({"model": "farm", "input": 5}, "input", "a string or a list"),
        ({"model": "farm", "input": [{"role": "pilot", "content": "x"}]}, "input", "use user"),
        ({"model": "farm", "input": [{"type": "teleport"}]}, "input", "farmhand reads message"),
        (
            {
                "model": "farm",
                "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}],
            },
            "input",
            "text only",
        ),
        (
            {"model": "farm", "input": [{"type": "function_call_output", "output": "x"}]},
            "input",
            "'call_id'",
        ),
        (
            {"model": "farm", "input": "x", "tools": [{"type": "function"}]},
            "tools",
            'needs a "name"',
        ),
        ({"model": "farm", "input": "x", "tools": "all"}, "tools", "must be a list"),
        (
            {"model": "farm", "input": "x", "tool_choice": {"type": "web_search"}},
            "tool_choice",
            "cannot run",
        ),
        ({"model": "farm", "input": "x", "tool_choice": "required"}, "tool_choice", "needs tools"),
        ({"model": "farm", "input": "x", "temperature": 9}, "temperature", "between 0 and 2"),
        (
            {"model": "farm", "input": "x", "max_output_tokens": 0},
            "max_output_tokens",
            "at least 1",
        ),
        ({"model": "farm", "input": "x", "background": True}, "background", "not supported"),
        (
            {
                "model": "farm",
                "input": [
                    {
                        "type": "mcp_approval_response",
                        "approval_request_id": "mcpr_x",
                        "approve": True,
                    }
                ],
            },
            "input",
            "names no mcp_approval_request",
        ),
    ],
)
def test_bad_requests_are_400_with_what_to_fix(
    farm: Farm, body: dict[str, Any], param: str, says: str
) -> None:
    reply = farm.http.post("/v1/responses", json=body)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and says in error["message"], error


def test_an_unknown_model_is_a_404_before_the_stream_starts(farm: Farm) -> None:
    with (
        pytest.raises(openai.NotFoundError, match="unknown model"),
        farm.client.responses.stream(model="nope", input="x") as stream,
    ):
        list(stream)


def test_a_failure_after_the_stream_started_ends_it_with_response_failed(farm: Farm) -> None:
    farm.script.add(ProviderError("the backend went away"))
    body = {"model": "farm", "stream": True, "input": "x"}
    with farm.http.stream("POST", "/v1/responses", json=body) as reply:
        lines = list(reply.iter_lines())
    assert reply.status_code == 200
    events = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    assert events == ["response.created", "response.in_progress", "error", "response.failed"]
    failed = json.loads(lines[-2].removeprefix("data: "))
    assert failed["response"]["status"] == "failed"
    assert "the backend went away" in failed["response"]["error"]["message"]
