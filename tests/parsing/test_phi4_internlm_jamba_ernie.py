"""The Phi-4-mini, InternLM, Jamba and ERNIE 4.5 parsers (families not in llama.cpp's corpus
whose calls are JSON after their own markers) and their detection, on cases written from
their published formats: calls in order with markers inside strings, output cut mid-call
never a call that runs, plain text kept as text, and each family's own tokens and tags.

- Phi-4-mini: `functools[{"name", "arguments"}, ...]` (the tool prompt of vLLM's
  examples/tool_chat_template_phi4_mini.jinja; vLLM's phi4_mini_json parser), and
  `<|tool_call|>...<|/tool_call|>` (Phi-4's tool-call tokens, as llama.cpp's Phi-4 support
  reads them).
- InternLM 2.5 / 3: `<|action_start|><|plugin|>\\n{"name", "parameters"}<|action_end|>`
  (internlm/internlm2_5-7b-chat chat format; lmdeploy's InternLM2 tool tests).
- Jamba 1.5+: `<tool_calls>[...]</tool_calls>` in `<|bom|><|assistant|> ...<|eom|>` turns
  (ai21labs Jamba model cards; vLLM's jamba tool parser).
- ERNIE 4.5: `</think>` then `<tool_call>\\n{...}\\n</tool_call>`, replies in `<response>`
  (vLLM's ernie45 tool parser, from baidu/ERNIE-4.5-21B-A3B-Thinking's format).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.base import FamilyParser
from farmhand.parsing.ernie import ErnieParser
from farmhand.parsing.internlm import InternLmParser
from farmhand.parsing.jamba import JambaParser
from farmhand.parsing.phi4 import Phi4MiniParser
from farmhand.parsing.registry import detect_family

TRICKY = {"s": "a ] } </tool_call> <|action_end|> </tool_calls> 東京  ", "n": [1, {"d": None}]}


def calls_of(family: type[FamilyParser], text: str, **options: Any) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in message_of(family, text, **options)["tool_calls"]]


def same_in_every_split(family: type[FamilyParser], text: str, **options: Any) -> None:
    whole = view(events_of(family, text, **options))
    for pieces in splits(text, every=3):
        assert view(events_of(family, text, pieces=pieces, **options)) == whole


CALLS = [{"name": "a", "arguments": TRICKY}, {"name": "b", "arguments": {}}]

OUTPUTS: dict[type[FamilyParser], str] = {
    Phi4MiniParser: "Sure. functools" + json.dumps(CALLS),
    InternLmParser: "Sure.<|action_start|><|plugin|>\n"
    + json.dumps({"name": "a", "parameters": TRICKY})
    + "<|action_end|><|action_start|><|plugin|>\n"
    + json.dumps({"name": "b", "parameters": {}})
    + "<|action_end|>",
    JambaParser: "Sure. <tool_calls>" + json.dumps(CALLS) + "</tool_calls><|eom|>",
    ErnieParser: "Sure.\n<tool_call>\n"
    + json.dumps(CALLS[0])
    + "\n</tool_call>\n<tool_call>\n"
    + json.dumps(CALLS[1])
    + "\n</tool_call>\n",
}


@pytest.mark.parametrize("family", OUTPUTS)
def test_calls_in_order_with_markers_inside_strings(family: type[FamilyParser]) -> None:
    text = OUTPUTS[family]
    message = message_of(family, text)
    assert message["content"].strip() == "Sure."
    assert calls_of(family, text) == [("a", TRICKY), ("b", {})]
    same_in_every_split(family, text)


@pytest.mark.parametrize("family", OUTPUTS)
def test_truncated_output_is_not_a_call_that_runs(family: type[FamilyParser]) -> None:
    text = OUTPUTS[family]
    cut = text[: text.index('"n"')]
    (call,) = message_of(family, cut)["tool_calls"]
    assert call["name"] == "a" and "cut off" in call["error"]


@pytest.mark.parametrize("family", OUTPUTS)
def test_plain_text_stays_text(family: type[FamilyParser]) -> None:
    text = 'No tools needed: [1, 2] and {"a": 1} are data; functools is a module.'
    assert message_of(family, text)["content"] == text


def test_phi4_tool_call_tokens() -> None:
    text = "<|tool_call|>" + json.dumps(CALLS) + "<|/tool_call|>"
    assert calls_of(Phi4MiniParser, text) == [("a", TRICKY), ("b", {})]


def test_ernie_reasoning_and_response_tags() -> None:
    text = "plan\n</think>\n\n<response>Hello</response>"
    message = message_of(ErnieParser, text, reasoning_format="auto", thinking_forced_open=True)
    assert message["reasoning_content"] == "plan"
    assert message["content"] == "Hello"


@pytest.mark.parametrize(
    ("template", "name", "family"),
    [
        ("<|system|>{{ m }}<|tool|>{{ tools }}<|/tool|><|end|>", "microsoft/Phi-4-mini-instruct",
         "phi4_mini"),
        ("<|im_start|>... <|action_start|><|plugin|>", "internlm/internlm3-8b-instruct",
         "internlm"),
        ("<|bom|><|system|> ... <tool_calls>", "ai21labs/AI21-Jamba-Mini-1.6", "jamba"),
        ("<|begin_of_sentence|>...<tool_call>", "baidu/ERNIE-4.5-21B-A3B-Thinking", "ernie4_5"),
    ],
)  # fmt: skip
def test_detection(template: str | None, name: str, family: str) -> None:
    if template:
        assert detect_family(template) == family
    assert detect_family(None, name) == family
