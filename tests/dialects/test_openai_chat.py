"""The chat.completions request's `response_format`: the answer's shape it asks for, and a
400 naming the field for a value that is not a format."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.dialects.openai.chat import parse_chat
from farmhand.errors import RequestError

SCHEMA = {
    "type": "object",
    "properties": {"animal": {"type": "string"}, "legs": {"type": "integer"}},
    "required": ["animal", "legs"],
    "additionalProperties": False,
}


def answer_shape(response_format: object) -> object:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    if response_format is not None:
        body["response_format"] = response_format
    return parse_chat(body).chat.settings.response_format


def test_a_json_schema_is_the_answer_shape() -> None:
    form = {"name": "animal", "schema": SCHEMA, "strict": True}
    assert answer_shape({"type": "json_schema", "json_schema": form}) == SCHEMA


def test_json_object_asks_for_any_json_object() -> None:
    assert answer_shape({"type": "json_object"}) == "json"
    # A json_schema without its schema: any JSON object, as OpenAI reads it.
    assert answer_shape({"type": "json_schema", "json_schema": {"name": "free"}}) == "json"


def test_text_or_nothing_leaves_the_answer_free() -> None:
    assert answer_shape({"type": "text"}) is None
    assert answer_shape(None) is None


def schema_form(**fields: Any) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "animal", "schema": SCHEMA, **fields}}


@pytest.mark.parametrize(
    ("value", "param", "words"),
    [
        ("json", "response_format", ['"json" is not a format', "json_object"]),
        ({"type": "yaml"}, "response_format", ["yaml", "json_schema"]),
        ({"type": "json_schema"}, "response_format.json_schema", ['"name"']),
        ({"type": "json_schema", "json_schema": "x"}, "response_format.json_schema", ["needs"]),
        (schema_form(name=None), "response_format.json_schema.name", ["64 letters"]),
        (schema_form(name="an animal"), "response_format.json_schema.name", ['"an animal"']),
        (schema_form(name="x" * 65), "response_format.json_schema.name", ["up to 64"]),
        (schema_form(strict="yes"), "response_format.json_schema.strict", ["true or false"]),
        (schema_form(schema=[1]), "response_format.json_schema.schema", ["as an object"]),
        (
            schema_form(schema={"type": "animal"}),
            "response_format.json_schema.schema",
            ["not a valid JSON Schema", "type"],
        ),
    ],
)  # fmt: skip
def test_a_bad_response_format_names_the_field(value: object, param: str, words: list[str]) -> None:
    with pytest.raises(RequestError) as raised:
        answer_shape(value)
    assert raised.value.param == param
    for word in words:
        assert word in str(raised.value), str(raised.value)


# The whole body: one pass of `ChatCompletionBody`, each field named when it is wrong

WEATHER = {
    "type": "function",
    "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}},
}


def chat_body(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "x"}], **fields}


def test_a_whole_body_becomes_one_chat_and_unknown_fields_are_ignored() -> None:
    parsed = parse_chat(
        chat_body(
            temperature=0.5,
            max_tokens=10,
            max_completion_tokens=20,
            seed=3,
            stop="END",
            parallel_tool_calls=False,
            stream=True,
            stream_options={"include_usage": True},
            top_p=0.9,
            tools=[WEATHER],
            tool_choice="required",
            tool_timeout=1500,
            max_tool_rounds=2,
            jit_tools=True,
            jit_max_tools=3,
            jit_connect_eager=False,
            include_tool_results=True,
            mcp_servers=["time"],
            chat_template_kwargs={"enable_thinking": False},
            logit_bias={"50256": -100},
        )
    )
    chat, settings = parsed.chat, parsed.chat.settings
    assert (parsed.model, parsed.stream, parsed.include_usage) == ("m", True, True)
    assert parsed.include_tool_results is True
    assert (settings.temperature, settings.top_p, settings.seed) == (0.5, 0.9, 3)
    assert settings.max_tokens == 20  # max_completion_tokens wins, as OpenAI reads them
    assert settings.stop == ("END",) and settings.parallel_tool_calls is False
    assert settings.stream is True and settings.tool_choice.mode == "required"
    assert settings.template_kwargs == {"enable_thinking": False}
    assert [t.name for t in chat.client_tools] == ["weather"]
    assert [m.content for m in chat.messages] == ["x"]
    assert chat.tool_timeout == 1.5  # milliseconds on the wire
    assert (chat.max_tool_rounds, chat.jit_tools, chat.jit_max_tools) == (2, True, 3)
    assert chat.jit_connect_eager is False and list(chat.mcp_servers) == ["time"]


def test_left_out_fields_keep_their_defaults() -> None:
    parsed = parse_chat(chat_body())
    settings = parsed.chat.settings
    assert (parsed.stream, parsed.include_usage, parsed.include_tool_results) == (False,) * 3
    assert settings.parallel_tool_calls is True and settings.stream is False
    assert settings.tool_choice.mode == "auto" and settings.stop == ()
    assert settings.max_tokens is None and settings.response_format is None
    assert parsed.chat.tools_path is None and parsed.chat.tool_timeout is None


@pytest.mark.parametrize(
    ("fields", "param", "words"),
    [
        ({"n": 2}, "n", ["only n=1"]),
        ({"n": 0}, "n", ["at least 1"]),
        ({"seed": 2**64}, "seed", ["at most"]),
        ({"seed": 1.5}, "seed", ["an integer"]),
        ({"top_p": 1.5}, "top_p", ["between 0 and 1"]),
        ({"temperature": True}, "temperature", ["a number"]),
        ({"tool_timeout": 0}, "tool_timeout", ["between 1 and"]),
        ({"max_tool_rounds": "3"}, "max_tool_rounds", ["an integer"]),
        ({"jit_max_tools": 0}, "jit_max_tools", ["at least 1"]),
        ({"jit_tools": 1}, "jit_tools", ["true or false"]),
        ({"include_tool_results": "no"}, "include_tool_results", ["true or false"]),
        ({"tools_path": ""}, "tools_path", ["directory path"]),
        ({"stream_options": []}, "stream_options", ["an object"]),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop", ["up to 4"]),
        ({"chat_template": "{{ x }}"}, "chat_template", ["cannot be set by a request"]),
        ({"chat_template_kwargs": {"messages": []}}, "chat_template_kwargs", ["may not set"]),
        ({"mcp_servers": ["time", "time"]}, "mcp_servers", ["used twice"]),
    ],
)  # fmt: skip
def test_each_field_is_checked_and_named(
    fields: dict[str, Any], param: str, words: list[str]
) -> None:
    with pytest.raises(RequestError) as raised:
        parse_chat(chat_body(**fields))
    assert raised.value.param == param
    for word in words:
        assert word in str(raised.value), str(raised.value)


def test_the_first_wrong_field_in_the_bodys_order_is_the_one_named() -> None:
    with pytest.raises(RequestError) as raised:  # `model` is checked before `tools`
        parse_chat({"tools": "all", "messages": []})
    assert raised.value.param == "model"
    with pytest.raises(RequestError) as raised:  # `tools` before `messages`
        parse_chat({"model": "m", "tools": "all", "messages": []})
    assert raised.value.param == "tools"
