"""Continuous batching with the real embedded model: chats answered together, stepped by one
llama_decode per token, make the same calls and start the same answers as the same chats
one after another (temperature 0; the test says why free text may part later), each under
its own sampler, grammar and call gate; and a follow-up chat that shares a head with a busy
one reuses its KV instead of computing it."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from farmhand.messages import Message, StreamEvent, TextDelta, ToolCallEvent
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import LlamaCppProvider
from farmhand.providers.llamacpp.batch import MIN_SHARED
from farmhand.providers.llamacpp.load import load_llama
from farmhand.providers.llamacpp.sampling import Sampling
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

WEATHER = ToolDefinition(
    "get_weather",
    "Get the current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}},
        "required": ["city"],
    },
)
CONVERT = ToolDefinition(
    "convert_currency",
    "Convert an amount of money from one currency to another.",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "source": {"type": "string", "description": "ISO code, e.g. USD"},
            "target": {"type": "string", "description": "ISO code, e.g. EUR"},
        },
        "required": ["amount", "source", "target"],
    },
)
SYSTEM = Message.system("You are a helpful assistant. Use the tools when a question needs them.")
CHATS: list[tuple[list[Message], GenerationSettings]] = [
    # an auto turn with a call (lazy grammar off, call gate on)
    ([SYSTEM, Message.user("What is the weather in Lisbon?")], GenerationSettings(temperature=0)),
    # a forced call under the tool grammar
    (
        [SYSTEM, Message.user("Convert 250 US dollars to euros.")],
        GenerationSettings(temperature=0, tool_choice=ToolChoice("required")),
    ),
    # a text answer (the topic gate answers in text)
    (
        [SYSTEM, Message.user("Write one short sentence about tea.")],
        GenerationSettings(temperature=0, max_tokens=40),
    ),
    # two calls in a turn (the call gate pushes on)
    (
        [SYSTEM, Message.user("What is the weather in Oslo and in Rome?")],
        GenerationSettings(temperature=0),
    ),
]


@pytest.fixture(scope="module")
def provider() -> Iterator[LlamaCppProvider]:
    batched = LlamaCppProvider(load_llama(ensure_model(DEFAULT_MODEL)), n_parallel=4)
    yield batched
    batched.engine.close()
    assert batched.engine.join(60)


def _outcome(events: list[StreamEvent]) -> tuple[str, list[tuple[str, dict[str, object]]]]:
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEvent)]
    return text, calls


async def _chat(provider: LlamaCppProvider, index: int) -> tuple[str, list]:  # type: ignore[type-arg]
    messages, settings = CHATS[index]
    events = [e async for e in provider.stream(messages, [WEATHER, CONVERT], settings)]
    return _outcome(events)


async def test_concurrent_chats_answer_as_they_do_one_after_another(
    provider: LlamaCppProvider,
) -> None:
    alone = [await _chat(provider, i) for i in range(len(CHATS))]
    together: dict[int, tuple[str, list]] = {}  # type: ignore[type-arg]

    async def run(index: int) -> None:
        together[index] = await _chat(provider, index)

    async with anyio.create_task_group() as group:
        for index in range(len(CHATS)):
            group.start_soon(run, index)
    # The calls are the same, name and arguments. Free text is compared as far as llama.cpp
    # allows: its CPU kernels are not batch-invariant (a token decoded beside others goes
    # through the batched matmul and attends over a shared KV range, whose rounding differs
    # from a lone token's), so greedy text can part at a near tie, as llama-server's does;
    # seen once: "Tea is a popular beverage enjoyed worldwide." against "... beverage that
    # originated in China and is enjoyed worldwide.".
    assert [together[i][1] for i in range(len(CHATS))] == [calls for _, calls in alone]
    for index, (text, _) in enumerate(alone):
        assert bool(together[index][0]) == bool(text)
        assert together[index][0].split()[:3] == text.split()[:3]
    assert alone[0][1] and alone[0][1][0][0] == "get_weather"  # the chats did call
    assert alone[1][1] and alone[1][1][0][0] == "convert_currency"
    assert alone[2][0] and not alone[2][1]
    # The model fences both Oslo and Rome calls in one ```json block: no stray fence as text.
    assert alone[3][0].strip() == ""


async def test_a_shared_head_is_computed_once(provider: LlamaCppProvider) -> None:
    """Eight chats with the same system prompt and tools: the head's tokens are evaluated
    by the first, and every other takes them from a slot that holds them."""
    questions = [f"What is the weather in city number {i}?" for i in range(8)]
    head = len(provider.tokenize(provider.render([SYSTEM], [WEATHER, CONVERT])))
    before = provider.processed_prompt_tokens

    async def ask(question: str) -> None:
        settings = GenerationSettings(temperature=0, max_tokens=16)
        messages = [SYSTEM, Message.user(question)]
        async for _ in provider.stream(messages, [WEATHER, CONVERT], settings):
            pass

    async with anyio.create_task_group() as group:
        for question in questions:
            group.start_soon(ask, question)
    processed = provider.processed_prompt_tokens - before
    # Each chat's own question is evaluated, the head at most once more (it may already
    # be held from the test before).
    assert processed < head + 8 * 40, (processed, head)


def _first_token(provider: LlamaCppProvider, prompt: list[int]) -> tuple[int, int]:
    """Read `prompt` in a fresh slot to its first greedy token: (token, steps abandoned)."""
    batch = provider.batch
    assert batch is not None
    batch.forget()
    generation = batch.open(prompt, Sampling(temperature=0))
    abandoned = batch.abandoned_steps
    try:
        while not (produced := batch.step([generation])):
            pass
        return produced[0][1], batch.abandoned_steps - abandoned
    finally:
        batch.close(generation)


def test_a_step_reading_a_long_prompt_gives_way_and_is_read_again(
    provider: LlamaCppProvider,
) -> None:
    """A step that only reads a long prompt stops inside llama_decode when a request waits
    for a slot; the chunk goes back to the prompt, and the prompt read again gives the
    same first token as a prompt never stopped. (The engine is idle: this thread steps.)"""
    batch = provider.batch
    assert batch is not None
    text = " ".join(f"Line {i}: the tea harvest in region {i % 7} was good." for i in range(60))
    prompt = provider.tokenize(provider.render([SYSTEM, Message.user(text)], []))
    assert len(prompt) > 3 * batch.prompt_chunk
    engine_check = batch.yield_to
    try:
        batch.yield_to = lambda: False
        steady, none = _first_token(provider, prompt)
        asked = iter([True, True])  # two steps give way, then a newcomer has its slot
        batch.yield_to = lambda: next(asked, False)
        batch.forget()
        generation = batch.open(prompt, Sampling(temperature=0))
        try:
            pending, held = list(generation.pending), list(generation.slot.held)
            assert batch.step([generation]) == []  # abandoned at its first node
            assert (generation.pending, generation.slot.held) == (pending, held)
        finally:
            batch.close(generation)
        batch.yield_to = lambda: next(asked, False)
        again, abandoned = _first_token(provider, prompt)
    finally:
        batch.yield_to = engine_check
    assert none == 0 and abandoned == 1
    assert again == steady


def test_a_new_sequence_keeps_a_slot_whose_head_it_shares_else_takes_the_oldest(
    provider: LlamaCppProvider,
) -> None:
    """Slot choice (no decoding: `open` only picks the slot and trims its cells): a prompt
    takes the free slot holding the longest head it shares; a head shorter than MIN_SHARED
    tokens (a chat template's first line) decides nothing, and the least recently used slot
    is taken, so the heads other chats will come back for stay."""
    batch = provider.batch
    assert batch is not None
    prompt = provider.tokenize(provider.render([SYSTEM, Message.user("Hello there.")], []))
    other = [t + 1 for t in prompt]  # shares nothing with `prompt`
    batch.forget()
    slots = batch.slots
    try:
        for last_used, slot in zip([50, 10, 30, 40], slots, strict=True):
            slot.held, slot.last_used = list(other), last_used
        slots[0].held = list(prompt[: MIN_SHARED - 1]) + other[: MIN_SHARED - 1]
        generation = batch.open(prompt, Sampling(temperature=0))
        assert generation.slot is slots[1]  # the oldest: a short shared head decides nothing
        assert len(generation.pending) == len(prompt)
        batch.close(generation)
        slots[2].held = list(prompt[: MIN_SHARED + 4])
        generation = batch.open(prompt, Sampling(temperature=0))
        assert generation.slot is slots[2]  # it keeps the head it shares
        assert len(generation.pending) == len(prompt) - (MIN_SHARED + 4)
        batch.close(generation)
    finally:
        batch.forget()  # the held lists above were never computed: drop them
