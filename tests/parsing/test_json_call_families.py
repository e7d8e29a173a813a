"""Families that read JSON call objects after their own markers, with the shared array
reader: GigaChat 3 / 3.1, Apriel 1.5 / 1.6, Apertus, and Gemma 2 / 3 (generic JSON after
Gemma's turn header). Formats from their chat templates (ai-sage/GigaChat3-10B-A1.8B,
ServiceNow-AI/Apriel-1.6-15b-Thinker, swiss-ai/Apertus-8B-Instruct, google/gemma-2-2b-it)."""

from __future__ import annotations

import json

from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.apertus import ApertusParser
from farmhand.parsing.apriel import AprielParser
from farmhand.parsing.base import FamilyParser
from farmhand.parsing.gigachat import GigaChatParser
from farmhand.parsing.registry import prefill_of

TRICKY = {"s": "a ] } <|tools_suffix|> </tool_calls> 東京  ", "n": [1, {"d": None}]}


def same_in_every_split(family: type[FamilyParser], text: str, **options: object) -> None:
    whole = view(events_of(family, text, **options))
    for pieces in splits(text, every=5):
        assert view(events_of(family, text, pieces=pieces, **options)) == whole


def test_gigachat3_call_after_the_function_call_role() -> None:
    call = json.dumps({"name": "f", "arguments": TRICKY})
    text = f"Let me see.<|message_sep|>\n\nfunction call<|role_sep|>\n{call}"
    message = message_of(GigaChatParser, text)
    assert message["content"] == "Let me see."
    assert message["tool_calls"] == [{"name": "f", "arguments": TRICKY}]
    same_in_every_split(GigaChatParser, text)


def test_gigachat31_call_after_its_token_and_a_cut_off_call() -> None:
    call = json.dumps({"name": "f", "arguments": {"a": 1}})
    assert message_of(GigaChatParser, "<|function_call|>" + call)["tool_calls"] == [
        {"name": "f", "arguments": {"a": 1}}
    ]
    (cut,) = message_of(GigaChatParser, "<|function_call|>" + call[:-3])["tool_calls"]
    assert "cut off" in cut["error"]


def test_apriel_reasoning_then_calls_in_order() -> None:
    calls = [{"name": "a", "arguments": TRICKY}, {"name": "b", "arguments": {}}]
    text = "Here are my reasoning steps:\nplan\n[BEGIN FINAL RESPONSE]\n<tool_calls>"
    text += json.dumps(calls) + "</tool_calls>[END FINAL RESPONSE]<|end|>"
    message = message_of(AprielParser, text, reasoning_format="auto")
    assert message["reasoning_content"] == "Here are my reasoning steps:\nplan"
    assert message["content"] == ""
    assert [c["name"] for c in message["tool_calls"]] == ["a", "b"]
    assert message["tool_calls"][0]["arguments"] == TRICKY
    same_in_every_split(AprielParser, text, reasoning_format="auto")


def test_apriel_prefill_is_what_follows_either_header() -> None:
    assert prefill_of("apriel", "<|user|>\nhi\n<|begin_assistant|>\nHere are") == "Here are"


def test_apertus_calls_keyed_by_name() -> None:
    text = '<|inner_prefix|>plan<|inner_suffix|><|tools_prefix|>[{"f": ' + json.dumps(TRICKY)
    text += '}, {"g": {}}]<|tools_suffix|>Done.'
    message = message_of(ApertusParser, text, reasoning_format="auto")
    assert message["reasoning_content"] == "plan"
    assert message["content"] == "Done."
    assert message["tool_calls"] == [
        {"name": "f", "arguments": TRICKY},
        {"name": "g", "arguments": {}},
    ]
    same_in_every_split(ApertusParser, text, reasoning_format="auto")


def test_apertus_object_that_is_not_a_call_has_an_error() -> None:
    (bad,) = message_of(ApertusParser, '<|tools_prefix|>[{"f": {}, "g": {}}]')["tool_calls"]
    assert "could not read" in bad["error"]
