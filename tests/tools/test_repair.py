"""Calls that miss their schema the way small models do, repaired (tools/repair.py)."""

from __future__ import annotations

from typing import Any

from farmhand.messages import ToolCall
from farmhand.tools.repair import repaired

PRESENT_VALUE = {
    "type": "object",
    "properties": {
        "payment": {"type": "integer"},
        "years": {"type": "integer"},
        "unit": {"type": "string"},
    },
    "required": ["payment", "years"],
}
QUERY = {
    "type": "object",
    "properties": {
        "conditions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
            },
        },
        "strict": {"type": "boolean"},
    },
}


def arguments_of(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [c.arguments for c in calls]


def test_values_packed_into_one_call_become_one_call_each() -> None:
    written = ToolCall("pv", {"payment": 1000, "years": [10, 20, 30]})
    calls = repaired(written, PRESENT_VALUE)
    assert arguments_of(calls) == [
        {"payment": 1000, "years": 10},
        {"payment": 1000, "years": 20},
        {"payment": 1000, "years": 30},
    ]
    assert calls[0].id == written.id and len({c.id for c in calls}) == 3


def test_lists_of_one_length_pair_up_and_a_one_item_list_is_one_value() -> None:
    written = ToolCall("pv", {"payment": [1, 2], "years": [10, 20], "unit": ["months"]})
    assert arguments_of(repaired(written, PRESENT_VALUE)) == [
        {"payment": 1, "years": 10, "unit": "months"},
        {"payment": 2, "years": 20, "unit": "months"},
    ]


def test_a_number_for_a_string_is_written_as_a_string_at_any_depth() -> None:
    written = ToolCall("q", {"conditions": [{"field": "age", "value": 25}], "strict": True})
    assert arguments_of(repaired(written, QUERY)) == [
        {"conditions": [{"field": "age", "value": "25"}], "strict": True}
    ]


def test_calls_that_fit_or_cannot_be_made_to_fit_stay_as_written() -> None:
    fits = ToolCall("pv", {"payment": 1000, "years": 10})
    assert repaired(fits, PRESENT_VALUE) == [fits]
    uneven = ToolCall("pv", {"payment": [1, 2, 3], "years": [10, 20]})
    assert repaired(uneven, PRESENT_VALUE) == [uneven]
    still_wrong = ToolCall("pv", {"payment": "lots", "years": [10, 20]})
    assert repaired(still_wrong, PRESENT_VALUE) == [still_wrong]
    empty_list = ToolCall("pv", {"payment": 1, "years": []})
    assert repaired(empty_list, PRESENT_VALUE) == [empty_list]
    assert repaired(fits, None) == [fits]
    broken = ToolCall("pv", {}, parse_error="bad JSON")
    assert repaired(broken, PRESENT_VALUE) == [broken]
    # A flag for a string is not a number: left for the model to fix.
    flag = ToolCall("q", {"conditions": [{"field": "x", "value": True}]})
    assert repaired(flag, QUERY) == [flag]


AREA = {
    "type": "object",
    "properties": {
        "interval": {"type": "array", "items": {"type": "number", "format": "float"}},
        "step": {"type": "number", "format": "double"},
        "count": {"type": "number"},
        "flag": {"type": "boolean"},
    },
}


def test_whole_numbers_where_the_schema_says_float_are_written_as_floats() -> None:
    written = ToolCall("area", {"interval": [1, 3.5], "step": 2, "count": 4, "flag": True})
    (call,) = repaired(written, AREA)
    assert call.arguments_json() == (
        '{"interval": [1.0, 3.5], "step": 2.0, "count": 4, "flag": true}'
    )
    assert call.id == written.id
    already = ToolCall("area", {"interval": [1.5], "count": 4})
    assert repaired(already, AREA)[0] is already  # nothing to change: the call as written
