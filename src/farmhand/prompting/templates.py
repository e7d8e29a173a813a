"""Render a model's own chat template (Hugging Face style jinja) into a prompt string."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from farmhand.errors import ModelError
from farmhand.messages import Message
from farmhand.tools.definition import ToolDefinition


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    # Templates expect Python's json.dumps spacing and unescaped non-ASCII, not jinja's
    # HTML-safe default.
    return json.dumps(value, ensure_ascii=False, indent=indent, default=_listed)


def _listed(value: Any) -> list[Any]:
    """What jinja's `map` and `select` give (a generator) is written as the list it yields."""
    if isinstance(value, Iterator):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=16)
def _compile(source: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env.from_string(source)


def message_to_template_dict(message: Message) -> dict[str, Any]:
    """The OpenAI-like dict chat templates read; tool arguments stay objects (as HF does)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        out["name"] = message.name
    return out


def render_chat_template(
    source: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition] = (),
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
    **extra: Any,
) -> str:
    return render_template_dicts(
        source,
        [message_to_template_dict(m) for m in messages],
        [t.to_openai() for t in tools] or None,
        bos_token=bos_token,
        eos_token=eos_token,
        add_generation_prompt=add_generation_prompt,
        **extra,
    )


def render_template_dicts(
    source: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None,
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
    **extra: Any,
) -> str:
    """Render messages and tools already in the OpenAI-like dicts templates read (fields the
    Message model does not carry, such as `reasoning_content`, included)."""
    try:
        template = _compile(source)
        return template.render(
            messages=list(messages),
            tools=list(tools) if tools else None,
            bos_token=bos_token,
            eos_token=eos_token,
            add_generation_prompt=add_generation_prompt,
            **extra,
        )
    except jinja2.TemplateError as exc:
        raise ModelError(f"the model's chat template failed to render: {exc}") from exc
