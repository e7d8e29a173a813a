"""What the analysis of a template found, in words a person can check against the template.

`farmhand parse --template FILE` prints this when no family module knows the template, so a
user can see why a call was (or was not) read: the shape, and each marker as it must appear.
"""

from __future__ import annotations

from farmhand.parsing.derived.analysis import Derived

_SHAPES = {
    "json_call": "a whole call as JSON",
    "tag_json_args": "a tag with the name, then the arguments as JSON",
    "tag_per_arg": "a tag with the name, then a tag per argument",
    "no_calls": "no tool calls",
    "other": "a format the derived parser does not read",
}


def explain(derived: Derived) -> list[str]:
    """Lines describing `derived`: the shape first, then each marker that is set."""
    lines = [f"shape: {_SHAPES[derived.shape]} ({derived.note})"]
    if not derived.in_scope:
        lines.append("farmhand reads this model's output with the generic parser")
    rows = [
        ("the calls open with", derived.section_start),
        ("each call opens with", derived.call_start),
        *(_name_rows(derived) if derived.in_scope else []),
        ("each call ends with", derived.call_end),
        ("the calls end with", derived.section_end),
        ("reasoning opens with", derived.reasoning_start),
        ("reasoning ends with", derived.reasoning_end),
        ("content opens with", derived.content_start),
        ("content ends with", derived.content_end),
        ("the reply follows", " or ".join(map(repr, derived.assistant_start))),
    ]
    lines += [f"{label}: {_shown(value)}" for label, value in rows if value]
    return lines


def _name_rows(derived: Derived) -> list[tuple[str, str]]:
    if derived.shape == "json_call":
        if not derived.name_key:
            return [
                ("each call is", '{"NAME": {ARGUMENTS}}' + (" in a JSON array" * derived.array))
            ]
        fields = [f'"{derived.name_key}": NAME', f'"{derived.args_key}": {{ARGUMENTS}}']
        if derived.id_key:
            fields.insert(0, f'"{derived.id_key}": ID')
        return [
            ("each call is", "{" + ", ".join(fields) + "}" + " in a JSON array" * derived.array)
        ]
    rows = [("the name ends at", derived.name_end)]
    if derived.id_start:
        rows.append(("its id", f"{derived.id_start}ID{derived.id_end}"))
    if derived.header_is_id:
        rows.append(("its id", "the call's header, as written"))
    if derived.shape == "tag_json_args":
        rows.append(("the JSON arguments follow", derived.args_start or "the name"))
    else:
        value = f"{derived.value_start}VALUE{derived.value_end}"
        rows.append(("each argument", f"{derived.key_start}KEY{derived.key_end}{value}"))
        rows.append(("values", "text as written, typed by the tool's JSON Schema"))
    return rows


def _shown(marker: str) -> str:
    """A marker with its whitespace visible."""
    return marker if marker.strip() == marker and "\n" not in marker else repr(marker)
