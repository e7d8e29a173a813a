"""farmhand as an A2A 1.0 agent, asked by the official `a2a-sdk` client over a live
`farmhand serve` (real uvicorn) with a scripted model and real stdio MCP servers: the card,
a message answered after a tool call, a streamed one, a task fetched and cancelled, a
question (input-required) answered in the task's next message, a context that goes on,
and the client's mistakes answered as JSON-RPC errors."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.types.a2a_pb2 import (
    Message as A2AMessage,
)
from a2a.utils.errors import (
    InvalidParamsError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from tests.support.farms import Relay, settle
from tests.support.live import LiveServer, pantry_server, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import McpServerConfig
from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

ASKING = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "asking_server.py"
KEY = "a2a-test-key"


def asking(name: str, **extra: Any) -> McpServerConfig:
    return McpServerConfig(name=name, command=sys.executable, args=[str(ASKING)], **extra)


class Agent:
    def __init__(self, server: LiveServer, state: ServiceState, relay: Relay, key: str) -> None:
        self.server, self.state, self.relay, self.key = server, state, relay, key

    @property
    def script(self) -> ScriptedProvider:
        return self.relay.script

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    @asynccontextmanager
    async def client(
        self, *, streaming: bool = False, key: str | None = None
    ) -> AsyncIterator[Client]:
        """The SDK's client, from the agent's card, sending `key` (default: the server's)."""
        headers = {"Authorization": f"Bearer {key if key is not None else self.key}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            config = ClientConfig(streaming=streaming, httpx_client=http)
            async with await create_client(self.server.url, config) as client:
                yield client

    def settle(self) -> None:
        settle(self.state, 30)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    config = scripted_config(
        pantry_server(), asking("gate", require_approval="always"), asking("ask")
    )
    config.server.question_timeout = 30
    config.server.limits.max_agent_tasks = 2
    relay = Relay()
    app = create_app(
        config,
        home=tmp_path_factory.mktemp("home"),
        provider_factory=lambda _: relay,
        api_keys=[KEY, "another-key"],
        max_body_bytes=64 * 1024,
    )
    with LiveServer(app) as server:
        yield Agent(server, app.state.farmhand, relay, KEY)


@pytest.fixture
def agent(shared: Agent) -> Iterator[Agent]:
    shared.relay.script = ScriptedProvider()
    yield shared
    shared.settle()
    shared.script.assert_done()
    runner = shared.state.chat_runner()
    assert runner.running == 0 and runner.parked == [] and shared.state.answers.pending == []


def say(
    text: str = "", *, data: Any = None, task: Task | None = None, **metadata: Any
) -> SendMessageRequest:
    parts = [Part(text=text)] if text else []
    if data is not None:
        parts.append(Part(data=ParseDict(data, struct_pb2.Value())))
    message = A2AMessage(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=parts)
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    request = SendMessageRequest(message=message)
    if metadata:
        request.metadata.update(metadata)
    return request


async def send(client: Client, request: SendMessageRequest) -> Task:
    """The task a non-streaming SendMessage answers with."""
    answers = [r async for r in client.send_message(request)]
    assert len(answers) == 1 and answers[0].HasField("task"), answers
    return answers[0].task


def answer_of(task: Task) -> str:
    (artifact,) = [a for a in task.artifacts if a.artifact_id == "answer"]
    return "".join(p.text for p in artifact.parts)


def said(task: Task) -> list[str]:
    """What the agent said along the way (its status messages, in order)."""
    messages = [*task.history, task.status.message]
    return [p.text for m in messages if m.role == Role.ROLE_AGENT for p in m.parts if p.text]


def sees_result(text: str) -> Callable[[Sequence[Message], Sequence[ToolDefinition]], None]:
    def check(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool" and text in messages[-1].content, messages[-1]

    return check


async def test_the_card_names_the_interface_skills_and_the_key_scheme(agent: Agent) -> None:
    async with httpx.AsyncClient(
        base_url=agent.server.url, headers=agent.headers(), timeout=60
    ) as http:
        await card_and_project(agent, http)


async def card_and_project(agent: Agent, http: httpx.AsyncClient) -> None:
    reply = await http.post(
        "/v1/projects/barns", json={"name": "north", "config": {"mcp": {"servers": []}}}
    )
    assert reply.status_code == 200, reply.text
    card = await A2ACardResolver(http, agent.server.url).get_agent_card()
    (interface,) = card.supported_interfaces
    assert interface.url == f"{agent.server.url}/a2a"
    assert (interface.protocol_binding, interface.protocol_version) == ("JSONRPC", "1.0")
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    skills = {s.id: s for s in card.skills}
    assert set(skills) == {"model:farm", "project:barns/north"}
    assert {"pantry:echo", "gate:wipe", "ask:order_pizza"} <= set(skills["model:farm"].tags)
    assert set(card.security_schemes) == {"bearer", "apiKey"}
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    # The wire names are A2A 1.0's.
    raw = (await http.get("/.well-known/agent-card.json")).json()
    assert {"supportedInterfaces", "skills", "capabilities", "securitySchemes"} <= set(raw)
    assert raw["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"


async def test_a_message_answered_after_a_tool_call(agent: Agent) -> None:
    agent.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "hay"})),
        Step.text("The pantry says hay.", expect=sees_result("hay")),
    )
    async with agent.client() as client:
        task = await send(client, say("What does the pantry echo?"))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(task) == "The pantry says hay."
    assert said(task)[:2] == ["calling pantry:echo", "pantry:echo answered"]
    result = [MessageToDict(p.data) for m in task.history for p in m.parts if p.HasField("data")]
    assert result[-1]["tool_result"]["content"] == "hay"
    assert MessageToDict(task.metadata)["rounds"] == 1  # one round of tool calls
    # The same task in farmhand's task records.
    record = httpx.get(f"{agent.server.url}/api/tasks/{task.id}", headers=agent.headers()).json()
    assert (record["task_status"], record["dialect"], record["model"]) == (
        "completed",
        "a2a",
        "farm",
    )


async def test_a_streamed_message(agent: Agent) -> None:
    agent.script.add(Step.text("Hay is dried grass."))
    async with agent.client(streaming=True) as client:
        events: list[StreamResponse] = [r async for r in client.send_message(say("What is hay?"))]
        kinds = [r.WhichOneof("payload") for r in events]
        assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
        chunks = [r.artifact_update for r in events if r.HasField("artifact_update")]
        # What came first is a start of the answer; the last chunk is all of it.
        assert len(chunks) >= 2 and not chunks[0].last_chunk and chunks[-1].last_chunk
        streamed = "".join(p.text for c in chunks[:-1] for p in c.artifact.parts)
        whole = "".join(p.text for p in chunks[-1].artifact.parts)
        assert whole == "Hay is dried grass." and streamed and whole.startswith(streamed)
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        task_id = events[0].task.id
        fetched = await client.get_task(GetTaskRequest(id=task_id))
    assert answer_of(fetched) == "Hay is dried grass."


async def start_slow(client: Client) -> Task:
    """A task started with return_immediately, once its chat waits in a slow tool call."""
    request = say("Take your time")
    request.configuration.return_immediately = True
    task = await send(client, request)
    deadline = time.monotonic() + 30
    while "calling ask:slow" not in said(task) and time.monotonic() < deadline:
        task = await client.get_task(GetTaskRequest(id=task.id))
    return task


async def test_a_task_fetched_and_cancelled(agent: Agent) -> None:
    agent.script.add(Step.calls(ToolCall("ask:slow", {"seconds": 600})))
    async with agent.client() as client:
        task = await start_slow(client)
        assert task.status.state == TaskState.TASK_STATE_WORKING
        cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        again = await client.get_task(GetTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_CANCELED
        listed = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_CANCELED))
        assert task.id in [t.id for t in listed.tasks]
    agent.settle()  # the call in flight stopped with its chat: not 600 s of waiting
    record = httpx.get(f"{agent.server.url}/api/tasks/{task.id}", headers=agent.headers()).json()
    assert (record["task_status"], record["error"]) == ("failed", "cancelled by the client")


async def test_a_client_may_leave_only_so_many_tasks_running(agent: Agent) -> None:
    slow = Step.calls(ToolCall("ask:slow", {"seconds": 600}))
    agent.script.add(slow, slow)
    async with agent.client() as client:
        running = [await start_slow(client), await start_slow(client)]
        with pytest.raises(InvalidRequestError, match=r"server\.limits\.max_agent_tasks"):
            await send(client, say("One more"))
        agent.script.add(Step.text("Yours."))
        async with agent.client(key="another-key") as other:  # another client's are its own
            assert answer_of(await send(other, say("hello"))) == "Yours."
        for task in running:
            await client.cancel_task(CancelTaskRequest(id=task.id))
        agent.settle()
        agent.script.add(Step.text("Now there is room."))
        assert answer_of(await send(client, say("One more"))) == "Now there is room."


async def test_an_approval_is_input_required_and_the_next_message_answers_it(agent: Agent) -> None:
    agent.script.add(Step.calls(ToolCall("gate:wipe", {"target": "barn"})))
    async with agent.client() as client:
        task = await send(client, say("Wipe the barn"))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        question = [MessageToDict(p.data) for p in task.status.message.parts if p.HasField("data")]
        assert question[0]["kind"] == "approval" and question[0]["tool"] == "wipe"
        assert question[0]["arguments"] == {"target": "barn"}
        assert len(agent.state.chat_runner().parked) == 1  # the chat waits on it

        # An answer that does not answer: asked again, the question still open.
        again = await send(client, say("perhaps", task=task))
        assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert 'answer "approve" or "deny"' in said(again)[-1]

        agent.script.add(Step.text("The barn is wiped.", expect=sees_result("wiped barn")))
        done = await send(client, say("approve", task=task))
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(done) == "The barn is wiped."


async def test_a_subscriber_follows_a_task_from_its_question_to_its_end(agent: Agent) -> None:
    agent.script.add(Step.calls(ToolCall("gate:wipe", {"target": "shed"})))
    seen: list[StreamResponse] = []
    async with agent.client(streaming=True) as watcher, agent.client() as client:
        task = await send(client, say("Wipe the shed"))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

        async def watch() -> None:
            async for event in watcher.subscribe(SubscribeToTaskRequest(id=task.id)):
                seen.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            with anyio.fail_after(30):
                while not seen:  # subscribed: the task as it stands came first
                    await anyio.sleep(0.05)
            agent.script.add(Step.text("The shed is wiped.", expect=sees_result("wiped shed")))
            await send(client, say("approve", task=task))
    assert seen[0].task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert seen[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    chunks = [e.artifact_update for e in seen if e.HasField("artifact_update")]
    assert "".join(p.text for p in chunks[-1].artifact.parts) == "The shed is wiped."


async def test_a_form_question_answered_with_a_data_part(agent: Agent) -> None:
    agent.script.add(Step.calls(ToolCall("ask:order_pizza", {})))
    async with agent.client() as client:
        task = await send(client, say("Order a pizza"))
        question = [MessageToDict(p.data) for p in task.status.message.parts if p.HasField("data")]
        assert (
            question[0]["kind"] == "form"
            and "name" in question[0]["requested_schema"]["properties"]
        )
        told = sees_result("ordered a small pizza with 3 toppings for Ada")
        agent.script.add(Step.text("Ordered.", expect=told))
        answer = {"name": "Ada", "size": "small", "toppings": 3}  # an int, not 3.0
        done = await send(client, say(data=answer, task=task))
    assert answer_of(done) == "Ordered."


async def test_a_context_goes_on_from_its_earlier_tasks(agent: Agent) -> None:
    def remembers(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [(m.role, m.content) for m in messages] == [
            ("user", "My cow is Daisy."),
            ("assistant", "Hello Daisy."),
            ("user", "What is my cow called?"),
        ]

    agent.script.add(Step.text("Hello Daisy."), Step.text("Daisy.", expect=remembers))
    async with agent.client() as client:
        first = await send(client, say("My cow is Daisy."))
        follow = say("What is my cow called?")
        follow.message.context_id = first.context_id
        second = await send(client, follow)
    assert second.context_id == first.context_id and second.id != first.id
    assert answer_of(second) == "Daisy."


async def test_the_clients_mistakes_are_json_rpc_errors(agent: Agent) -> None:
    async with agent.client() as client:
        with pytest.raises(InvalidParamsError, match="nope"):
            await send(client, say("hi", model="nope"))
        file = say("read this")
        file.message.parts.append(Part(url="file:///etc/passwd"))
        with pytest.raises(InvalidParamsError, match="farmhand's agent reads text and data parts"):
            await send(client, file)
        with pytest.raises(InvalidParamsError, match="max_tokens must be a whole number"):
            await send(client, say("hi", max_tokens=-3))
        with pytest.raises(PushNotificationNotSupportedError):
            await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id="x", url="http://127.0.0.1:9/hook")
            )
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))


async def test_another_client_cannot_see_or_cancel_a_task(agent: Agent) -> None:
    agent.script.add(Step.text("Mine."))
    async with agent.client() as client:
        task = await send(client, say("hello"))
    async with agent.client(key="another-key") as other:
        with pytest.raises(TaskNotFoundError):
            await other.get_task(GetTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await other.cancel_task(CancelTaskRequest(id=task.id))
        assert task.id not in [t.id for t in (await other.list_tasks(ListTasksRequest())).tasks]


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


SEND = rpc(
    "SendMessage",
    {"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]}},
)


async def test_the_request_policy_holds_for_a2a(agent: Agent) -> None:
    url = agent.server.url
    headers = {**agent.headers(), "A2A-Version": "1.0"}
    with httpx.Client(base_url=url, timeout=30) as http:
        # A page of another site: refused before anything runs.
        foreign = http.post(
            "/a2a", json=SEND, headers={**headers, "Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        rebound = http.post("/a2a", json=SEND, headers={**headers, "Host": "evil.example"})
        assert rebound.status_code == 421
        # No key, or a wrong one: 401, as a JSON-RPC error; the card too.
        for sent in ({"A2A-Version": "1.0"}, {"Authorization": "Bearer wrong"}):
            refused = http.post("/a2a", json=SEND, headers=sent)
            assert refused.status_code == 401 and "API key" in refused.json()["error"]["message"]
        assert http.get("/.well-known/agent-card.json").status_code == 401
        # A body beyond the server's limit, and one that is not strict JSON.
        big = rpc(
            "SendMessage",
            {"message": {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": "x" * 70_000}]}},
        )
        too_large = http.post("/a2a", json=big, headers=headers)
        assert too_large.status_code == 413 and too_large.json()["error"]["code"] == -32600
        nan = http.post(
            "/a2a",
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": NaN}}',
            headers={**headers, "Content-Type": "application/json"},
        )
        assert nan.status_code == 400
        form = http.post("/a2a", content=b"a=b", headers={**headers, "Content-Type": "text/plain"})
        assert form.status_code == 415
    # Nothing of these reached the model.
    assert agent.script.requests == []
