"""What a chat template's tool calls look like, found by diffing its renders.

The probe renders (see `probes`) differ in one thing each: no call vs one call gives the
calls' text; one call vs two the separator and which markers repeat per call; one argument
vs two the per-argument markers; a string vs a number value how values are written; content
with and without reasoning the reasoning tags. The one guess is JSON: text that parses as
JSON and holds the probe's name is a call written as JSON.

The result is a `Derived`: one of three shapes the derived parser reads (a whole call as
JSON; a tag carrying JSON arguments; a tag per argument), or a shape outside them, with a
note that says what was seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from farmhand.parsing.derived import probes as p
from farmhand.parsing.derived.markers import (
    common_suffix,
    is_special,
    shared_end,
    shared_start,
    split,
    strip,
    tokens,
)
from farmhand.parsing.derived.turn import (
    after_header,
    assistant_headers,
    content_markers,
    reasoning_tags,
    strip_reasoning,
)
from farmhand.parsing.scan import WHITESPACE

Shape = Literal["json_call", "tag_json_args", "tag_per_arg", "no_calls", "other"]
IN_SCOPE: tuple[Shape, ...] = ("json_call", "tag_json_args", "tag_per_arg")


@dataclass(frozen=True)
class Derived:
    """A template's tool-call format: its shape and the markers of each part.

    Markers are matched token by token with any whitespace between tokens; "" means the
    format has no such marker.
    """

    shape: Shape
    note: str  # what the analysis saw, for a person reading `farmhand parse --template`
    reasoning_start: str = ""
    reasoning_end: str = ""
    content_start: str = ""
    content_end: str = ""
    assistant_start: tuple[str, ...] = ()
    section_start: str = ""  # opens the run of calls, once
    section_end: str = ""
    call_start: str = ""  # opens each call, up to its name (or its JSON object)
    call_end: str = ""
    # json_call: the object's keys ("" name_key: the name is the object's only key).
    array: bool = False
    name_key: str = ""
    args_key: str = ""
    id_key: str = ""
    # Tag shapes: what ends the name, the call id's markers, what the arguments follow.
    name_end: str = ""
    id_start: str = ""
    id_end: str = ""
    header_is_id: bool = False  # the call's id is its whole header (`functions.NAME:0`)
    args_start: str = ""
    # tag_per_arg: the markers around each key and value.
    key_start: str = ""
    key_end: str = ""
    value_start: str = ""
    value_end: str = ""
    # The whitespace the template writes around a value, which is not part of it.
    value_lead: str = ""
    value_trail: str = ""

    @property
    def in_scope(self) -> bool:
        return self.shape in IN_SCOPE


@lru_cache(maxsize=32)
def analyze(template: str) -> Derived:
    """The tool-call format `template` writes (cached: templates are long, renders cost)."""
    renders = p.render_probes(template)
    reasoning = reasoning_tags(renders)
    starts = assistant_headers(renders, reasoning)
    content = content_markers(renders, starts[0] if starts else "", reasoning)
    common = Derived(
        "no_calls",
        "",
        reasoning_start=reasoning[0],
        reasoning_end=reasoning[1],
        content_start=content[0],
        content_end=content[1],
        assistant_start=starts,
    )
    base = renders.content if renders.content is not None else renders.empty
    if renders.one_call is None or base is None:
        why = p.call_render_error(template) or "it renders no assistant turn"
        return replace(
            common, shape="no_calls", note=f"the template cannot render a tool call: {why}"
        )
    first = split(base, renders.one_call).right
    if p.NAME_A not in first:
        return replace(
            common,
            shape="no_calls",
            note="the template does not write an assistant turn's tool calls",
        )
    first = strip_reasoning(after_header(first, starts), reasoning)
    shared = [t for t in tokens(content[0]) if is_special(t) and t in first]
    if shared:
        return replace(
            common,
            shape="other",
            note=f"calls and content are channels of one message ({shared[0]!r} in both),"
            " as in Harmony",
        )
    found = _json_holding(first, p.NAME_A)
    if found is not None:
        return _json_call(renders, first, found, common)
    return _tagged(renders, base, first, common)


def _json_holding(text: str, needle: str, start: int = 0) -> tuple[int, int, Any] | None:
    """The first JSON object or array in `text[start:]` that holds `needle` as a string or a
    key: (start, end, value)."""
    decoder = json.JSONDecoder()
    for i in range(start, len(text)):
        if text[i] not in "{[":
            continue
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            continue
        if _holds(value, needle):
            return i, end, value
    return None


def _holds(value: Any, needle: str) -> bool:
    if isinstance(value, str):
        return value == needle
    if isinstance(value, list):
        return any(_holds(v, needle) for v in value)
    if isinstance(value, dict):
        return needle in value or any(_holds(v, needle) for v in value.values())
    return False


def _json_call(
    renders: p.Probes, first: str, found: tuple[int, int, Any], common: Derived
) -> Derived:
    start, end, value = found
    array = isinstance(value, list)
    call = value[0] if array and value else value
    if not isinstance(call, dict):
        return replace(common, shape="other", note=f"the call's JSON is not an object: {first!r}")
    if p.NAME_A in call:
        name_key, args_key = "", p.NAME_A
    else:
        name_key = next((k for k, v in call.items() if v == p.NAME_A), "")
        args_key = next((k for k, v in call.items() if _holds(v, p.VALUE_A)), "")
        if not name_key or not args_key:
            return replace(
                common,
                shape="other",
                note=f"the call's JSON nests its name or arguments: {first!r}",
            )
    id_key = next((k for k, v in call.items() if v in (p.ID_A, "0", 0) and k != name_key), "")
    section_start, section_end = strip(first[:start]), strip(first[end:])
    call_start = call_end = ""
    if renders.two_calls is not None and not array:
        # Markers each call repeats are per call, not the section's.
        if section_start and renders.two_calls.count(section_start) > 1:
            call_start, section_start = section_start, ""
        if section_end and renders.two_calls.count(section_end) > 1:
            call_end, section_end = section_end, ""
    shape = "a JSON array of call objects" if array else "a JSON call object"
    keys = f"name in {name_key!r}" if name_key else "the name is the object's key"
    return replace(
        common,
        shape="json_call",
        note=f"each call is {shape} ({keys}, arguments in {args_key!r})",
        section_start=section_start,
        section_end=section_end,
        call_start=call_start,
        call_end=call_end,
        array=array,
        name_key=name_key,
        args_key="" if not name_key else args_key,
        id_key=id_key,
    )


def _tagged(renders: p.Probes, base: str, first: str, common: Derived) -> Derived:
    name_at = first.index(p.NAME_A)
    after_name = name_at + len(p.NAME_A)
    per_arg: dict[str, str] = {}
    if _json_holding(first, p.KEY_A, after_name) is None:
        found = _per_arg(renders, base, first, after_name)
        if found is None:
            return replace(
                common, shape="other", note=f"neither JSON nor a tag per argument: {first!r}"
            )
        per_arg = found
    header, args_end = _call_parts(first, name_at, p.NAME_A, per_arg)
    before, after = first[:name_at], first[args_end:]
    call_start, section_start, call_end, section_end = before, "", after, ""
    second = _second_call(renders, base, per_arg)
    if second is not None:
        between, second_header = second
        call_start = shared_end(before, between)
        section_start = before[: len(before) - len(call_start)]
        call_end = shared_start(after, between)
        section_end = after[len(call_end) :]
    else:
        between, second_header = "", None
    opener = tokens(common.assistant_start[0])[-1:] if common.assistant_start else ()
    if not strip(before) and opener and strip(between).endswith(opener[0]):
        return replace(
            common,
            shape="other",
            note=f"the prompt opens every reply with the calls' marker {opener[0]!r}: the first"
            " word says whether a call or text follows (Functionary v3.2's routing)",
        )
    name_end, args_start, id_start, id_end, header_is_id = _header(header, second_header)
    if not strip(name_end) and not per_arg:
        return replace(common, shape="other", note=f"nothing ends the call's name: {first!r}")
    shape: Shape = "tag_per_arg" if per_arg else "tag_json_args"
    what = "a tag per argument" if per_arg else "a tag, then the arguments as JSON"
    return replace(
        common,
        shape=shape,
        note=f"each call is {what}",
        section_start=strip(section_start),
        section_end=strip(section_end),
        call_start=strip(call_start),
        call_end=strip(call_end),
        name_end=strip(name_end),
        args_start=strip(args_start),
        id_start=strip(id_start),
        id_end=strip(id_end),
        header_is_id=header_is_id,
        key_start=strip(per_arg.get("key_start", "")),
        key_end=strip(per_arg.get("key_end", "")),
        value_start=strip(per_arg.get("value_start", "")),
        value_end=strip(per_arg.get("value_end", "")),
        value_lead=per_arg.get("value_lead", ""),
        value_trail=per_arg.get("value_trail", ""),
    )


def _call_parts(text: str, name_at: int, name: str, per_arg: dict[str, str]) -> tuple[str, int]:
    """For the call whose name is at `name_at`: its header (between the name and the
    arguments) and where its arguments end."""
    after_name = name_at + len(name)
    if not per_arg:
        found = _json_holding(text, p.KEY_A, after_name)
        if found is None:
            return text[after_name:], len(text)
        return text[after_name : found[0]], found[1]
    key_at = text.find(p.KEY_A, after_name)
    value_at = text.find(p.VALUE_A if name == p.NAME_A else p.VALUE_B, key_at)
    header = text[after_name : key_at - len(per_arg["key_start"])]
    value_end = value_at + len(p.VALUE_A) + len(per_arg["value_end_raw"])
    return header, value_end


def _second_call(renders: p.Probes, base: str, per_arg: dict[str, str]) -> tuple[str, str] | None:
    """In the two-call render: the text between the first call's arguments and the second
    call's name, and the second call's header."""
    if renders.two_calls is None:
        return None
    both = split(base, renders.two_calls).right
    at_a, at_b = both.find(p.NAME_A), both.find(p.NAME_B)
    if at_a < 0 or at_b < at_a:
        return None
    _, first_end = _call_parts(both, at_a, p.NAME_A, per_arg)
    header, _ = _call_parts(both, at_b, p.NAME_B, per_arg)
    if first_end > at_b:
        return None
    return both[first_end:at_b], header


def _header(header: str, second: str | None) -> tuple[str, str, str, str, bool]:
    """Between a call's name and its arguments: (what ends the name, what the arguments
    follow, the id's start and end markers, whether the header is the id)."""
    if p.ID_A in header:
        at = header.index(p.ID_A)
        id_start, id_end = header[:at], header[at + len(p.ID_A) :]
        return id_start, id_end, id_start, id_end, False
    if second is not None and second != header:
        # The header differs per call (an index, `:0` then `:1`): the name ends where the
        # headers first differ, the arguments follow what they share at the end.
        return shared_start(header, second), shared_end(header, second), "", "", True
    return header, "", "", "", False


def _per_arg(renders: p.Probes, base: str, first: str, after_name: int) -> dict[str, str] | None:
    """The per-argument markers (as rendered: `value_end_raw` keeps its whitespace)."""
    key_at = first.find(p.KEY_A, after_name)
    value_at = first.find(p.VALUE_A, key_at)
    if key_at < 0 or value_at < 0 or renders.two_args is None:
        return None
    two = split(base, renders.two_args).right
    one_value = two.find(p.VALUE_A)
    second_key = two.find(p.KEY_B)
    if one_value < 0 or second_key < one_value:
        return None
    between = two[one_value + len(p.VALUE_A) : second_key]  # value end, key start
    key_start = shared_end(first[after_name:key_at], between)
    value_end = shared_start(first[value_at + len(p.VALUE_A) :], between)
    if not strip(key_start) or not strip(value_end):
        return None  # keys not in tags of their own (Gemma 4's `{key:value}`)
    key_end, value_start = first[key_at + len(p.KEY_A) : value_at], ""
    number = split(base, renders.number).right if renders.number is not None else ""
    number_at = number.find(str(p.NUMBER))
    if number_at > 0:
        other = number[number.find(p.KEY_A) + len(p.KEY_A) : number_at]
        key_end_full = key_end
        if other != key_end:
            # The markup between key and value depends on the value's type
            # (`string="true">` / `string="false">`): the key ends where the two first
            # differ, the value starts after what they share at the end.
            # (The value's start is a tag's tail, `">`, so it is not cut to whole tokens.)
            key_end = shared_start(key_end, other)
            value_start = other[len(other) - common_suffix(key_end_full, other) :].lstrip(
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
            )
    markers = {
        "value_lead": _trailing_space(key_end),
        "value_trail": value_end[: len(value_end) - len(value_end.lstrip(WHITESPACE))],
        "value_end_raw": value_end,
        "key_start": key_start,
        "key_end": key_end,
        "value_start": value_start,
        "value_end": value_end,
    }
    return markers


def _trailing_space(text: str) -> str:
    return text[len(text.rstrip(WHITESPACE)) :]
