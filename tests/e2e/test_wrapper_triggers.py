"""The lazy grammar's triggers for calls in the wrong wrapper (issue 28), against llama.cpp's
own grammar engine (the default model's vocabulary only, loaded in a moment).

A trigger wakes the grammar when the text written so far means a call (`<tools>` or a fence
and the start of `{"name": "`, a bare `{"name": "<offered tool>"`), and llama.cpp feeds the
grammar the text from the trigger's group on: that text, continued as the call, must be
what the grammar admits (a grammar that rejects it would end the process). Text that means
no call must wake nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from tests.e2e.test_constrained_calls import TOOLS, accepts

from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp.grammar import build_tool_grammar, call_triggers, grammar_spec
from farmhand.tools.formats import tool_choice_from_openai

pytestmark = [pytest.mark.e2e]

CALL = '{"name": "get_weather", "arguments": {"city": "Riga"}}'


@pytest.fixture(scope="module")
def vocab() -> Iterator[Any]:
    from llama_cpp import Llama

    model = Llama(str(ensure_model(DEFAULT_MODEL)), vocab_only=True, verbose=False)
    yield model
    model.close()


def lazy_spec() -> Any:
    """An auto turn's spec as the embedded provider samples it: calls only, lazily."""
    settings = GenerationSettings(tool_choice=tool_choice_from_openai("auto"))
    spec = grammar_spec(TOOLS, settings, constrain_auto=True)
    assert spec is not None and spec.wrappers
    return replace(spec, calls_only=True)


def first_trigger(text: str) -> tuple[int, str] | None:
    """Where, written a character at a time, `text` first wakes the grammar: the length
    written then, and the part fed to the grammar (from the group's start)."""
    patterns = [re.compile(p) for p in call_triggers(lazy_spec())]
    for end in range(1, len(text) + 1):
        for pattern in patterns:
            match = pattern.fullmatch(text[:end])
            if match:
                group = next(i for i in range(1, len(match.groups()) + 1) if match.group(i))
                return end, text[match.start(group) : end]
    return None


@pytest.mark.parametrize(
    ("written", "whole"),
    [
        (f"<tools>\n{CALL}\n</tools>", f"<tools>\n{CALL}\n</tools>"),
        (f"You can use this call:\n\n```json\n{CALL}\n```", f"```json\n{CALL}\n```"),
        (f"```\n{CALL}\n```", f"```\n{CALL}\n```"),
        (f"Sure. {CALL}", CALL),
        (f"<tool_call>\n{CALL}\n</tool_call>", f"<tool_call>\n{CALL}\n</tool_call>"),
    ],
)
def test_a_call_in_any_wrapper_wakes_the_grammar_on_text_it_admits(
    vocab: Any, written: str, whole: str
) -> None:
    found = first_trigger(written)
    assert found is not None
    _, fed = found
    assert whole.startswith(fed)
    grammar = build_tool_grammar(lazy_spec()).text
    # What the grammar was fed, continued as the model wrote the call, is one it admits.
    assert accepts(vocab, grammar, fed + whole[len(fed) :])


def test_an_echoed_definition_wakes_the_grammar_at_its_brace_and_becomes_a_call(
    vocab: Any,
) -> None:
    found = first_trigger('<tools>\n{"type": "function", "function": {"name": "get_weather"')
    assert found is not None
    _, fed = found
    assert fed == "<tools>\n{"
    grammar = build_tool_grammar(lazy_spec()).text
    assert accepts(vocab, grammar, f"<tools>\n{CALL}\n</tools>")
    assert not accepts(vocab, grammar, '<tools>\n{"type": "function"}\n</tools>')


@pytest.mark.parametrize(
    "text",
    [
        "```python\nprint('hello')\n```",
        "```\nls -la\n```",
        "```json\n[1, 2, 3]\n```",
        'The record is {"name": "Alice", "age": 30}.',
        '{"name": "book_flight", "arguments": {}}',
        "<tools> is the tag Qwen lists its tools in.",
        "It is sunny in Riga.",
    ],
)
def test_text_that_means_no_call_wakes_nothing(text: str) -> None:
    assert first_trigger(text) is None


def test_required_turns_keep_the_call_tag_only() -> None:
    settings = GenerationSettings(tool_choice=tool_choice_from_openai("required"))
    spec = grammar_spec(TOOLS, settings, constrain_auto=False)
    assert spec is not None and not spec.wrappers
    assert "<tools>" not in build_tool_grammar(spec).text
    assert len(call_triggers(spec)) == 1
