"""Google Gemini's tool format, both ways.

    tools:       [{"functionDeclarations": [{"name", "description"?, "parameters"?}, ...]}]
    tool_choice: {"functionCallingConfig": {"mode": "AUTO" | "NONE" | "ANY",
                                            "allowedFunctionNames"?: [...]}}

Gemini's `parameters` take an OpenAPI-flavoured subset of JSON Schema: upper-case type
names, `nullable` instead of a "null" type, no `$ref`, and unknown keywords (such as
`additionalProperties`, `$schema`, and `default` in some API versions) are rejected, so
`schema_to_google` keeps only the keywords Gemini documents. `strict` has no equivalent.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from farmhand.errors import ConfigError
from farmhand.tools.formats import (
    OpenAIToolChoice,
    ToolLike,
    forced_tool_name,
    named_tool_choice,
    openai_tool_dicts,
    require_openai_tool_choice,
)
from farmhand.tools.preview import preview
from farmhand.tools.schema import map_subschemas, normalize_schema

_SCHEMA_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "propertyOrdering",
        "anyOf",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "example",
    }
)
# The only `format` values Gemini takes; others ("email", "uri", ...) are dropped.
_FORMATS = frozenset({"enum", "date-time", "float", "double", "int32", "int64"})

_MODE_TO_GOOGLE = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_MODE_FROM_GOOGLE = {value: key for key, value in _MODE_TO_GOOGLE.items()}
_MODE_FROM_GOOGLE["MODE_UNSPECIFIED"] = "auto"  # the API's default


def tools_to_google(tools: Iterable[ToolLike]) -> list[dict[str, Any]]:
    """OpenAI tools as one Gemini tool holding a declaration per function ([] for none)."""
    declarations: list[dict[str, Any]] = []
    for tool in openai_tool_dicts(tools):
        function = tool["function"]
        declaration: dict[str, Any] = {"name": function["name"]}
        if isinstance(function.get("description"), str):
            declaration["description"] = function["description"]
        if isinstance(function.get("parameters"), Mapping):
            declaration["parameters"] = schema_to_google(function["parameters"])
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}] if declarations else []


def schema_to_google(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON Schema in the subset Gemini accepts (refs inlined, types upper-cased)."""
    converted = _to_google(normalize_schema(schema))
    return converted if isinstance(converted, dict) else {}


def _to_google(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return {}  # boolean schemas: Gemini has no "anything" but an unconstrained schema
    kept = {key: value for key, value in node.items() if key in _SCHEMA_KEYWORDS}
    if isinstance(kept.get("items"), list):
        del kept["items"]  # tuple-form items have no Gemini equivalent
    if "const" in node and "enum" not in kept:
        kept["enum"] = [node["const"]]
    if kept.get("format") not in _FORMATS:
        kept.pop("format", None)
    declared = kept.pop("type", None)
    result = map_subschemas(kept, _to_google)
    if isinstance(declared, str):
        result = {"type": declared.upper(), **result}
    elif isinstance(declared, list):
        result = {**_google_types(declared), **result}
    return result


def _google_types(types: list[Any]) -> dict[str, Any]:
    """`["string", "null"]` -> STRING + nullable; several real types -> anyOf."""
    real = [str(t).upper() for t in types if t != "null"]
    nullable = {"nullable": True} if "null" in types else {}
    if len(real) == 1:
        return {"type": real[0], **nullable}
    if not real:
        return {"type": "NULL"}
    return {"anyOf": [{"type": t} for t in real], **nullable}


def schema_from_google(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini schema as JSON Schema: lower-case types, `nullable` as a "null" type."""
    converted = _from_google(schema)
    return converted if isinstance(converted, dict) else {}


def _from_google(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)
    result = map_subschemas(node, _from_google)
    declared = result.get("type")
    if isinstance(declared, str):
        result["type"] = declared.lower()
    if result.pop("nullable", False) is True and isinstance(result.get("type"), str):
        result["type"] = [result["type"], "null"]
    return result


def _declarations(tool: object) -> object:
    if not isinstance(tool, Mapping):
        return None
    # REST spells it functionDeclarations, the Python SDK function_declarations.
    return tool.get("functionDeclarations", tool.get("function_declarations"))


def is_google_tool(tool: object) -> bool:
    """True for `{"functionDeclarations": [{"name": <str>, ...}, ...]}`."""
    declarations = _declarations(tool)
    return isinstance(declarations, list) and all(
        isinstance(d, Mapping) and isinstance(d.get("name"), str) and d["name"]
        for d in declarations
    )


def tools_from_google(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Gemini tools as OpenAI tools, one per function declaration."""
    result: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if not is_google_tool(tool):
            raise ConfigError(
                f"tool {index} ({preview(tool)}) is not a Gemini tool; expected "
                '{"functionDeclarations": [{"name": ..., "parameters": {...}}]}'
            )
        declarations = _declarations(tool)
        assert isinstance(declarations, list)  # checked by is_google_tool
        result += [_function_from_google(d) for d in declarations]
    return result


def _function_from_google(declaration: Mapping[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": declaration["name"]}
    if isinstance(declaration.get("description"), str):
        function["description"] = declaration["description"]
    # Newer Gemini versions also take plain JSON Schema under parametersJsonSchema.
    json_schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    if isinstance(json_schema, Mapping):
        function["parameters"] = copy.deepcopy(dict(json_schema))
    elif isinstance(declaration.get("parameters"), Mapping):
        function["parameters"] = schema_from_google(declaration["parameters"])
    return {"type": "function", "function": function}


def tool_choice_to_google(choice: OpenAIToolChoice) -> dict[str, Any]:
    """Gemini's toolConfig: a named function is mode ANY restricted to that one name."""
    checked = require_openai_tool_choice(choice)
    name = forced_tool_name(checked)
    if name is not None:
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    return {"functionCallingConfig": {"mode": _MODE_TO_GOOGLE[str(checked)]}}


def _calling_config(choice: object) -> Mapping[str, Any] | None:
    if not isinstance(choice, Mapping):
        return None
    config = choice.get("functionCallingConfig", choice.get("function_calling_config"))
    return config if isinstance(config, Mapping) else None


def is_google_tool_choice(choice: object) -> bool:
    config = _calling_config(choice)
    return config is not None and isinstance(config.get("mode"), str)


def tool_choice_from_google(choice: Mapping[str, Any]) -> OpenAIToolChoice:
    """The OpenAI tool_choice for a Gemini toolConfig.

    ANY with several allowed names has no OpenAI equivalent (it forces one tool or any
    tool), so it is refused rather than widened.
    """
    config = _calling_config(choice)
    mode = config.get("mode") if config is not None else None
    if config is None or not isinstance(mode, str):
        raise ConfigError(
            f"tool_choice {preview(choice)} is not a Gemini toolConfig; expected "
            '{"functionCallingConfig": {"mode": "AUTO" | "NONE" | "ANY"}}'
        )
    names = config.get("allowedFunctionNames", config.get("allowed_function_names")) or []
    mode = mode.upper()
    if mode == "ANY" and isinstance(names, list) and len(names) == 1:
        return named_tool_choice(str(names[0]))
    if mode == "ANY" and names:
        raise ConfigError(
            f"tool_choice {preview(choice)} allows several functions; farmhand can force one "
            "named tool or any tool. Offer only those tools and use mode ANY without names"
        )
    if mode not in _MODE_FROM_GOOGLE:
        raise ConfigError(f"tool_choice mode {mode!r} is not supported; use AUTO, NONE or ANY")
    return _MODE_FROM_GOOGLE[mode]
