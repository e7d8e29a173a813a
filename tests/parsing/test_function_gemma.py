"""The FunctionGemma parser. Cases written from FunctionGemma's published format (the
google/functiongemma-270m-it chat template and Google AI's FunctionGemma docs): a call is
`<start_function_call>call:NAME{key:<escape>value<escape>}<end_function_call>`, and the model
ends its turn with `<start_function_response>`."""

from __future__ import annotations

from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.function_gemma import FunctionGemmaParser
from farmhand.parsing.registry import detect_family

E = "<escape>"


def call(name: str, body: str) -> str:
    return f"<start_function_call>call:{name}{body}<end_function_call>"


def test_calls_in_order_with_escaped_strings_and_numbers() -> None:
    text = (
        call("get_weather", f"{{location:{E}Tokyo, 東京{E},days:3}}")
        + call("noop", "{}")
        + "<start_function_response>"
    )
    message = message_of(FunctionGemmaParser, text)
    assert message == {
        "content": "",
        "reasoning_content": "",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"location": "Tokyo, 東京", "days": 3}},
            {"name": "noop", "arguments": {}},
        ],
    }


def test_end_token_inside_an_escaped_string_does_not_end_the_call() -> None:
    value = "a}<end_function_call> b  "
    (only,) = message_of(FunctionGemmaParser, call("f", f"{{s:{E}{value}{E}}}"))["tool_calls"]
    assert only["arguments"] == {"s": value}


def test_text_before_a_call_and_every_split_agrees() -> None:
    text = "Checking." + call("f", f"{{q:{E}x{E}}}")
    assert message_of(FunctionGemmaParser, text)["content"] == "Checking."
    whole = view(events_of(FunctionGemmaParser, text))
    for pieces in splits(text):
        assert view(events_of(FunctionGemmaParser, text, pieces=pieces)) == whole


def test_truncated_call_does_not_run() -> None:
    (cut,) = message_of(FunctionGemmaParser, f"<start_function_call>call:f{{q:{E}x")["tool_calls"]
    assert "cut off" in cut["error"]


def test_detected_from_template_and_name() -> None:
    template = "{{ '<start_function_declaration>' }}...{{ '<start_function_call>' }}"
    assert detect_family(template) == "function_gemma"
    assert detect_family(None, "google/functiongemma-270m-it") == "function_gemma"
