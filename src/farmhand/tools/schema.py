"""Schema hygiene for tool parameters, strict mode, and argument validation.

Small backends (llama.cpp grammars, Gemini, older OpenAI-compatible servers) choke on
`$ref`, null annotations and python-ish type names, so `normalize_schema` rewrites a schema
into the plain subset they all take. `validate_arguments` checks a model's arguments and
says what to fix in words a small model can act on. Every function here is pure.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

import jsonschema
from referencing.exceptions import Unresolvable

from farmhand.tools.definition import ToolDefinition
from farmhand.tools.preview import preview

DEFAULT_MAX_REF_DEPTH = 3
MAX_REPORTED_ERRORS = 3

# Where a schema keeps its subschemas: one schema, a name -> schema map, or a list.
_SCHEMA_KEYS = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
    }
)
_SCHEMA_MAP_KEYS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)
_SCHEMA_LIST_KEYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})

_JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_PYTHON_TYPES = {
    "dict": "object",
    "list": "array",
    "tuple": "array",
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "none": "null",
    "nonetype": "null",
}
# null is a meaningful value for these; for every other keyword it is noise.
_NULL_ALLOWED = frozenset({"default", "const"})
_DROPPED_KEYS = frozenset({"$defs", "definitions", "$schema"})


def map_subschemas(node: Mapping[str, Any], fn: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of `node` with `fn` applied to each direct subschema; other values deep-copied.

    Walking by keyword (not by key name anywhere) keeps a property called "type" or
    "definitions" from being mistaken for a keyword.
    """
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_KEYS:
            result[key] = [fn(v) for v in value] if isinstance(value, list) else fn(value)
        elif key in _SCHEMA_MAP_KEYS and isinstance(value, Mapping):
            result[key] = {name: fn(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
            result[key] = [fn(sub) for sub in value]
        elif key == "dependencies" and isinstance(value, Mapping):
            # draft-07: each entry is a list of names or a schema
            result[key] = {
                name: fn(sub) if isinstance(sub, Mapping) else copy.deepcopy(sub)
                for name, sub in value.items()
            }
        else:
            result[key] = copy.deepcopy(value)
    return result


def json_type_name(value: object) -> object:
    """`"dict"` -> `"object"`, `"STRING"` -> `"string"`; lists mapped item by item."""
    if isinstance(value, list):
        mapped: list[object] = []
        for item in value:
            name = json_type_name(item)
            if name not in mapped:
                mapped.append(name)
        return mapped
    if not isinstance(value, str):
        return value
    lowered = value.lower()
    if lowered in _JSON_TYPES:
        return lowered
    return _PYTHON_TYPES.get(lowered, value)


def is_object_type(type_value: object) -> bool:
    return type_value == "object" or (isinstance(type_value, list) and "object" in type_value)


def normalize_schema(
    schema: Mapping[str, Any], *, max_ref_depth: int = DEFAULT_MAX_REF_DEPTH
) -> dict[str, Any]:
    """The schema in the plain subset every backend takes.

    Local `$ref`s are inlined and `$defs`/`definitions`/`$schema` dropped; a recursive ref
    is expanded `max_ref_depth` times, then left as `{}` with a note in its description.
    Null-valued keywords go (except `default`/`const`), python-ish type names become JSON
    types, an object schema always has `properties`, and an empty `required` goes.
    """
    normalized = _Normalizer(schema, max_ref_depth).walk(schema, ())
    return normalized if isinstance(normalized, dict) else {}


class _Normalizer:
    def __init__(self, root: Mapping[str, Any], max_ref_depth: int) -> None:
        self._root = root
        self._max_ref_depth = max_ref_depth

    def walk(self, node: Any, refs: tuple[str, ...]) -> Any:
        if not isinstance(node, Mapping):
            return copy.deepcopy(node)  # `true`/`false` schemas, or malformed input left alone
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._inline(node, ref, refs)
        kept = {
            key: value
            for key, value in node.items()
            if key not in _DROPPED_KEYS and (value is not None or key in _NULL_ALLOWED)
        }
        if "type" in kept:
            kept["type"] = json_type_name(kept["type"])
        if kept.get("required") == []:
            del kept["required"]
        result = map_subschemas(kept, lambda sub: self.walk(sub, refs))
        if is_object_type(result.get("type")) and not isinstance(result.get("properties"), Mapping):
            result["properties"] = {}
        return result

    def _inline(self, node: Mapping[str, Any], ref: str, refs: tuple[str, ...]) -> Any:
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if refs.count(ref) >= self._max_ref_depth:
            note = f"(recursive {ref} not expanded further)"
            return {"description": _with_note(siblings.get("description"), note)}
        target = resolve_pointer(self._root, ref)
        if not isinstance(target, Mapping):
            note = f"(unresolved reference {ref})"
            siblings["description"] = _with_note(siblings.get("description"), note)
            return self.walk(siblings, refs)
        # Keywords written next to a $ref refine what it points at.
        return self.walk({**target, **siblings}, (*refs, ref))


def _with_note(description: object, note: str) -> str:
    return f"{description} {note}" if isinstance(description, str) and description else note


def resolve_pointer(root: Mapping[str, Any], ref: str) -> object:
    """What a local ref like `#/$defs/Item` points at in `root`, or None."""
    if not ref.startswith("#"):
        return None  # remote refs are never fetched
    pointer = unquote(ref[1:])
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return None  # anchors (`#name`) are rare in tool schemas
    current: object = root
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, Mapping) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
    return current


def as_parameters_schema(schema: object) -> dict[str, Any]:
    """A tool's top-level parameters: always an object schema with `properties`.

    Missing `type` becomes "object"; any other top-level type is replaced by the empty object
    schema (function-calling APIs take objects only). `$schema` and an empty `required` go.
    Nested schemas are left as they are: that is `normalize_schema`'s job.
    """
    if not isinstance(schema, Mapping):
        return {"type": "object", "properties": {}}
    result = {key: copy.deepcopy(value) for key, value in schema.items() if key != "$schema"}
    declared = json_type_name(result.get("type"))
    if declared is None:
        result["type"] = "object"
    elif declared != "object":
        return {"type": "object", "properties": {}}
    else:
        result["type"] = declared
    if not isinstance(result.get("properties"), Mapping):
        result["properties"] = {}
    if result.get("required") == []:
        del result["required"]
    return result


def make_strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as OpenAI's strict mode wants it.

    Every object gets `additionalProperties: false` and lists all its properties as
    required; properties that were optional become nullable, so the model can still
    leave them out by sending null.
    """
    strict = _strict(schema)
    return strict if isinstance(strict, dict) else {}


def _strict(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)
    result = map_subschemas(node, _strict)
    properties = result.get("properties")
    if is_object_type(result.get("type")) or isinstance(properties, Mapping):
        properties = properties if isinstance(properties, Mapping) else {}
        required = node.get("required")
        originally_required = set(required) if isinstance(required, list) else set()
        result["properties"] = {
            name: sub if name in originally_required else _nullable(sub)
            for name, sub in properties.items()
        }
        result["required"] = list(properties)
        result["additionalProperties"] = False
    return result


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    declared = schema.get("type")
    if isinstance(declared, str):
        result = {**schema, "type": [declared, "null"] if declared != "null" else "null"}
    elif isinstance(declared, list):
        result = {**schema, "type": declared if "null" in declared else [*declared, "null"]}
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    enum = result.get("enum")
    if isinstance(enum, list) and None not in enum:
        result["enum"] = [*enum, None]
    return result


# --- argument validation -------------------------------------------------------------------


def validate_arguments(tool: ToolDefinition, arguments: object) -> str | None:
    """None when `arguments` fit the tool's schema; otherwise what to fix, for the model.

    Names each wrong field by its path (`arguments.items[2].name`), says why and hints at
    the fix; reports at most the first three problems. A schema that is itself invalid
    validates nothing: the tool's own server will judge the call.
    """
    schema = tool.parameters
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        validator_class.check_schema(schema)
        errors = list(validator_class(schema).iter_errors(arguments))
    except (jsonschema.SchemaError, Unresolvable):
        return None
    problems = _problems(errors)
    if not problems:
        return None
    shown = problems[:MAX_REPORTED_ERRORS]
    lines = [f"Invalid arguments for {tool.name}:"]
    lines += [f"- {problem}" for problem in shown]
    if len(problems) > len(shown):
        lines.append(f"- ({len(problems) - len(shown)} more problems not shown)")
    lines.append(f"Call {tool.name} again with corrected arguments.")
    return "\n".join(lines)


def _problems(errors: list[Any]) -> list[str]:
    # Shallow problems first: a missing or unknown top-level field matters most.
    errors.sort(key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    problems: list[str] = []
    for error in errors:
        for problem in _describe(jsonschema.exceptions.best_match([error])):
            if problem not in problems:
                problems.append(problem)
    return problems


def _describe(error: Any) -> list[str]:
    path = list(error.absolute_path)
    keyword = error.validator
    instance = error.instance
    if keyword == "required" and isinstance(instance, Mapping):
        return [
            f"{json_path([*path, name])}: missing required field. Add {json.dumps(name)}"
            f"{_expected_type_hint(error.schema, name)}."
            for name in error.validator_value
            if name not in instance
        ]
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        known = list(error.schema.get("properties", {}))
        allowed = ", ".join(known) if known else "no fields"
        return [
            f"{json_path([*path, name])}: unknown field. Remove it; allowed: {allowed}."
            for name in _extra_keys(instance, error.schema)
        ]
    where = json_path(path)
    if keyword == "type":
        expected = _or_list(error.validator_value)
        got = f"{_json_kind(instance)} {preview(instance, 40)}"
        hint = _type_hint(error.validator_value, instance)
        return [f"{where}: expected {expected}, got {got}.{hint}"]
    if keyword == "enum":
        options = ", ".join(preview(v, 40) for v in error.validator_value)
        return [
            f"{where}: {preview(instance, 40)} is not one of {options}. Use one of these exactly."
        ]
    if keyword == "const":
        return [f"{where}: must be exactly {preview(error.validator_value, 40)}."]
    return [f"{where}: {error.message}."]


def _extra_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(re.search(p, key) for p in patterns)
    ]


def _expected_type_hint(schema: Mapping[str, Any], name: str) -> str:
    prop = schema.get("properties", {}).get(name)
    if isinstance(prop, Mapping) and "type" in prop:
        return f" ({_or_list(prop['type'])})"
    return ""


def _type_hint(expected: object, instance: object) -> str:
    wanted = expected if isinstance(expected, list) else [expected]
    if isinstance(instance, str):
        if {"integer", "number"} & set(wanted) and _looks_numeric(instance):
            return f" Send the number {instance.strip()} without quotes."
        if "boolean" in wanted and instance.strip().lower() in ("true", "false"):
            return f" Send {instance.strip().lower()} without quotes."
        if {"array", "object"} & set(wanted):
            return " Send JSON itself, not a string containing JSON."
    return ""


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _or_list(value: object) -> str:
    if isinstance(value, list):
        return " or ".join(str(v) for v in value)
    return str(value)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(path: list[Any]) -> str:
    """`["items", 2, "name"]` -> `arguments.items[2].name`."""
    text = "arguments"
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.match(part):
            text += f".{part}"
        else:
            text += f"[{json.dumps(part)}]"
    return text
