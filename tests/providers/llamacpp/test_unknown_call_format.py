"""The embedded provider with a chat template no family module knows: `auto` reads its calls.

The model is a stand-in for llama-cpp-python's Llama (one token per character of a scripted
reply); the template is an invented format (tests/parsing/derived_templates), so the parser
is the one derived from it, picked by detection or forced with `tool_parser: auto`.
"""

from __future__ import annotations

import pytest
from tests.support import derived_templates
from tests.support.scripted_llama import ScriptedLlama, scripted_sampling  # noqa: F401

from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEvent,
)
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import EmbeddedProfile, LlamaCppProvider
from farmhand.tools.definition import ToolDefinition

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("scripted_sampling")]


async def _turn(provider: LlamaCppProvider) -> list[StreamEvent]:
    tool = ToolDefinition(
        "get_time",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    stream = provider.stream([Message.user("time in Paris?")], [tool], GenerationSettings())
    return [event async for event in stream]


REPLY = (
    "<|thought|>they want Paris<|/thought|>Checking."
    '<calls><invoke tool="get_time"><arg key="city">Paris</arg></invoke></calls>'
)


@pytest.mark.parametrize("tool_parser", [None, "auto"])
async def test_calls_in_a_format_no_family_knows_are_read(tool_parser: str | None) -> None:
    llama = ScriptedLlama(derived_templates.PER_ARG, REPLY)
    provider = LlamaCppProvider(llama, EmbeddedProfile(tool_parser=tool_parser))
    assert provider.tool_family == "auto"
    events = await _turn(provider)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "they want Paris"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking."
    (call,) = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert (call.name, call.arguments) == ("get_time", {"city": "Paris"})
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas and deltas[0].name == "get_time"
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool_calls"
    # The tools went through the template: the prompt is the template's own.
    prompts = [p for p in llama.prompts if "time in Paris?" in p]
    assert prompts and prompts[0].startswith("<|user|>time in Paris?<|end|><|assistant|>")
