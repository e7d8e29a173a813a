"""The Responses request: `text.format` as the answer's shape."""

from __future__ import annotations

import pytest

from farmhand.dialects.responses_request import parse_responses
from farmhand.errors import RequestError

SCHEMA = {
    "type": "object",
    "properties": {"animal": {"type": "string"}, "legs": {"type": "integer"}},
    "required": ["animal", "legs"],
    "additionalProperties": False,
}


def parsed_text(text: object) -> tuple[object, object]:
    parsed = parse_responses({"model": "m", "input": "x", "text": text})
    return parsed.settings.response_format, parsed.echo["text"]


def test_a_json_schema_format_is_the_answer_shape_and_is_echoed() -> None:
    form = {"type": "json_schema", "name": "animal", "schema": SCHEMA, "strict": True}
    answer, echoed = parsed_text({"format": form, "verbosity": "low"})
    assert answer == SCHEMA
    assert echoed == {"format": form, "verbosity": "low"}


def test_json_object_asks_for_any_json_object_and_text_for_none() -> None:
    assert parsed_text({"format": {"type": "json_object"}})[0] == "json"
    assert parsed_text({"format": {"type": "text"}}) == (None, {"format": {"type": "text"}})
    assert parsed_text(None) == (None, {"format": {"type": "text"}})
    assert parsed_text({"verbosity": "high"}) == (
        None,
        {"verbosity": "high", "format": {"type": "text"}},
    )
    assert parse_responses({"model": "m", "input": "x"}).notes == []


@pytest.mark.parametrize(
    ("text", "param", "says"),
    [
        ("json", "text", "text must be an object"),
        ({"format": {"type": "yaml"}}, "text.format", '{"type": "json_object"}'),
        ({"format": "json"}, "text.format", "is not a format"),
        ({"format": {"type": "json_schema", "name": "a"}}, "text.format.schema", 'needs "schema"'),
        (
            {"format": {"type": "json_schema", "name": "a", "schema": {"type": "shape"}}},
            "text.format.schema",
            "not a valid JSON Schema (type:",
        ),
        (
            {"format": {"type": "json_schema", "name": 5, "schema": SCHEMA}},
            "text.format.name",
            "must be a string",
        ),
    ],
)
def test_a_bad_text_format_says_what_to_send(text: object, param: str, says: str) -> None:
    with pytest.raises(RequestError) as caught:
        parsed_text(text)
    assert caught.value.param == param and says in str(caught.value), str(caught.value)
