"""The embedded provider with a chat template that renders no tools: the generic format.

The model is the scripted stand-in (tests/support/scripted_llama.py: its reply is fixed, a
character a token); the templates are llama.cpp's copies of real ones (Phi-3.5's renders no
tools, Qwen 2.5's writes Hermes `<tool_call>` blocks). What is checked is farmhand's side:
what the prompt says, which family reads the reply, what a required turn is held to.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from tests.support.corpus import template_text
from tests.support.scripted_llama import ScriptedLlama

from farmhand.messages import Finish, Message, StreamEvent, TextDelta, ToolCall, ToolCallEvent
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import EmbeddedProfile, LlamaCppProvider
from farmhand.providers.llamacpp.generic_tools import calls_schema, generic_family
from farmhand.providers.llamacpp.sampling import Sampling
from farmhand.tools.choice import REQUIRED
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

PHI = template_text("microsoft-Phi-3.5-mini-instruct.jinja")  # renders no tools
QWEN = template_text("Qwen-Qwen2.5-7B-Instruct.jinja")  # <tool_call> (Hermes)
GET_TIME = ToolDefinition(
    "get_time",
    "The time in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
GENERIC_CALL = '{"tool_call": {"name": "get_time", "arguments": {"city": "Paris"}}}'
HERMES_CALL = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture
def samplings(monkeypatch: pytest.MonkeyPatch) -> list[Sampling]:
    """The stand-in writes its reply; each turn's sampling (its grammar) is kept."""
    seen: list[Sampling] = []

    def sample_tokens(
        llama: ScriptedLlama, prompt: list[int], sampling: Sampling, *_: Any
    ) -> Iterator[int]:
        seen.append(sampling)
        return llama.generate(prompt)

    monkeypatch.setattr("farmhand.providers.llamacpp.provider.sample_tokens", sample_tokens)
    return seen


async def _turn(
    provider: LlamaCppProvider,
    messages: list[Message] | None = None,
    settings: GenerationSettings | None = None,
) -> list[StreamEvent]:
    stream = provider.stream(
        messages or [Message.user("What time is it in Paris?")],
        [GET_TIME],
        settings or GenerationSettings(),
    )
    return [event async for event in stream]


def _calls(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


async def test_tools_are_described_and_generic_calls_read_back(
    samplings: list[Sampling], caplog: pytest.LogCaptureFixture
) -> None:
    llama = ScriptedLlama(PHI, GENERIC_CALL)
    with caplog.at_level(logging.INFO, logger="farmhand"):
        provider = LlamaCppProvider(llama, model_name="phi-3.5")
    assert provider.tool_family == "generic"
    assert any("generic format is in use" in r.getMessage() for r in caplog.records)
    events = await _turn(provider)
    (call,) = _calls(events)
    assert (call.name, call.arguments) == ("get_time", {"city": "Paris"})
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool_calls"
    # Phi's template writes no tools itself: the system prompt it renders describes them.
    (prompt,) = [p for p in llama.prompts if "What time is it in Paris?" in p]
    system = prompt.split("<|end|>")[0]
    assert system.startswith("<|system|>\nThese tools are available.")
    assert '"name": "get_time"' in system and '{"tool_call": {"name":' in system


async def test_the_override_decides_the_family(samplings: list[Sampling]) -> None:
    """A model whose own template has no tools writes a Hermes call: as text it stays, until
    its template is overridden with one that has the format (Qwen 2.5's)."""
    own = LlamaCppProvider(ScriptedLlama(PHI, HERMES_CALL), model_name="qwen2.5-coder")
    assert own.tool_family == "generic"  # the template, not the model's name, decides
    events = await _turn(own)
    assert _calls(events) == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == HERMES_CALL

    llama = ScriptedLlama(PHI, HERMES_CALL)
    overridden = LlamaCppProvider(llama, model_name="qwen2.5-coder", chat_template=QWEN)
    assert overridden.tool_family == "hermes_2_pro"
    (call,) = _calls(await _turn(overridden))
    assert (call.name, call.arguments) == ("get_time", {"city": "Paris"})
    (prompt,) = [p for p in llama.prompts if "What time is it in Paris?" in p]
    assert prompt.startswith("<|im_start|>system") and "<tools>" in prompt


async def test_earlier_calls_and_results_reach_a_template_without_tool_roles(
    samplings: list[Sampling],
) -> None:
    """Phi's template drops tool messages and assistant calls: they are rewritten as JSON
    turns it renders (the result as a user turn)."""
    llama = ScriptedLlama(PHI, '{"response": "It is noon."}')
    provider = LlamaCppProvider(llama, EmbeddedProfile(answer_after_results=False))
    call = ToolCall("get_time", {"city": "Paris"}, "call_1")
    history = [
        Message.user("What time is it in Paris?"),
        Message.assistant("", (call,)),
        Message("tool", "12:00", tool_call_id="call_1", name="get_time"),
    ]
    events = await _turn(provider, history)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is noon."
    (prompt,) = [p for p in llama.prompts if "What time is it in Paris?" in p]
    written = {"tool_calls": [{"name": "get_time", "arguments": {"city": "Paris"}}]}
    assert f"<|assistant|>\n{json.dumps(written)}<|end|>" in prompt
    result = {"tool_response": {"tool": "get_time", "content": "12:00"}}
    assert f"<|user|>\n{json.dumps(result)}<|end|>" in prompt


@pytest.mark.parametrize("parallel", [True, False])
async def test_a_required_turn_is_held_to_the_generic_json(
    samplings: list[Sampling], parallel: bool
) -> None:
    provider = LlamaCppProvider(ScriptedLlama(PHI, GENERIC_CALL))
    settings = GenerationSettings(tool_choice=REQUIRED, parallel_tool_calls=parallel)
    await _turn(provider, settings=settings)
    grammar = samplings[-1].grammar
    assert grammar is not None and samplings[-1].lazy is None  # from the first token
    assert ("tool_calls" if parallel else "tool_call") in grammar
    assert "get_time" in grammar and "<tool_call>" not in grammar


def test_the_calls_schema_admits_calls_of_the_offered_tools_only() -> None:
    single = calls_schema([GET_TIME], parallel=False)
    jsonschema.validate(json.loads(GENERIC_CALL), single)
    for wrong in (
        {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"tool_call": {"name": "get_time", "arguments": {}}},
        {"response": "noon"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, single)
    several = calls_schema([GET_TIME], parallel=True)
    call = {"name": "get_time", "arguments": {"city": "Oslo"}}
    jsonschema.validate({"tool_calls": [call, call]}, several)


def test_when_the_generic_format_applies() -> None:
    assert generic_family(PHI, None) == "generic"
    assert generic_family(QWEN, None) is None  # renders its tools
    assert generic_family(PHI, "gemma") == "gemma"  # a family that reads the envelope
    assert generic_family(PHI, "hermes") is None  # the operator's choice stands
