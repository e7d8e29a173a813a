"""Rendering a chat template with probe conversations that differ in one thing.

Each probe is a conversation (a user turn, then an assistant turn) whose assistant turn
varies: plain content, one call, two calls, two arguments, a number value, reasoning. The
renders are diffed by `analysis`; the names and values here are chosen to occur nowhere in a
template, so finding them in a render is unambiguous.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from farmhand.errors import ModelError
from farmhand.prompting.templates import render_template_dicts

USER = "USER_PROBE_MESSAGE"
CONTENT = "CONTENT_PROBE_TEXT"
REASONING = "REASONING_PROBE_TEXT"
NAME_A = "probe_alpha"
NAME_B = "probe_beta"
KEY_A = "first_probe_arg"
KEY_B = "second_probe_arg"
VALUE_A = "VALUE_PROBE_ONE"
VALUE_B = "VALUE_PROBE_TWO"
NUMBER = 4242
# Nine alphanumerics: Mistral's templates refuse any other call id.
ID_A = "call00001"
ID_B = "call00002"

_PARAMETERS = {
    "type": "object",
    "properties": {KEY_A: {"type": "string"}, KEY_B: {"type": "string"}},
    "required": [KEY_A],
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": name, "description": "A probe.", "parameters": _PARAMETERS},
    }
    for name in (NAME_A, NAME_B)
]


@dataclass(frozen=True)
class Probes:
    """The renders analysis reads (None where the template refused that probe)."""

    empty: str | None  # the assistant turn with no content and no call
    content: str | None
    one_call: str | None
    two_calls: str | None
    two_args: str | None
    number: str | None  # one call whose value is a number
    reasoning: str | None  # content with reasoning_content, thinking enabled
    reasoning_blocks: str | None  # the same as content blocks (Mistral's "thinking" chunk)
    call_reasoning: str | None  # one call with reasoning_content
    prompt_thinking: str | None  # generation prompt, thinking enabled
    prompt_plain: str | None  # generation prompt, thinking disabled
    history: str | None  # the user turn alone, no generation prompt


def _call(name: str, call_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": dict(arguments)},
    }


def _assistant(
    content: str | list[dict[str, str]] = "", *calls: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def _render(template: str, assistant: dict[str, Any] | None, **extra: Any) -> str | None:
    """The render, or None if the template refuses it. A turn with calls is tried as
    templates variously expect it: arguments as objects or as JSON text, content "" or
    null; the first render that writes the call (its name once more than without it) wins."""
    calls = assistant.get("tool_calls") if assistant is not None else None
    if assistant is None or not calls:
        return _try_render(template, assistant, **extra)
    as_text = [
        {**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
        for c in calls
    ]
    without = _try_render(template, {**assistant, "tool_calls": []}, **dict(extra)) or ""
    first = None
    for variant in (calls, as_text):
        for content in (assistant["content"], assistant["content"] or None):
            rendered = _try_render(
                template, {**assistant, "content": content, "tool_calls": variant}, **dict(extra)
            )
            if rendered is not None and rendered.count(NAME_A) > without.count(NAME_A):
                return rendered
            first = first or rendered
    return first


def _try_render(template: str, assistant: dict[str, Any] | None, **extra: Any) -> str | None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    if assistant is not None:
        messages.append(assistant)
    generation = extra.pop("generation", True)
    try:
        return render_template_dicts(
            template,
            messages,
            TOOLS,
            add_generation_prompt=assistant is None and generation,
            **extra,
        )
    except ModelError:
        return None
    except Exception:  # a template is code: any failure of it means "cannot tell"
        return None


def call_render_error(template: str) -> str:
    """Why `template` refuses to render a turn with a call ("" if it does not)."""
    call = _call(NAME_A, ID_A, {KEY_A: VALUE_A})
    messages = [{"role": "user", "content": USER}, _assistant("", call)]
    try:
        render_template_dicts(template, messages, TOOLS, add_generation_prompt=False)
    except Exception as exc:  # a template is code: any failure is its answer
        return str(exc)
    return ""


def render_probes(template: str) -> Probes:
    """Render every probe of `template` (a probe the template cannot render is None)."""
    one = _call(NAME_A, ID_A, {KEY_A: VALUE_A})
    two = _call(NAME_B, ID_B, {KEY_A: VALUE_B})
    return Probes(
        empty=_render(template, _assistant("")),
        content=_render(template, _assistant(CONTENT)),
        one_call=_render(template, _assistant("", one)),
        two_calls=_render(template, _assistant("", one, two)),
        two_args=_render(
            template, _assistant("", _call(NAME_A, ID_A, {KEY_A: VALUE_A, KEY_B: VALUE_B}))
        ),
        number=_render(template, _assistant("", _call(NAME_A, ID_A, {KEY_A: NUMBER}))),
        reasoning=_render(
            template, _assistant(CONTENT, reasoning_content=REASONING), enable_thinking=True
        ),
        reasoning_blocks=_render(
            template,
            _assistant(
                [{"type": "thinking", "thinking": REASONING}, {"type": "text", "text": CONTENT}]
            ),
            enable_thinking=True,
        ),
        call_reasoning=_render(
            template, _assistant("", one, reasoning_content=REASONING), enable_thinking=True
        ),
        prompt_thinking=_render(template, None, enable_thinking=True),
        prompt_plain=_render(template, None, enable_thinking=False),
        history=_render(template, None, generation=False),
    )
