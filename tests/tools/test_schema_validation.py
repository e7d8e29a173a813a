"""validate_arguments: messages that say which field, why, and what to do."""

from __future__ import annotations

from typing import Any

from farmhand.tools.definition import ToolDefinition
from farmhand.tools.schema import validate_arguments

READ_FILE = ToolDefinition(
    "read_file",
    "Read a file",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]},
            "limit": {"type": "integer"},
            "follow": {"type": "boolean"},
            "lines": {"type": "array", "items": {"type": "object", "properties": {}}},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


def _lines(message: str | None) -> list[str]:
    assert message is not None
    return message.splitlines()


def test_valid_arguments_give_none() -> None:
    assert validate_arguments(READ_FILE, {"path": "a.txt", "limit": 3}) is None


def test_missing_required_field_is_named_with_its_type() -> None:
    message = validate_arguments(READ_FILE, {})

    assert _lines(message) == [
        "Invalid arguments for read_file:",
        '- arguments.path: missing required field. Add "path" (string).',
        "Call read_file again with corrected arguments.",
    ]


def test_wrong_type_says_expected_and_got_and_hints_at_quotes() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "limit": "10"})

    assert _lines(message)[1] == (
        '- arguments.limit: expected integer, got string "10". Send the number 10 without quotes.'
    )


def test_boolean_sent_as_a_string_gets_a_hint() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "follow": "True"})

    assert "arguments.follow: expected boolean, got string" in _lines(message)[1]
    assert "Send true without quotes." in _lines(message)[1]


def test_json_sent_as_a_string_gets_a_hint() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "lines": "[]"})

    assert "Send JSON itself, not a string containing JSON." in _lines(message)[1]


def test_value_outside_the_enum_lists_the_allowed_values() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "encoding": "ascii"})

    assert _lines(message)[1] == (
        '- arguments.encoding: "ascii" is not one of "utf-8", "latin-1". Use one of these exactly.'
    )


def test_unknown_property_is_named_with_the_allowed_ones() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "file": "b"})

    assert _lines(message)[1] == (
        "- arguments.file: unknown field. Remove it; allowed: path, encoding, limit, follow, lines."
    )


def test_nested_paths_use_indexes() -> None:
    message = validate_arguments(READ_FILE, {"path": "a", "lines": [{}, 3]})

    assert "- arguments.lines[1]: expected object, got integer 3." in _lines(message)


def test_arguments_that_are_not_an_object() -> None:
    message = validate_arguments(READ_FILE, ["a.txt"])  # type: ignore[arg-type]

    assert '- arguments: expected object, got array ["a.txt"].' in _lines(message)


def test_at_most_three_problems_shallow_ones_first() -> None:
    arguments: dict[str, Any] = {"encoding": "x", "limit": "y", "follow": 1, "extra": 0}

    lines = _lines(validate_arguments(READ_FILE, arguments))

    assert lines[1].startswith("- arguments.path: missing required field")
    assert lines[2].startswith("- arguments.extra: unknown field")
    assert len([line for line in lines if line.startswith("- arguments")]) == 3
    assert lines[4] == "- (2 more problems not shown)"  # encoding, limit, follow: 5 in all


def test_a_malformed_schema_validates_nothing() -> None:
    broken = ToolDefinition("broken", "", {"type": "objekt", "required": "path"})

    assert validate_arguments(broken, {"anything": 1}) is None


def test_an_unresolvable_ref_validates_nothing() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}

    assert validate_arguments(ToolDefinition("t", "", schema), {"x": 1}) is None


def test_local_refs_are_followed() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/count"}},
        "$defs": {"count": {"type": "integer"}},
    }

    message = validate_arguments(ToolDefinition("t", "", schema), {"x": "many"})

    assert '- arguments.x: expected integer, got string "many".' in _lines(message)


def test_keys_that_are_not_identifiers_are_quoted_in_the_path() -> None:
    schema = {"type": "object", "properties": {"file name": {"type": "string"}}}

    message = validate_arguments(ToolDefinition("t", "", schema), {"file name": 1})

    assert '- arguments["file name"]: expected string, got integer 1.' in _lines(message)
