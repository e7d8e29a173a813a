"""The Responses request: `text.format` as the answer's shape, and input items as they
are kept (references: `test_responses_references.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.dialects.responses.request import parse_responses, with_item_ids
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


def test_messages_are_kept_with_a_type_an_id_and_content_parts() -> None:
    sent: list[dict[str, Any]] = [
        {"role": "user", "content": "hello"},
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "d"}]},
        {"role": "assistant", "content": "Hi."},
        {"type": "message", "role": "user", "content": "again", "id": "msg_mine"},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
    ]
    user, developer, assistant, mine, output = with_item_ids(sent)
    assert user == {
        "id": user["id"],
        "type": "message",
        "status": "completed",
        "role": "user",
        "content": [{"type": "input_text", "text": "hello"}],
    }
    assert developer["content"] == sent[1]["content"] and developer["type"] == "message"
    assert assistant["content"] == [{"type": "output_text", "text": "Hi.", "annotations": []}]
    ids = [user["id"], developer["id"], assistant["id"]]
    assert all(i.startswith("msg_") for i in ids) and len(set(ids)) == 3
    assert mine["id"] == "msg_mine"  # an id the client gave is kept
    assert output == sent[4]  # other items as sent
    assert sent[0] == {"role": "user", "content": "hello"}  # the request's own not changed
