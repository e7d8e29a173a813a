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
