"""Questions of the operator's MCP servers over the Responses API, with the real `openai`
SDK against a live `farmhand serve`: the chat pauses, the response ends with the question
(mcp_approval_request for `require_approval`, mcp_elicitation_request for a server's form),
the next request answers it and the paused chat goes on. Other dialects refuse, at once."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI
from tests.support.farms import Relay, settle
from tests.support.live import LiveServer, scripted_config
from tests.support.real_servers import everything_over

from farmhand.assembly import create_app
from farmhand.config.models import McpServerConfig, ModelConfig
from farmhand.messages import Message, ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition

ASKING = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "asking_server.py"
TIMEOUT = 8.0  # seconds a question waits here: short, so the unanswered one ends soon,
# long enough that a loaded CI machine answers the others in time (2 s was not, at load 4)


def asking(name: str, **extra: Any) -> McpServerConfig:
    return McpServerConfig(name=name, command=sys.executable, args=[str(ASKING)], **extra)


class Farm:
    def __init__(self, server: LiveServer, state: ServiceState, relay: Relay) -> None:
        self.server = server
        self.state = state
        self.relay = relay
        self.client = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)

    @property
    def script(self) -> ScriptedProvider:
        return self.relay.script

    def settle(self) -> None:
        """Wait until no chat runs (a parked one ends when its question times out)."""
        settle(self.state)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    # "gate" asks before every call; "ask" runs its tools, which ask their own questions.
    config = scripted_config(
        asking("gate", require_approval="always"), asking("ask"), http_hosts=["127.0.0.1"]
    )
    config.server.question_timeout = TIMEOUT
    relay = Relay()

    def factory(_: ModelConfig) -> Provider:
        return relay

    app = create_app(config, home=tmp_path_factory.mktemp("home"), provider_factory=factory)
    with LiveServer(app) as server:
        yield Farm(server, app.state.farmhand, relay)


@pytest.fixture
def farm(shared: Farm) -> Iterator[Farm]:
    shared.relay.script = ScriptedProvider()
    yield shared
    shared.settle()
    shared.script.assert_done()
    runner = shared.state.chat_runner()
    assert runner.running == 0 and runner.parked == [] and shared.state.answers.pending == []
    assert not any(c.busy for c in shared.state.pool.connections)


def sees_result(text: str) -> Callable[[Sequence[Message], Sequence[ToolDefinition]], None]:
    def check(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool" and text in messages[-1].content, messages[-1]

    return check


def approval(question_id: str, approve: bool, **extra: Any) -> dict[str, Any]:
    return {
        "type": "mcp_approval_response",
        "approval_request_id": question_id,
        "approve": approve,
        **extra,
    }


def test_an_approved_call_runs_and_the_answer_comes(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("gate:wipe", {"target": "barn"})))
    asked = farm.client.responses.create(model="farm", input="Wipe the barn")
    question = asked.output[-1]
    assert asked.status == "completed" and question.type == "mcp_approval_request"
    assert question.id.startswith("ask_")
    assert (question.server_label, question.name) == ("gate", "wipe")
    assert json.loads(question.arguments) == {"target": "barn"}
    assert farm.state.chat_runner().parked == [question.id]  # the chat waits, past its response

    farm.script.add(Step.text("The barn is wiped.", expect=sees_result("wiped barn")))
    done = farm.client.responses.create(
        model="farm", previous_response_id=asked.id, input=[approval(question.id, True)]
    )
    call, _ = done.output
    assert call.type == "mcp_call" and call.status == "completed" and call.output == "wiped barn"
    assert done.output_text == "The barn is wiped."

    # The conversation goes on from the stored responses: the call and its result are in it.
    def history(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
        assert messages[1].tool_calls[0].name == "gate:wipe" and messages[2].content == "wiped barn"

    farm.script.add(Step.text("Yes.", expect=history))
    later = farm.client.responses.create(model="farm", previous_response_id=done.id, input="Done?")
    assert later.output_text == "Yes."


def test_a_denied_call_is_not_run_and_the_model_is_told_streamed(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("gate:wipe", {"target": "x"}), text="Let me wipe it. "))
    with farm.client.responses.stream(model="farm", input="Wipe x") as stream:
        kinds = [event.type for event in stream]
        asked = stream.get_final_response()
    assert kinds[-3:] == [
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    question = asked.output[-1]
    assert question.type == "mcp_approval_request" and asked.output_text == "Let me wipe it. "

    told = sees_result("gate:wipe was not run: the user declined it")
    farm.script.add(Step.text("I left it alone.", expect=told))
    with farm.client.responses.stream(
        model="farm",
        previous_response_id=asked.id,
        input=[approval(question.id, False, reason="keep x")],
    ) as stream:
        done = stream.get_final_response()
    assert [item.type for item in done.output] == ["mcp_call", "message"]
    assert done.output[0].status == "failed" and done.output_text == "I left it alone."


def test_a_form_question_answered_with_content_reaches_the_tool(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("ask:order_pizza", {})))
    asked = farm.client.responses.create(model="farm", input="Order a pizza")
    question = asked.output[-1].model_dump()
    assert question["type"] == "mcp_elicitation_request" and question["mode"] == "form"
    assert question["message"] == "Which pizza shall I order?"
    assert "name" in question["requested_schema"]["properties"]

    answer = {
        "type": "mcp_elicitation_response",
        "elicitation_request_id": question["id"],
        "action": "accept",
        "content": {"name": "Ada", "size": "small"},
    }
    farm.script.add(
        Step.text("Ordered.", expect=sees_result("ordered a small pizza with 2 toppings for Ada"))
    )
    done = farm.client.responses.create(
        model="farm",
        previous_response_id=asked.id,
        input=[answer],  # type: ignore[list-item]  # farmhand's own item
    )
    assert done.output_text == "Ordered."


def test_unknown_ids_are_404_and_malformed_answers_400_with_the_question_open(farm: Farm) -> None:
    with pytest.raises(openai.NotFoundError, match="no open question"):
        farm.client.responses.create(model="farm", input=[approval("ask_nope", True)])

    farm.script.add(Step.calls(ToolCall("ask:order_pizza", {})))
    asked = farm.client.responses.create(model="farm", input="Order a pizza")
    question_id = asked.output[-1].id
    wrong = {
        "type": "mcp_elicitation_response",
        "elicitation_request_id": question_id,
        "action": "accept",
        "content": {"size": "huge"},
    }
    for body, says in [
        (wrong, "does not fit the question's form"),
        ({**wrong, "action": "maybe"}, "action must be"),
    ]:
        with pytest.raises(openai.BadRequestError, match=says):
            farm.client.responses.create(model="farm", input=[body])  # type: ignore[list-item]
        assert farm.state.chat_runner().parked == [question_id]  # still open

    farm.script.add(
        Step.text("No pizza.", expect=sees_result("no pizza ordered: the user chose decline"))
    )
    declined = {**wrong, "action": "decline", "content": None}
    done = farm.client.responses.create(model="farm", input=[declined])  # type: ignore[list-item]
    assert done.output_text == "No pizza."


def test_an_unanswered_question_times_out_and_the_chat_ends(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("gate:wipe", {"target": "barn"})))
    told = sees_result(f"no answer came within {TIMEOUT:g} s")
    farm.script.add(Step.text("Nobody answered.", expect=told))
    asked = farm.client.responses.create(model="farm", input="Wipe the barn")
    question_id = asked.output[-1].id
    farm.settle()  # the decline comes after TIMEOUT; the chat then finishes on its own
    # The fixture checks nothing is left: no chat, no parked question, no busy session.
    with pytest.raises(openai.NotFoundError):
        farm.client.responses.create(model="farm", input=[approval(question_id, True)])


def test_a_client_that_leaves_mid_stream_stops_its_chat(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("ask:slow", {"seconds": 600})))
    body = {"model": "farm", "input": "Take your time", "stream": True}
    with (
        httpx.Client(base_url=farm.server.url, timeout=30) as http,
        http.stream("POST", "/v1/responses", json=body) as reply,
    ):
        for line in reply.iter_lines():
            if "response.mcp_call.in_progress" in line:
                break  # the call runs; leave
    farm.settle()
    assert farm.state.chat_runner().running == 0  # cancelled, not 600 s of waiting


def test_other_dialects_refuse_the_question_at_once(farm: Farm) -> None:
    told = sees_result("no one can answer: this API dialect cannot hand a question back")
    farm.script.add(Step.calls(ToolCall("gate:wipe", {"target": "barn"})))
    farm.script.add(Step.text("It needs an approval I cannot get.", expect=told))
    reply = farm.client.chat.completions.create(
        model="farm", messages=[{"role": "user", "content": "Wipe the barn"}]
    )
    assert reply.choices[0].message.content == "It needs an approval I cannot get."


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    for url in everything_over("streamableHttp"):
        yield f"{url}/mcp"


def test_a_held_mcp_tool_call_and_a_server_question_in_one_conversation(
    farm: Farm, everything: str
) -> None:
    """The request's own `mcp` tool holds its call for approval (the service runs it
    between loop runs); the operator's server asks mid-loop. Each answer goes where its id
    says."""
    tool = {"type": "mcp", "server_label": "everything", "server_url": everything}
    tool["allowed_tools"] = ["echo"]
    farm.script.add(Step.calls(ToolCall("everything:echo", {"message": "moo"})))
    held = farm.client.responses.create(model="farm", input="Echo, then wipe", tools=[tool])
    request = held.output[-1]
    assert request.type == "mcp_approval_request" and not request.id.startswith("ask_")

    farm.script.add(
        Step.calls(ToolCall("gate:wipe", {"target": "barn"}), expect=sees_result("Echo: moo"))
    )
    asked = farm.client.responses.create(
        model="farm",
        previous_response_id=held.id,
        input=[approval(request.id, True)],
        tools=[tool],
    )
    question = asked.output[-1]
    assert asked.output[0].type == "mcp_call" and asked.output[0].output == "Echo: moo"
    assert question.type == "mcp_approval_request" and question.id.startswith("ask_")

    farm.script.add(Step.text("Echoed and wiped.", expect=sees_result("wiped barn")))
    done = farm.client.responses.create(
        model="farm",
        previous_response_id=asked.id,
        input=[approval(question.id, True)],
        tools=[tool],
    )
    assert done.output_text == "Echoed and wiped."
