"""The Anthropic Messages dialect with the real embedded model (Qwen2.5-Coder-1.5B, greedy)
behind a live `farmhand serve`: a forced tool call comes back as a tool_use block, a streamed
answer as text deltas, a stop sequence of several tokens ends the answer and is named
(stop_reason "stop_sequence"), and count_tokens is the model's own tokenizer over its chat
template."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from anthropic import Anthropic
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.messages import Message
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.providers.llamacpp import LlamaCppProvider
from farmhand.providers.prompt_based import PromptBasedProvider
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.e2e

WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
        "required": ["city"],
    },
}
SAMPLING = {"temperature": 0}


class Embedded:
    def __init__(self, client: Anthropic, provider: LlamaCppProvider) -> None:
        self.client = client
        self.provider = provider


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedded]:
    config = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "qwen", "provider": "llamacpp"}]}}
    )
    built: list[Provider] = []

    def factory(model: ModelConfig) -> Provider:
        built.append(provider_for(model))
        return built[-1]

    app = create_app(
        config, home=tmp_path_factory.mktemp("home"), provider_factory=factory, api_keys=()
    )
    with LiveServer(app) as server:
        client = Anthropic(base_url=server.url, api_key="x", max_retries=0, timeout=600)
        client.models.list()  # the server is up; the model loads on the first chat
        client.messages.count_tokens(model="qwen", messages=[{"role": "user", "content": "hi"}])
        (provider,) = built
        assert isinstance(provider, LlamaCppProvider)
        yield Embedded(client, provider)


def test_a_forced_tool_call_is_a_tool_use_block(embedded: Embedded) -> None:
    reply = embedded.client.messages.create(
        model="qwen",
        max_tokens=64,
        system="You are a weather assistant.",
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[WEATHER],
        tool_choice={"type": "tool", "name": "get_weather"},
        extra_body=SAMPLING,
    )
    assert reply.stop_reason == "tool_use"
    uses = [b for b in reply.content if b.type == "tool_use"]
    assert [u.name for u in uses] == ["get_weather"]
    assert isinstance(uses[0].input, dict) and "paris" in str(uses[0].input["city"]).lower()
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


def test_a_streamed_answer(embedded: Embedded) -> None:
    with embedded.client.messages.stream(
        model="qwen",
        max_tokens=24,
        messages=[{"role": "user", "content": "Say hello in one short sentence."}],
        extra_body=SAMPLING,
    ) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert texts and "".join(texts).strip()
    assert final.content[-1].type == "text" and final.content[-1].text == "".join(texts)
    assert final.stop_reason in ("end_turn", "max_tokens")


COUNT = [{"role": "user", "content": "Count from 1 to 10, separated by commas."}]
STOP = ", 5,"  # four tokens for Qwen's tokenizer: ",", " ", "5", ","


def test_a_stop_sequence_ends_the_answer_and_is_named(embedded: Embedded) -> None:
    reply = embedded.client.messages.create(
        model="qwen",
        max_tokens=40,
        messages=COUNT,
        stop_sequences=["ELEVEN", STOP],
        extra_body=SAMPLING,
    )
    (block,) = reply.content
    assert block.type == "text" and block.text.rstrip().endswith("4"), block.text
    assert STOP not in block.text
    assert (reply.stop_reason, reply.stop_sequence) == ("stop_sequence", STOP)
    with embedded.client.messages.stream(
        model="qwen", max_tokens=40, messages=COUNT, stop_sequences=[STOP], extra_body=SAMPLING
    ) as stream:
        deltas = [e for e in stream if e.type == "message_delta"]
        final = stream.get_final_message()
    assert [(d.delta.stop_reason, d.delta.stop_sequence) for d in deltas] == [
        ("stop_sequence", STOP)
    ]
    assert final.content[0].type == "text" and final.content[0].text == block.text


def test_count_tokens_is_the_rendered_prompt_in_the_model_tokenizer(embedded: Embedded) -> None:
    messages: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
    counted = embedded.client.messages.count_tokens(
        model="qwen", system="Be brief.", messages=messages, tools=[WEATHER]
    ).input_tokens
    bare = embedded.client.messages.count_tokens(model="qwen", messages=messages).input_tokens

    provider = embedded.provider
    chat = [Message.system("Be brief."), Message.user("What is the weather in Paris?")]
    tool = ToolDefinition("get_weather", WEATHER["description"], WEATHER["input_schema"])
    prompt = provider.render(chat, [tool]).encode()
    assert counted == len(provider.llama.tokenize(prompt, add_bos=False, special=True))
    assert bare < counted  # the system prompt and the tool's schema cost tokens


@pytest.mark.anyio
async def test_the_prompt_based_wrapper_counts_its_own_prompt(embedded: Embedded) -> None:
    wrapper = PromptBasedProvider(embedded.provider)
    tool = ToolDefinition("get_weather", WEATHER["description"], WEATHER["input_schema"])
    chat = [Message.user("Weather in Oslo?")]
    with_tools = await wrapper.count_tokens(chat, [tool])
    without = await wrapper.count_tokens(chat, [])
    assert without == await embedded.provider.count_tokens(chat, [])
    assert with_tools > without  # the tools block in the system prompt
