"""A request's `chat_template_kwargs` (llama-server's field): variables for the chat template's
render, such as `{"enable_thinking": false}`.

They come over HTTP, so they are hostile: only the values pass, never template text (a
request cannot set `chat_template`: the template is the operator's); they are plain JSON,
bounded in keys, size and depth before anything is rendered; a name may not shadow what
farmhand itself hands the template (the conversation, the tools, the special tokens) or the
functions the template calls; and the render is jinja's immutable sandbox
(`prompting/templates.py`), where a template cannot call a method that changes them or
reach a Python attribute through them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from farmhand.errors import RequestError

FIELD = "chat_template_kwargs"
MAX_KEYS = 32
MAX_BYTES = 16 * 1024  # as JSON
MAX_DEPTH = 8  # the object itself is level 1
RESERVED = frozenset(
    {
        # What farmhand renders the template with.
        "messages",
        "tools",
        "bos_token",
        "eos_token",
        "add_generation_prompt",
        "builtin_tools",
        # The functions templates call: farmhand's and jinja's own.
        "raise_exception",
        "strftime_now",
        "range",
        "dict",
        "lipsum",
        "cycler",
        "joiner",
        "namespace",
    }
)


def template_kwargs(value: object, param: str = FIELD) -> dict[str, Any] | None:
    """`value` (a request's `chat_template_kwargs`) once it is within bounds; None when it is
    left out; RequestError (a 400 naming `param`) saying what is wrong."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RequestError(
            f'{param} must be an object of template variables, e.g. {{"enable_thinking": false}}',
            param=param,
        )
    if len(value) > MAX_KEYS:
        raise RequestError(f"{param} has {len(value)} keys; at most {MAX_KEYS}", param=param)
    for key in value:
        if not key.isidentifier():
            raise RequestError(
                f"{param} key {key[:64]!r} is not a name a template can read; use letters,"
                " digits and _ (not starting with a digit)",
                param=param,
            )
        if key in RESERVED:
            raise RequestError(
                f"{param} may not set {key!r}: farmhand sets it for the template (the"
                " conversation, tools and special tokens come from the request's own fields)",
                param=param,
            )
    if _depth(value) > MAX_DEPTH:
        raise RequestError(f"{param} nests deeper than {MAX_DEPTH} levels", param=param)
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > MAX_BYTES:
        raise RequestError(f"{param} is {size} bytes as JSON; at most {MAX_BYTES}", param=param)
    return value


def _depth(value: object) -> int:
    """Levels of nesting of a JSON value, counted without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def render_variables(kwargs: Mapping[str, Any] | None, *, think: bool | None) -> dict[str, Any]:
    """The template variables of one turn: the request's kwargs (names farmhand sets left
    out, whoever built the settings), and `enable_thinking` when `think` says so (the
    request's own switch wins over a kwarg)."""
    variables = {k: v for k, v in (kwargs or {}).items() if k not in RESERVED}
    if think is not None:
        variables["enable_thinking"] = think
    return variables


TEMPLATE_REFUSED = (
    "chat_template cannot be set by a request: a chat template is code the server runs, so"
    " only its operator sets it (a model's chat_template in the config, or"
    " --chat-template-file); send chat_template_kwargs to set the template's variables"
)


def request_template_kwargs(chat_template: object, kwargs: object) -> dict[str, Any] | None:
    """A request's `chat_template_kwargs` (`template_kwargs`); RequestError for a request
    that sends a `chat_template` of its own (llama-server takes one; farmhand never does)."""
    if chat_template is not None:
        raise RequestError(TEMPLATE_REFUSED, param="chat_template")
    return template_kwargs(kwargs)
