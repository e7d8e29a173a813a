"""Client tool calls stream to an OpenAI client as they are written: the call's id and name
first, then its arguments in pieces, each with its `index`, read with the real `openai`
SDK's stream helpers. The model is raw Hermes text run through farmhand's real parser a few
characters at a time, so the deltas are the parser's own."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.messages import Finish, Message, StreamEvent, ToolCallEvent
from farmhand.parsing.registry import parser_for
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.tools.definition import ToolDefinition

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
REPLY = (
    'Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo, Norway",'
    ' "days": 3}}</tool_call><tool_call>{"name": "get_weather", "arguments":'
    ' {"city": "Bergen"}}</tool_call>'
)


class HermesText:
    """A model that writes REPLY, parsed by the real Hermes parser in 4-character chunks."""

    name = "hermes-text"

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        parser = parser_for(None, None, [t.name for t in tools], family="hermes_2_pro")
        calls = False
        for start in range(0, len(REPLY), 4):
            for event in parser.feed(REPLY[start : start + 4]):
                calls = calls or isinstance(event, ToolCallEvent)
                yield event
        for event in parser.finish():
            yield event
        yield Finish("tool_calls" if calls else "stop")

    async def aclose(self) -> None:
        return None


@pytest.fixture
def client(tmp_path: Path) -> Iterator[OpenAI]:
    def factory(_: Any) -> Provider:
        return HermesText()

    app = create_app(scripted_config(), home=tmp_path, provider_factory=factory, api_keys=())
    with LiveServer(app) as server:
        yield OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)


def test_arguments_stream_in_pieces_with_the_calls_index_and_id(client: OpenAI) -> None:
    pieces: dict[int, list[str]] = {0: [], 1: []}
    done: dict[int, tuple[str, str]] = {}
    with client.chat.completions.stream(
        model="farm", messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER]
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                pieces[event.index].append(event.arguments_delta)
            elif event.type == "tool_calls.function.arguments.done":
                done[event.index] = (event.name, event.arguments)
        final = stream.get_final_completion()
    assert len(pieces[0]) > 3 and len(pieces[1]) > 1  # in pieces, not one chunk at the end
    assert json.loads("".join(pieces[0])) == {"city": "Oslo, Norway", "days": 3}
    assert done == {
        0: ("get_weather", "".join(pieces[0])),
        1: ("get_weather", "".join(pieces[1])),
    }
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert message.content == "Let me check."
    calls = message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        {"city": "Oslo, Norway", "days": 3},
        {"city": "Bergen"},
    ]
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith("call_") for c in calls)


def test_raw_chunks_carry_the_name_before_any_argument(client: OpenAI) -> None:
    stream = client.chat.completions.create(
        model="farm",
        messages=[{"role": "user", "content": "weather?"}],
        tools=[WEATHER],
        stream=True,
    )
    seen: list[dict[str, Any]] = []
    for chunk in stream:
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            seen.append(delta.model_dump(exclude_none=True))
    first = seen[0]
    assert first["index"] == 0 and first["id"].startswith("call_")
    assert first["function"]["name"] == "get_weather"
    later = [d for d in seen[1:] if d["index"] == 0]
    assert later and all("name" not in d.get("function", {}) for d in later)
    assert "id" not in later[0]
    assert sum(1 for d in seen if "id" in d) == 2  # each call announced once
