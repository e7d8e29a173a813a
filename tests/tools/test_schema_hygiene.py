"""normalize_schema, as_parameters_schema and make_strict."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from farmhand.tools.schema import as_parameters_schema, make_strict, normalize_schema

CLEAN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Who"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
    },
    "required": ["name"],
}


def test_a_clean_schema_is_left_as_it_is() -> None:
    assert normalize_schema(CLEAN) == CLEAN


def test_nested_refs_are_inlined_and_defs_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {"order": {"$ref": "#/$defs/order"}},
        "$defs": {
            "order": {"type": "object", "properties": {"item": {"$ref": "#/definitions/item"}}},
        },
        "definitions": {"item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    }

    assert normalize_schema(schema) == {
        "type": "object",
        "properties": {
            "order": {
                "type": "object",
                "properties": {
                    "item": {"type": "object", "properties": {"sku": {"type": "string"}}}
                },
            }
        },
    }


def test_keywords_next_to_a_ref_refine_its_target() -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"$ref": "#/$defs/date", "description": "Due date"}},
        "$defs": {"date": {"type": "string", "description": "A date", "format": "date"}},
    }

    assert normalize_schema(schema)["properties"]["when"] == {
        "type": "string",
        "description": "Due date",
        "format": "date",
    }


def _depth(schema: dict[str, Any]) -> int:
    depth = 0
    while "next" in schema.get("properties", {}):
        schema = schema["properties"]["next"]
        depth += 1
    assert schema.keys() == {"description"}
    assert "recursive #/$defs/node not expanded" in schema["description"]
    return depth


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_recursive_ref_stops_at_the_depth_limit_with_a_note(limit: int) -> None:
    schema = {
        "type": "object",
        "properties": {"next": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"value": {"type": "int"}, "next": {"$ref": "#/$defs/node"}},
            }
        },
    }

    normalized = normalize_schema(schema, max_ref_depth=limit)

    assert _depth(normalized) == limit + 1
    assert normalized["properties"]["next"]["properties"]["value"] == {"type": "integer"}


def test_mutually_recursive_refs_and_a_ref_to_the_root_terminate() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a"}, "self": {"$ref": "#"}},
        "$defs": {
            "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
            "b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}},
        },
    }

    normalized = normalize_schema(schema)

    assert "$defs" not in normalized
    assert "$ref" not in repr(normalized)


def test_an_unresolvable_ref_becomes_a_note() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}

    assert normalize_schema(schema)["properties"]["x"] == {
        "description": "(unresolved reference #/$defs/missing)"
    }


def test_null_annotations_go_but_a_null_default_stays() -> None:
    schema = {
        "type": "object",
        "description": None,
        "title": None,
        "properties": {"x": {"type": "string", "description": None, "default": None}},
    }

    assert normalize_schema(schema) == {
        "type": "object",
        "properties": {"x": {"type": "string", "default": None}},
    }


@pytest.mark.parametrize(
    ("written", "json_type"),
    [
        ("dict", "object"),
        ("list", "array"),
        ("str", "string"),
        ("int", "integer"),
        ("float", "number"),
        ("bool", "boolean"),
        ("STRING", "string"),
        (["str", "None"], ["string", "null"]),
    ],
)
def test_python_ish_type_names_become_json_types(written: Any, json_type: Any) -> None:
    assert normalize_schema({"type": written})["type"] == json_type


def test_a_dict_typed_schema_gets_properties() -> None:
    assert normalize_schema({"type": "dict"}) == {"type": "object", "properties": {}}


def test_properties_named_like_keywords_are_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "type": {"type": "str"},
            "definitions": {"type": "string"},
            "description": {"type": "string"},
        },
    }

    assert normalize_schema(schema)["properties"] == {
        "type": {"type": "string"},
        "definitions": {"type": "string"},
        "description": {"type": "string"},
    }


def test_enum_and_const_values_are_data_not_schemas() -> None:
    schema = {"type": "string", "enum": ["dict", None], "const": None}

    assert normalize_schema(schema) == schema


def test_normalize_never_mutates_its_input() -> None:
    schema = {
        "type": "dict",
        "description": None,
        "properties": {"x": {"$ref": "#/$defs/x"}},
        "$defs": {"x": {"type": "list"}},
    }
    before = copy.deepcopy(schema)

    normalize_schema(schema)

    assert schema == before


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (None, {"type": "object", "properties": {}}),
        ({}, {"type": "object", "properties": {}}),
        ({"type": "string"}, {"type": "object", "properties": {}}),
        ({"type": "dict"}, {"type": "object", "properties": {}}),
        (
            {"$schema": "s", "properties": {"a": {}}, "required": []},
            {"type": "object", "properties": {"a": {}}},
        ),
        (
            {"type": "object", "properties": {}, "additionalProperties": False},
            {"type": "object", "properties": {}, "additionalProperties": False},
        ),
    ],
)
def test_parameters_are_always_an_object_schema(schema: Any, expected: dict[str, Any]) -> None:
    assert as_parameters_schema(schema) == expected


STRICT_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat"],
        },
        "ref": {"$ref": "#/$defs/x"},
    },
    "required": ["city"],
    "$defs": {"x": {"type": "object", "properties": {"y": {"type": "string"}}}},
}


def test_strict_closes_every_object_and_requires_every_property() -> None:
    strict = make_strict(STRICT_INPUT)

    assert strict["additionalProperties"] is False
    assert strict["required"] == ["city", "unit", "where", "ref"]
    assert strict["properties"]["where"]["additionalProperties"] is False
    assert strict["properties"]["where"]["required"] == ["lat", "lon"]
    assert strict["$defs"]["x"]["additionalProperties"] is False
    assert strict["$defs"]["x"]["required"] == ["y"]


def test_strict_keeps_optional_fields_optional_by_making_them_nullable() -> None:
    strict = make_strict(STRICT_INPUT)
    properties = strict["properties"]

    assert properties["city"] == {"type": "string"}
    assert properties["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert properties["where"]["type"] == ["object", "null"]
    assert properties["where"]["properties"]["lon"] == {"type": ["number", "null"]}
    assert properties["ref"] == {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "null"}]}


def test_strict_schema_accepts_null_for_optional_and_refuses_missing_or_extra() -> None:
    validator = jsonschema.Draft202012Validator(make_strict(STRICT_INPUT))
    complete = {"city": "Oslo", "unit": None, "where": None, "ref": None}

    assert validator.is_valid(complete)
    assert not validator.is_valid({"city": "Oslo"})
    assert not validator.is_valid({**complete, "extra": 1})
    assert not validator.is_valid({**complete, "city": None})


def test_make_strict_never_mutates_its_input() -> None:
    before = copy.deepcopy(STRICT_INPUT)

    make_strict(STRICT_INPUT)

    assert before == STRICT_INPUT
