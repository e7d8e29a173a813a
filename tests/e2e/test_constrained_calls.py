"""Constrained decoding with the real embedded model (Qwen2.5-Coder-1.5B, greedy).

With tool_choice required, every turn must produce at least one call, and every call must
name an offered tool with arguments valid for that tool's schema: in the native strategy
(tools rendered by the chat template) and in the prompt-based one (tools described in the
system prompt, the grammar handed over as `grammar_tools`). The grammars themselves are
checked against llama.cpp's grammar engine first: what they accept and what they reject.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema
import pytest

from farmhand.messages import Message, StreamEvent, TextDelta, ToolCall, ToolCallEvent
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.providers.llamacpp import EmbeddedProfile, LlamaCppProvider
from farmhand.providers.llamacpp.grammar import build_tool_grammar, grammar_spec
from farmhand.providers.llamacpp.load import load_llama
from farmhand.providers.llamacpp.sampling import Sampling, sample_tokens
from farmhand.providers.prompt_based import PromptBasedProvider
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import OpenAIToolChoice, tool_choice_from_openai

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

WEATHER = ToolDefinition(
    "get_weather",
    "Get the current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
        "required": ["city"],
    },
)
ADD = ToolDefinition(
    "add_numbers",
    "Add two integers and return the sum.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
SEARCH = ToolDefinition(
    "search_files",
    "Find files whose path matches a glob pattern.",
    {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. *.py"},
            "max_results": {"type": "integer", "description": "How many paths at most"},
        },
        "required": ["pattern", "max_results"],
    },
)
TOOLS = [WEATHER, ADD, SEARCH]
BY_NAME = {t.name: t for t in TOOLS}
PROMPTS = [
    "What's the weather like in Tokyo right now?",
    "Add 17 and 25.",
    "Find all Python files in the project, at most 5 results.",
    "Is it raining in London?",
    "What is 1234 plus 4321?",
    "Search for markdown files and show me 20 of them.",
    "Tell me a joke.",  # no tool fits: required still gets a valid call
    "Weather in São Paulo, please.",
    "Hello! How are you today?",
    "List up to 3 files matching *.yaml",
]
MAX_TOKENS = 128


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    """The default model, loaded once for this module."""
    model = load_llama(ensure_model(DEFAULT_MODEL))
    yield model
    model.close()


@pytest.fixture(scope="module")
def native(llama: Any) -> LlamaCppProvider:
    return LlamaCppProvider(llama, model_name="qwen2.5-coder-1.5b-instruct")


@pytest.fixture(scope="module", params=["native", "prompt_based"])
def provider(request: pytest.FixtureRequest, native: LlamaCppProvider) -> Provider:
    return native if request.param == "native" else PromptBasedProvider(native)


def settings(choice: OpenAIToolChoice, **kw: Any) -> GenerationSettings:
    kw.setdefault("max_tokens", MAX_TOKENS)
    return GenerationSettings(
        temperature=0, seed=0, tool_choice=tool_choice_from_openai(choice), **kw
    )


async def turn(provider: Provider, prompt: str, wanted: GenerationSettings) -> list[StreamEvent]:
    messages = [Message.user(prompt)]
    return [event async for event in provider.stream(messages, TOOLS, wanted)]


def calls_of(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


def problems(calls: list[ToolCall], allowed: set[str]) -> list[str]:
    """What is wrong with a turn's calls: none at all, an unknown name, invalid arguments."""
    if not calls:
        return ["no call"]
    found: list[str] = []
    for call in calls:
        if call.parse_error or call.name not in allowed:
            found.append(f"{call.name}: {call.parse_error or 'not an offered tool'}")
            continue
        try:
            jsonschema.validate(call.arguments, BY_NAME[call.name].parameters)
        except jsonschema.ValidationError as exc:
            found.append(f"{call.name}{call.arguments}: {exc.message}")
    return found


# --- the grammars, in llama.cpp's own grammar engine --------------------------------------


def accepts(llama: Any, grammar: str, text: str) -> bool:
    """True if llama.cpp's grammar sampler lets the model write exactly `text`, then stop."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    assert sampler, f"llama.cpp cannot parse the grammar:\n{grammar}"
    try:
        tokens = llama.tokenize(text.encode(), add_bos=False, special=True)
        for token in [*tokens, llama.token_eos()]:
            data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
            candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            if math.isinf(data[0].logit):
                return False
            if token != llama.token_eos():
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


def gbnf(choice: OpenAIToolChoice, *, parallel: bool = True, constrain_auto: bool = False) -> str:
    wanted = grammar_spec(
        TOOLS, settings(choice, parallel_tool_calls=parallel), constrain_auto=constrain_auto
    )
    assert wanted is not None
    built = build_tool_grammar(wanted)
    assert built.fallbacks == ()
    return built.text


def call_text(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


PARIS = call_text("get_weather", '{"city": "Paris"}')
SUM = call_text("add_numbers", '{"a": 2, "b": 3}')


def test_required_grammar_admits_valid_calls_only(llama: Any) -> None:
    grammar = gbnf("required")
    assert accepts(llama, grammar, PARIS)
    assert accepts(llama, grammar, PARIS + "\n" + SUM)  # parallel
    assert not accepts(llama, grammar, "Sure, let me check.")
    assert not accepts(llama, grammar, call_text("get_wether", '{"city": "Paris"}'))
    assert not accepts(llama, grammar, call_text("add_numbers", '{"a": "2", "b": 3}'))
    assert not accepts(llama, grammar, call_text("add_numbers", '{"a": 2}'))
    assert not accepts(llama, grammar, call_text("get_weather", '{"a": 2, "b": 3}'))
    assert not accepts(llama, gbnf("required", parallel=False), PARIS + "\n" + SUM)
    named = gbnf({"type": "function", "function": {"name": "add_numbers"}})
    assert accepts(llama, named, SUM)
    assert not accepts(llama, named, PARIS)


def test_auto_grammar_leaves_text_free_but_checks_every_call(llama: Any) -> None:
    grammar = gbnf("auto", constrain_auto=True)
    for text in [
        "",
        "Paris is sunny today.",
        "Use `a < b` and {braces} freely; <b>tags</b> and <tool too.\n\nBye.",
        "Let me check.\n" + PARIS,
        PARIS,
    ]:
        assert accepts(llama, grammar, text), text
    assert not accepts(llama, grammar, "Let me check.\n" + call_text("nope", "{}"))
    assert not accepts(llama, grammar, PARIS + "\nDone.")  # nothing after the calls
    assert not accepts(llama, grammar, '{"name": "get_weather", "arguments": {}}')  # bare call


# --- the real model under the grammar ---------------------------------------------------


async def test_required_every_prompt_gets_valid_calls(provider: Provider) -> None:
    failures: dict[str, list[str]] = {}
    for prompt in PROMPTS:
        found = problems(calls_of(await turn(provider, prompt, settings("required"))), set(BY_NAME))
        if found:
            failures[prompt] = found
    assert not failures, f"{len(failures)} of {len(PROMPTS)} prompts failed: {failures}"


async def test_named_choice_calls_that_tool(native: LlamaCppProvider) -> None:
    named = settings({"type": "function", "function": {"name": "add_numbers"}})
    calls = calls_of(await turn(native, "What's the weather in Rome?", named))
    assert problems(calls, {"add_numbers"}) == []


async def test_constrained_auto_leaves_a_prose_answer_unchanged(llama: Any) -> None:
    prompt = "Explain what a Python list is in one sentence, with a one-line example."
    answers: list[str] = []
    for constrained in (False, True):
        llama.reset()  # a reused KV cache shifts greedy picks; start both sides the same
        provider = LlamaCppProvider(llama, EmbeddedProfile(constrained=constrained))
        events = await turn(provider, prompt, settings("auto", max_tokens=64))
        assert calls_of(events) == []
        answers.append("".join(e.text for e in events if isinstance(e, TextDelta)))
    assert answers[0].strip()
    assert answers[1] == answers[0]


def test_a_steer_never_leaves_the_grammar_nothing_to_sample(llama: Any) -> None:
    """llama.cpp aborts the whole process on a token its grammar cannot accept, which is
    what sampling picks when every logit is -inf. A steer that bans what the grammar
    admits is undone for that token (`llamacpp.sampling._steering`)."""

    def ban_everything(sampled: Sequence[int], logits: Any) -> None:
        logits[:] = -math.inf

    prompt = llama.tokenize(b"Answer yes or no: is water wet?", add_bos=False, special=True)
    sampling = Sampling(0.0, grammar='root ::= "yes"', steer=ban_everything)
    tokens = sample_tokens(llama, prompt, sampling)
    try:
        written = [next(tokens) for _ in range(3)]
    finally:
        tokens.close()
    assert llama.detokenize(written).startswith(b"yes")


async def test_constrained_auto_pushes_into_a_second_tagged_call(llama: Any) -> None:
    """Under the lazy grammar the parser reads a call before the grammar has closed it;
    the push for another call (the question lists two artists) waits for the close tag,
    and the grammar then writes the second call. Before, the push banned what the grammar
    needed and llama.cpp aborted the process."""
    play = ToolDefinition(
        "play_artist",
        "Play songs of an artist for some minutes.",
        {
            "type": "object",
            "properties": {"artist": {"type": "string"}, "minutes": {"type": "integer"}},
            "required": ["artist", "minutes"],
        },
    )
    llama.reset()
    provider = LlamaCppProvider(llama, EmbeddedProfile(constrained=True, retag_calls=True))
    question = [
        Message.user(
            "Play songs from the artists Taylor Swift and Maroon 5, for 20 and 15 minutes"
            " respectively."
        )
    ]
    events = [e async for e in provider.stream(question, [play], settings("auto"))]
    calls = calls_of(events)
    assert sorted(c.arguments["artist"] for c in calls) == ["Maroon 5", "Taylor Swift"]
    for call in calls:
        jsonschema.validate(call.arguments, play.parameters)
