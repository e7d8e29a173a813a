"""The Responses API's `mcp` tool on farmhand's own MCP client: a real server
(server-everything over streamable HTTP), the request policy's host allowlist, the
mcp_list_tools / mcp_call items, and the approval round trip over previous_response_id."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import openai
import pytest
from openai import OpenAI
from tests.support.farms import Relay, start
from tests.support.live import LiveServer, pantry_server, scripted_config
from tests.support.real_servers import everything_over

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.mcp_chat import DENIED
from farmhand.tools.choice import NONE
from farmhand.tools.definition import ToolDefinition


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    for url in everything_over("streamableHttp"):
        yield f"{url}/mcp"


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, everything: str
) -> Iterator[tuple[LiveServer, Relay]]:
    config = scripted_config(http_hosts=["127.0.0.1"])
    server, relay = start(tmp_path_factory.mktemp("home"), config)
    with server:
        yield server, relay


@pytest.fixture
def farm(shared: tuple[LiveServer, Relay]) -> Iterator[tuple[OpenAI, ScriptedProvider]]:
    server, relay = shared
    relay.script = ScriptedProvider()
    yield OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0), relay.script
    relay.script.assert_done()


def mcp_tool(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "everything", "server_url": url, **extra}


def sees_result(text: str) -> Any:
    def check(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool" and text in messages[-1].content, messages[-1]

    return check


def test_an_mcp_tool_lists_its_tools_runs_the_call_and_answers(
    farm: tuple[OpenAI, ScriptedProvider], everything: str
) -> None:
    client, script = farm

    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert sorted(t.name for t in tools) == ["everything:echo", "everything:get-sum"]

    script.add(Step.calls(ToolCall("everything:echo", {"message": "moo"}), expect=offered))
    script.add(Step.text("The server said moo.", expect=sees_result("Echo: moo")))
    tool = mcp_tool(everything, allowed_tools=["echo", "get-sum"], require_approval="never")
    response = client.responses.create(model="farm", input="Echo moo", tools=[tool])
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    listed, call, _ = response.output
    assert listed.type == "mcp_list_tools" and listed.server_label == "everything"
    assert sorted(t.name for t in listed.tools) == ["echo", "get-sum"]
    assert call.type == "mcp_call" and (call.server_label, call.name) == ("everything", "echo")
    assert call.output == "Echo: moo" and json.loads(call.arguments) == {"message": "moo"}
    assert response.output_text == "The server said moo."


def test_mcp_items_stream_with_their_events(
    farm: tuple[OpenAI, ScriptedProvider], everything: str
) -> None:
    client, script = farm
    script.add(Step.calls(ToolCall("everything:get-sum", {"a": 2, "b": 3})))
    script.add(Step.text("Five.", expect=sees_result("is 5")))
    tool = mcp_tool(everything, allowed_tools={"tool_names": ["get-sum"]}, require_approval="never")
    with client.responses.stream(model="farm", input="2+3?", tools=[tool], store=False) as stream:
        events = list(stream)
        final = stream.get_final_response()
    mcp = [e.type for e in events if e.type.startswith("response.mcp")]
    assert mcp == [
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
    ]
    [delta] = [e for e in events if e.type == "response.mcp_call_arguments.delta"]
    assert json.loads(delta.delta) == {"a": 2, "b": 3}
    assert [item.type for item in final.output] == ["mcp_list_tools", "mcp_call", "message"]


def test_a_host_the_operator_did_not_allow_is_403(tmp_path: Any, everything: str) -> None:
    server, relay = start(tmp_path, scripted_config(http_hosts=["tools.example.com"]))
    with server:
        client = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.PermissionDeniedError, match="http_hosts") as caught:
            client.responses.create(model="farm", input="x", tools=[mcp_tool(everything)])
    assert "127.0.0.1" in str(caught.value)
    assert relay.script.requests == []  # refused before the model was asked


def test_a_call_waits_for_approval_and_runs_once_approved(
    farm: tuple[OpenAI, ScriptedProvider], everything: str
) -> None:
    client, script = farm
    tool = mcp_tool(everything, allowed_tools=["echo"])  # approval: "always" by default
    script.add(Step.calls(ToolCall("everything:echo", {"message": "baa"}, "call_e1")))
    first = client.responses.create(model="farm", input="Echo baa", tools=[tool])
    assert [item.type for item in first.output] == ["mcp_list_tools", "mcp_approval_request"]
    request = first.output[1]
    assert request.type == "mcp_approval_request"
    assert (request.name, json.loads(request.arguments)) == ("echo", {"message": "baa"})

    approval = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
    with pytest.raises(openai.BadRequestError, match="send the mcp tool again"):
        client.responses.create(model="farm", previous_response_id=first.id, input=[approval])
    script.add(Step.text("It said baa.", expect=sees_result("Echo: baa")))
    second = client.responses.create(
        model="farm", previous_response_id=first.id, input=[approval], tools=[tool]
    )
    assert [item.type for item in second.output] == ["mcp_call", "message"]
    call = second.output[0]
    assert call.type == "mcp_call" and call.approval_request_id == request.id
    assert call.output == "Echo: baa"

    def sees_everything(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [(m.role, m.content) for m in messages] == [
            ("user", "Echo baa"),
            ("assistant", ""),
            ("tool", "Echo: baa"),
            ("assistant", "It said baa."),
            ("user", "Thanks."),
        ]
        assert messages[1].tool_calls[0].name == "everything:echo"

    script.add(Step.text("You're welcome.", expect=sees_everything))
    third = client.responses.create(
        model="farm", previous_response_id=second.id, input="Thanks.", tools=[tool]
    )
    assert [item.type for item in third.output] == ["message"]  # listed before: not again


def test_a_denied_call_is_not_run_and_the_model_is_told(
    farm: tuple[OpenAI, ScriptedProvider], everything: str
) -> None:
    client, script = farm
    tool = mcp_tool(everything, require_approval={"always": {"tool_names": ["echo"]}})
    script.add(Step.calls(ToolCall("everything:echo", {"message": "no"}, "call_e2")))
    first = client.responses.create(model="farm", input="Echo no", tools=[tool])
    request = first.output[-1]
    assert request.type == "mcp_approval_request"
    denied = DENIED.format(reason=" (not now)")
    script.add(Step.text("I will not echo it.", expect=sees_result(denied)))
    answer = {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": False,
        "reason": "not now",
    }
    second = client.responses.create(
        model="farm", previous_response_id=first.id, input=[answer], tools=[tool]
    )
    assert [item.type for item in second.output] == ["message"]


def test_out_of_rounds_the_model_answers_without_the_mcp_tools(
    farm: tuple[OpenAI, ScriptedProvider], everything: str
) -> None:
    client, script = farm

    def answers_without_tools(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [t.name for t in tools] == []

    script.add(Step.calls(ToolCall("everything:echo", {"message": "one"})))
    script.add(Step.text("Done after one call.", expect=answers_without_tools))
    tool = mcp_tool(everything, allowed_tools=["echo"], require_approval="never")
    response = client.responses.create(
        model="farm",
        input="Echo forever",
        tools=[tool],
        store=False,
        extra_body={"max_tool_rounds": 1},
    )
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    assert script.requests[1].settings.tool_choice == NONE
    assert response.model_extra["farmhand"]["stop_reason"] == "round_limit"  # type: ignore[index]


def test_an_operator_server_by_label_and_a_label_clash(tmp_path: Any) -> None:
    # Named by a request, an operator's server offers only read-only tools unless the
    # operator trusts it when named (echo is not marked read-only).
    pantry = pantry_server().model_copy(update={"trust_when_named": True})
    config = scripted_config(pantry)
    config.runtime.models[0].mcp_servers = []  # the model has no servers of its own
    server, relay = start(tmp_path, config)
    with server:
        client = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        relay.script.add(Step.calls(ToolCall("pantry:echo", {"text": "hi"})))
        relay.script.add(Step.text("ok", expect=sees_result("hi")))
        tool = {"type": "mcp", "server_label": "pantry", "require_approval": "never"}
        response = client.responses.create(model="farm", input="x", tools=[tool], store=False)
        assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
        config.runtime.models[0].mcp_servers = None  # now every server is the model's
        with pytest.raises(openai.BadRequestError, match="names a server this model has"):
            client.responses.create(model="farm", input="x", tools=[tool], store=False)
        # The model's own servers run inside the loop, and show as mcp_call items too.
        relay.script.add(Step.calls(ToolCall("pantry:echo", {"text": "moo"})))
        relay.script.add(Step.text("ok", expect=sees_result("moo")))
        own = client.responses.create(model="farm", input="x", store=False)
        assert [item.type for item in own.output] == ["mcp_call", "message"]
        call = own.output[0]
        assert call.type == "mcp_call" and (call.server_label, call.name) == ("pantry", "echo")
        assert call.output is not None and "moo" in call.output
