"""gpt-oss's Harmony messages and Kimi K2's call tokens: the cases the corpus leaves out."""

from __future__ import annotations

from typing import Any

from tests.parsing.helpers import message_of, splits

from farmhand.parsing.harmony import HarmonyParser
from farmhand.parsing.kimi_k2 import KimiK2Parser

ANALYSIS = "<|channel|>analysis<|message|>Let me look.<|end|>"
CALL = (
    "<|start|>assistant<|channel|>commentary to=functions.get <|constrain|>json<|message|>"
    '{"q": "a<|b"}<|call|>'
)


def harmony(text: str, **options: Any) -> dict[str, Any]:
    options.setdefault("reasoning_format", "auto")
    whole = message_of(HarmonyParser, text, **options)
    for pieces in splits(text, every=5):
        assert message_of(HarmonyParser, "", pieces, **options) == whole
    return whole


def test_analysis_then_a_call_then_the_answer() -> None:
    text = ANALYSIS + CALL + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
    assert harmony(text) == {
        "content": "Done.",
        "reasoning_content": "Let me look.",
        "tool_calls": [{"name": "get", "arguments": {"q": "a<|b"}}],
    }


def test_builtin_tools_and_calls_not_to_be_read_are_dropped() -> None:
    text = ANALYSIS + "<|start|>assistant to=browser.search<|channel|>commentary<|message|>{}"
    assert harmony(text)["tool_calls"] == []
    assert harmony(ANALYSIS + CALL, parse_tool_calls=False) == {
        "content": "",
        "reasoning_content": "Let me look.",
        "tool_calls": [],
    }


def test_a_call_cut_off_never_runs() -> None:
    (call,) = harmony(ANALYSIS + CALL[: CALL.index('"a<|b')])["tool_calls"]
    assert call["arguments"] == {} and "cut off" in call["error"]


def test_reasoning_kept_in_the_text_is_the_message_as_written() -> None:
    text = ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Hi"
    assert harmony(text, reasoning_in_content=True)["content"] == ANALYSIS + "Hi"


def test_the_prefill_is_the_run_of_assistant_messages_the_prompt_ends_with() -> None:
    prompt = (
        "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>analysis<|message|>"
        "Think<|end|><|start|>assistant<|channel|>final<|message|>Hel"
    )
    prefill = HarmonyParser.prefill_of(prompt)
    assert prefill == (
        "<|channel|>analysis<|message|>Think<|end|><|start|>assistant<|channel|>final<|message|>Hel"
    )
    assert HarmonyParser.prefill_of("<|start|>user<|message|>Hi<|end|><|start|>assistant") == ""


KIMI_CALL = (
    "<|tool_call_begin|>functions.get:{n}<|tool_call_argument_begin|>"
    '{{"q": "{q}"}}<|tool_call_end|>'
)


def kimi(text: str, **options: Any) -> dict[str, Any]:
    options.setdefault("reasoning_format", "auto")
    whole = message_of(KimiK2Parser, text, **options)
    for pieces in splits(text, every=5):
        assert message_of(KimiK2Parser, "", pieces, **options) == whole
    return whole


def test_kimi_keeps_the_call_ids_in_order() -> None:
    text = (
        "Two calls.<|tool_calls_section_begin|>"
        + KIMI_CALL.format(n=0, q="x")
        + KIMI_CALL.format(n=1, q="é")
        + "<|tool_calls_section_end|>"
    )
    assert kimi(text) == {
        "content": "Two calls.",
        "reasoning_content": "",
        "tool_calls": [
            {"name": "get", "arguments": {"q": "x"}, "id": "functions.get:0"},
            {"name": "get", "arguments": {"q": "é"}, "id": "functions.get:1"},
        ],
    }


def test_kimi_calls_end_unclosed_reasoning_and_a_cut_call_never_runs() -> None:
    text = '<think>Plan<|tool_call_begin|>functions.get:0<|tool_call_argument_begin|>{"q": "a'
    message = kimi(text)
    assert message["reasoning_content"] == "Plan"
    (call,) = message["tool_calls"]
    assert call["arguments"] == {} and "cut off" in call["error"]
