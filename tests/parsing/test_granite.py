"""The Granite parsers: 3.x `<|tool_call|>[...]` with `<think>`/`<response>`, and 4.x Hermes
tags after Granite's own turn header (format: ibm-granite/granite-3.3 and granite-4.0 chat
templates)."""

from __future__ import annotations

import json

from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.granite import Granite3Parser, Granite4Parser
from farmhand.parsing.registry import detect_family, prefill_of


def test_granite3_list_of_calls_with_reasoning_and_response_tags() -> None:
    calls = [{"name": "a", "arguments": {"s": "</response> ]"}}, {"name": "b", "arguments": {}}]
    text = "<think>plan</think><response>Sure.</response><|tool_call|>" + json.dumps(calls)
    message = message_of(Granite3Parser, text, reasoning_format="auto")
    assert message["reasoning_content"] == "plan"
    assert message["content"] == "Sure."
    assert [(c["name"], c["arguments"]) for c in message["tool_calls"]] == [
        ("a", {"s": "</response> ]"}),
        ("b", {}),
    ]
    whole = view(events_of(Granite3Parser, text, reasoning_format="auto"))
    for pieces in splits(text, every=3):
        assert (
            view(events_of(Granite3Parser, text, pieces=pieces, reasoning_format="auto")) == whole
        )


def test_granite3_keeps_tags_when_reasoning_is_not_split() -> None:
    text = "<think>plan</think><response>Sure.</response>"
    assert message_of(Granite3Parser, text, reasoning_format="none")["content"] == text


def test_granite4_reads_hermes_calls() -> None:
    text = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    assert message_of(Granite4Parser, text)["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]


def test_granite4_template_is_not_sent_to_hermes_by_its_tool_call_tag() -> None:
    template = "<|start_of_role|>system<|end_of_role|>... <tool_call>\n{...}\n</tool_call>"
    assert detect_family(template) == "granite4"
    prompt = "<|start_of_role|>user<|end_of_role|>hi<|start_of_role|>assistant<|end_of_role|>"
    assert prefill_of("granite4", prompt + "<think>") == "<think>"
