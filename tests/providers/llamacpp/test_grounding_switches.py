"""The embedded provider's grounding switches on a scripted model (test_unknown_call_format's
stand-in, a character a token): an ungrounded further call is dropped whole and ends the
turn; an ungrounded first call is answered again in text, with calls banned."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.gguf_files import TEMPLATE
from tests.support.scripted_llama import EOS, ScriptedLlama

from farmhand.messages import (
    Finish,
    Message,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEvent,
)
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import EmbeddedProfile, LlamaCppProvider
from farmhand.providers.llamacpp.call_gate import TurnGate
from farmhand.providers.llamacpp.sampling import Sampling
from farmhand.providers.llamacpp.turn_calls import ANY_GROUNDED
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

# A chat template that offers tools in the Hermes way, so calls are read as <tool_call> JSON.
HERMES = TEMPLATE.replace(
    "{% for message",
    "{% if tools %}<|im_start|>system\n<tools>{{ tools | tojson }}</tools> Call as"
    ' <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n{% endif %}'
    "{% for message",
)
FACTORIAL = ToolDefinition(
    "factorial",
    parameters={
        "type": "object",
        "properties": {"number": {"type": "integer"}},
        "required": ["number"],
    },
)


MOVIES = ToolDefinition(
    "movies_by_actor",
    parameters={
        "type": "object",
        "properties": {
            "actor": {"type": "string"},
            "year": {"type": "integer"},
            "category": {"type": "string", "default": "all"},
        },
        "required": ["actor"],
    },
)


def call(number: int) -> str:
    return f'<tool_call>{{"name": "factorial", "arguments": {{"number": {number}}}}}</tool_call>'


class Replies(ScriptedLlama):
    """Writes the next reply at each generation, and keeps what each was sampled with."""

    def __init__(self, *replies: str) -> None:
        super().__init__(HERMES, "")
        self.replies = list(replies)
        self.samplings: list[Sampling] = []
        self.written: list[int] = []  # tokens handed out, per generation

    def sample(self, sampling: Sampling) -> Iterator[int]:
        self.samplings.append(sampling)
        self.written.append(0)
        for character in self.replies.pop(0):
            self.written[-1] += 1
            yield ord(character)
        yield EOS


@pytest.fixture(autouse=True)
def scripted_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    def sample_tokens(llama: Replies, prompt: list[int], sampling: Sampling, *_: Any) -> Any:
        return llama.sample(sampling)

    monkeypatch.setattr("farmhand.providers.llamacpp.provider.sample_tokens", sample_tokens)


async def turn(provider: LlamaCppProvider, question: str) -> list[StreamEvent]:
    messages = [Message.user(question)]
    return [e async for e in provider.stream(messages, [FACTORIAL], GenerationSettings())]


def calls_of(events: list[StreamEvent]) -> list[int]:
    return [e.call.arguments["number"] for e in events if isinstance(e, ToolCallEvent)]


async def test_a_further_call_nobody_asked_for_is_dropped_and_ends_the_turn() -> None:
    sweep = call(5) + call(10) + call(20) + call(15)
    llama = Replies(sweep)
    events = await turn(
        LlamaCppProvider(llama, EmbeddedProfile(ground_extra=True)), "Factorials of 5 and 15."
    )
    assert calls_of(events) == [5]  # 10 and 20 were never asked for: the turn ended at 10
    # The dropped call left nothing in the stream, not even its deltas.
    assert [e.index for e in events if isinstance(e, ToolCallDelta) and e.name] == [0]
    assert llama.written[0] < len(sweep)  # generation stopped there
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"


async def test_with_the_switch_off_every_distinct_call_is_kept() -> None:
    llama = Replies(call(5) + call(10) + call(15))
    provider = LlamaCppProvider(llama, EmbeddedProfile(ground_extra=False))
    events = await turn(provider, "Factorials of 5 and 15.")
    assert calls_of(events) == [5, 10, 15]


async def test_grounded_further_calls_are_all_kept() -> None:
    llama = Replies(call(5) + call(10) + call(15))
    provider = LlamaCppProvider(llama, EmbeddedProfile(ground_extra=True))
    events = await turn(provider, "Find the factorial of 5,10 and 15.")
    assert calls_of(events) == [5, 10, 15]


async def test_an_ungrounded_first_call_is_answered_in_text_instead() -> None:
    answer = "No tool here computes an integral."
    llama = Replies(call(7), answer)
    provider = LlamaCppProvider(llama, EmbeddedProfile(ground_first=ANY_GROUNDED))
    events = await turn(provider, "Integrate x^2 from a to b.")
    assert not [e for e in events if isinstance(e, ToolCallEvent | ToolCallDelta)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == answer
    # The second generation had the gate answer: the tokens that start a call banned.
    steer = llama.samplings[1].steer
    assert isinstance(steer, TurnGate) and steer.limit == math.inf and not steer.answer_fence
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert finish.usage.completion_tokens == sum(llama.written)  # both generations count


async def test_a_grounded_first_call_and_a_later_question_are_left_alone() -> None:
    provider = LlamaCppProvider(Replies(call(5)), EmbeddedProfile(ground_first=1.0))
    assert calls_of(await turn(provider, "The factorial of 5?")) == [5]
    later = [
        Message.user("Integrate x^2."),
        Message.assistant("I cannot."),
        Message.user("Then any factorial."),
    ]
    provider = LlamaCppProvider(Replies(call(7)), EmbeddedProfile(ground_first=1.0))
    events = [e async for e in provider.stream(later, [FACTORIAL], GenerationSettings())]
    assert calls_of(events) == [7]  # only a conversation's first question is judged


async def test_an_optional_argument_nobody_wrote_is_left_out_of_the_call_and_its_deltas() -> None:
    written = (
        '<tool_call>{"name": "movies_by_actor", "arguments":'
        ' {"actor": "Leonardo DiCaprio", "year": 2010, "category": "Drama"}}</tool_call>'
    )
    question = [Message.user("Films Leonardo DiCaprio made in 2010?")]
    settings = GenerationSettings()
    provider = LlamaCppProvider(Replies(written))
    events = [e async for e in provider.stream(question, [MOVIES], settings)]
    (event,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert event.call.arguments == {"actor": "Leonardo DiCaprio", "year": 2010}
    # A client assembling the streamed deltas gets the call that is run, id and all.
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.name for d in deltas if d.name] == ["movies_by_actor"]
    assert {d.id for d in deltas if d.name} == {event.call.id}
    assert json.loads("".join(d.arguments for d in deltas)) == event.call.arguments

    untouched = LlamaCppProvider(Replies(written), EmbeddedProfile(ground_optional=False))
    events = [e async for e in untouched.stream(question, [MOVIES], settings)]
    (event,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert event.call.arguments["category"] == "Drama"


async def test_a_first_call_off_the_questions_topic_needs_every_value_grounded() -> None:
    answer = "A hexagon has six sides."
    question = "How many sides does a hexagon have?"
    # factorial shares no word with the question, and its 6 is not in it: answered in text.
    llama = Replies(call(6), answer)
    events = await turn(LlamaCppProvider(llama, EmbeddedProfile(ground_first=None)), question)
    assert not [e for e in events if isinstance(e, ToolCallEvent | ToolCallDelta)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == answer

    # Off-topic but holding only what the user wrote, the call stands ("warm" for weather).
    grounded = LlamaCppProvider(Replies(call(6)), EmbeddedProfile(ground_first=None))
    assert calls_of(await turn(grounded, "Does a hexagon with 6 corners have 6 sides?")) == [6]
    # The switch off, or a question about factorials, the call stands too.
    off = LlamaCppProvider(Replies(call(6)), EmbeddedProfile(ground_first=None, ground_topic=False))
    assert calls_of(await turn(off, question)) == [6]
    on_topic = LlamaCppProvider(Replies(call(7)), EmbeddedProfile(ground_first=None))
    assert calls_of(await turn(on_topic, "Any factorial, please.")) == [7]


WEATHER = ToolDefinition(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


@pytest.mark.parametrize(("switch", "pushed"), [(True, True), (False, False)])
async def test_a_city_the_question_lists_but_no_call_used_pushes_for_another_call(
    switch: bool, pushed: bool
) -> None:
    written = '<tool_call>{"name": "get_weather", "arguments": {"city": "Berlin"}}</tool_call>'
    llama = Replies(written)
    provider = LlamaCppProvider(llama, EmbeddedProfile(ground_siblings=switch))
    question = [Message.user("Is it warmer in Berlin and Madrid?")]
    events = [e async for e in provider.stream(question, [WEATHER], GenerationSettings())]
    assert [e.call.arguments for e in events if isinstance(e, ToolCallEvent)] == [
        {"city": "Berlin"}
    ]
    # The scripted model ignores the gate; what is checked is that the gate was told.
    gate = llama.samplings[0].steer
    assert isinstance(gate, TurnGate) and gate.pushing is pushed


PRESENT_VALUE = ToolDefinition(
    "present_value",
    parameters={
        "type": "object",
        "properties": {"payment": {"type": "integer"}, "years": {"type": "integer"}},
        "required": ["payment", "years"],
    },
)


def delta_calls(events: list[StreamEvent]) -> dict[int, tuple[str, str, str]]:
    """The calls a client assembles from the deltas: index -> (id, name, arguments)."""
    assembled: dict[int, tuple[str, str, str]] = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            call_id, name, arguments = assembled.get(e.index, ("", "", ""))
            assembled[e.index] = (e.id or call_id, e.name or name, arguments + e.arguments)
    return assembled


async def test_values_packed_into_one_call_are_run_as_one_call_each() -> None:
    packed = (
        '<tool_call>{"name": "present_value", "arguments": {"payment": 1000, "years": [10, 20]}}'
        "</tool_call>"
    )
    later = '<tool_call>{"name": "factorial", "arguments": {"number": 5}}</tool_call>'
    question = [Message.user("Present value of 1000 a year over 10 and 20 years, and 5!")]
    settings = GenerationSettings()
    provider = LlamaCppProvider(Replies(packed + later))
    events = [e async for e in provider.stream(question, [PRESENT_VALUE, FACTORIAL], settings)]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [c.arguments for c in calls] == [
        {"payment": 1000, "years": 10},
        {"payment": 1000, "years": 20},
        {"number": 5},
    ]
    # Streamed, each call has its own index, and the call after the repair moved up one.
    assembled = delta_calls(events)
    assert sorted(assembled) == [0, 1, 2]
    for index, call in enumerate(calls):
        call_id, name, arguments = assembled[index]
        assert (call_id, name, json.loads(arguments)) == (call.id, call.name, call.arguments)

    as_written = LlamaCppProvider(Replies(packed), EmbeddedProfile(repair_calls=False))
    events = [e async for e in as_written.stream(question, [PRESENT_VALUE], settings)]
    assert [e.call.arguments["years"] for e in events if isinstance(e, ToolCallEvent)] == [[10, 20]]


async def test_a_run_of_calls_cut_off_by_the_token_limit_loses_only_its_unfinished_last_call() -> (
    None
):
    written = call(5) + call(10) + call(15)
    llama = Replies(written)
    settings = GenerationSettings(max_tokens=len(call(5) + call(10)) + 20)
    messages = [Message.user("Find the factorial of 5, 10 and 15.")]
    events = [e async for e in LlamaCppProvider(llama).stream(messages, [FACTORIAL], settings)]
    assert calls_of(events) == [5, 10]
    # Nothing of the third call reached the stream, not even its opening delta.
    assert [e.index for e in events if isinstance(e, ToolCallDelta) and e.name] == [0, 1]
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"


async def test_a_lone_call_cut_off_by_the_token_limit_is_a_broken_call_the_model_is_told_of() -> (
    None
):
    llama = Replies(call(5))
    settings = GenerationSettings(max_tokens=len(call(5)) - 16)
    messages = [Message.user("Find the factorial of 5.")]
    events = [e async for e in LlamaCppProvider(llama).stream(messages, [FACTORIAL], settings)]
    [cut] = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert cut.name == "factorial"
    assert cut.parse_error is not None and "cut off" in cut.parse_error


async def test_a_fenced_call_with_an_expression_for_a_value_is_a_broken_call_not_lost_text() -> (
    None
):
    # BFCL simple_python_99: the default model wrote `2 * Math.PI` for a value. Its deltas
    # were held for the call's event, the parser gave the call back as text, and the
    # turn answered nothing at all.
    written = '```json\n{"name": "factorial", "arguments": {"number": 2 * Math.PI}}\n```'
    events = await turn(LlamaCppProvider(Replies(written)), "The factorial of two pi.")
    [broken] = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert broken.parse_error is not None and "2 * Math.PI" in broken.parse_error
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ""
