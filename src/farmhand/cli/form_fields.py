"""One field of an elicitation form, read from a line the user typed.

Elicitation forms are flat: strings (maybe with a format or an enum), numbers, integers,
booleans, and multi-select arrays of enum values. Each field's text becomes the JSON value
its schema asks for, and is checked against that schema (formats included), so a mistake is
caught at the field, with a message that says what to type.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

TRUE = ("y", "yes", "true", "1", "on")
FALSE = ("n", "no", "false", "0", "off")


def choices(spec: dict[str, Any]) -> list[tuple[Any, str]]:
    """The values a single-select field (or a multi-select's items) offers, with labels."""
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return [
            (o["const"], str(o.get("title", o["const"])))
            for o in options
            if isinstance(o, dict) and "const" in o
        ]
    values = spec.get("enum")
    if not isinstance(values, list):
        return []
    names = spec.get("enumNames")
    labels = names if isinstance(names, list) and len(names) == len(values) else values
    return [(v, str(label)) for v, label in zip(values, labels, strict=True)]


def describe(name: str, spec: dict[str, Any], required: bool) -> str:
    """The prompt for a field: its title, what it is, the choices, and the default."""
    title = str(spec.get("title") or name)
    parts = [f"{title}{' (required)' if required else ''}"]
    if spec.get("description"):
        parts.append(f"– {spec['description']}")
    kind = spec.get("type", "string")
    options = choices(spec.get("items", {})) if kind == "array" else choices(spec)
    if options:
        listed = ", ".join(f"{i}) {label}" for i, (_, label) in enumerate(options, 1))
        how = "numbers or values, comma-separated" if kind == "array" else "number or value"
        parts.append(f"[{listed}; {how}]")
    elif kind == "boolean":
        parts.append("[y/n]")
    elif kind in ("integer", "number") or spec.get("format"):
        parts.append(f"[{spec.get('format') or kind}]")
    if "default" in spec:
        parts.append(f"(Enter: {json.dumps(spec['default'], ensure_ascii=False)})")
    return " ".join(parts)


def parse_field(text: str, spec: dict[str, Any]) -> Any:
    """The value `text` gives the field; ValueError saying what to type instead."""
    kind = spec.get("type", "string")
    if kind == "boolean":
        lowered = text.lower()
        if lowered in TRUE or lowered in FALSE:
            return lowered in TRUE
        raise ValueError("answer y or n")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("type a whole number") from None
    if kind == "number":
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise ValueError("type a number") from None
    if kind == "array":
        options = choices(spec.get("items", {}))
        return [_pick(piece.strip(), options) for piece in text.split(",") if piece.strip()]
    return _pick(text, choices(spec))


def _pick(text: str, options: list[tuple[Any, str]]) -> Any:
    """A choice by its number, value or label; the text itself when there are no choices."""
    if not options:
        return text
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1][0]
    for value, label in options:
        if text in (str(value), label):
            return value
    listed = ", ".join(label for _, label in options)
    raise ValueError(f"{text!r} is not one of: {listed}")


def field_problem(value: Any, spec: dict[str, Any]) -> str | None:
    """Why `value` does not fit the field's schema, or None."""
    try:
        validator = jsonschema.validators.validator_for(spec)(
            spec, format_checker=jsonschema.FormatChecker()
        )
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except (jsonschema.SchemaError, TypeError, ValueError):
        return None  # a field schema the validator cannot read: the server checks it
    return None if error is None else error.message
