"""The generic tool format, for a chat template that renders no tools (llama.cpp's generic
handler does the same for templates it does not know).

A template that drops the tools it is given (`prompting.template_tools.renders_tools`)
leaves the model blind to them. The embedded provider then:

- describes the tools in the system prompt (`tools_block`), with the one reply shape it
  reads back: a JSON object `{"tool_call": {"name", "arguments"}}`, `{"tool_calls": [...]}`
  or `{"response": "..."}` (`parsing/generic.py` reads it, streaming the response as text);
- rewrites the history into turns such a template renders (`generic_history`): earlier
  calls become that JSON in the assistant's text, and tool results a user turn;
- constrains a turn that must call (tool_choice required or named) to that JSON with
  the tools' own argument schemas (`calls_schema`), as llama.cpp's grammar does.

When it applies (`generic_family`): the template renders no tools and writes no call
format of its own (what `detect_family` finds in it alone reads this envelope: generic, or
Gemma's, which only adds its turn header), or `tool_parser` names such a family. A
template with a call format of its own, or a `tool_parser` of another family, keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from farmhand.messages import Message
from farmhand.parsing.generic import GenericParser
from farmhand.parsing.registry import detect_family, family_class, resolve_family
from farmhand.prompting.template_tools import renders_tools
from farmhand.tools.definition import ToolDefinition

BLOCK_HEAD = "These tools are available. Their definitions, one JSON object per line:\n"
BLOCK_TAIL = (
    "\nWrite your reply as a single JSON object and nothing else, in one of these forms:\n"
    '- to call one tool: {"tool_call": {"name": "<tool name>", "arguments": {<arguments>}}}\n'
    '- to call several tools at once: {"tool_calls": [{"name": "<tool name>", "arguments":'
    " {<arguments>}}, ...]}\n"
    '- to answer without a tool: {"response": "<your answer>"}\n'
    "The arguments must follow the tool's parameters schema."
)


def generic_family(template: str, tool_parser: str | None) -> str | None:
    """The family to read calls in when `template` gets the generic format, else None: it
    renders no tools, and neither `tool_parser` nor the template itself names a format of
    another kind. The model's name is no evidence here: a Qwen given a template without
    tools has no call format to follow."""
    chosen = resolve_family(tool_parser) if tool_parser else detect_family(template)
    if not issubclass(family_class(chosen), GenericParser) or renders_tools(template):
        return None
    return chosen


def tools_block(tools: Sequence[ToolDefinition]) -> str:
    """The system-prompt text describing `tools` and the reply's JSON shapes."""
    lines = "".join(json.dumps(t.to_openai(), ensure_ascii=False) + "\n" for t in tools)
    return BLOCK_HEAD + lines + BLOCK_TAIL


def generic_history(messages: Sequence[Message]) -> list[Message]:
    """The conversation as turns a template without tools renders: an assistant's calls as
    its `tool_calls` JSON, consecutive tool results as one user turn of `tool_response`
    objects (which also keeps user and assistant turns alternating, as some templates
    insist)."""
    out: list[Message] = []
    results: list[str] = []
    for message in messages:
        if message.role == "tool":
            response = {"tool": message.name, "content": message.content}
            results.append(json.dumps({"tool_response": response}, ensure_ascii=False))
            continue
        if results:
            out.append(Message.user("\n".join(results)))
            results = []
        if message.role == "assistant" and message.tool_calls:
            calls = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
            written = json.dumps({"tool_calls": calls}, ensure_ascii=False)
            text = f"{message.content}\n{written}" if message.content else written
            out.append(Message("assistant", text, reasoning=message.reasoning))
        else:
            out.append(message)
    if results:
        out.append(Message.user("\n".join(results)))
    return out


def calls_schema(tools: Sequence[ToolDefinition], *, parallel: bool) -> dict[str, Any]:
    """The JSON Schema of a reply that calls `tools` in the generic format: one
    `tool_call`, or (parallel) a `tool_calls` list of one or more."""
    call: dict[str, Any] = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }
    key, value = "tool_call", call
    if parallel:
        key, value = "tool_calls", {"type": "array", "items": call, "minItems": 1}
    return {
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": False,
    }
