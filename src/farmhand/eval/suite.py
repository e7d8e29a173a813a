"""Eval suites: cases read from JSONL, one JSON object per line.

A case is one model turn to judge: the conversation so far, the tools offered, and what the
next assistant turn must do. Every line is either a case or a named tool set:

    {"toolset": "weather", "tools": [...]}                      # reusable as "tools": "@weather"
    {"id": "paris", "category": "single", "prompt": "Weather in Paris?", "tools": "@weather",
     "expected": [{"name": "get_weather", "arguments": {"city": ["Paris", "Paris, France"]}}]}
    {"id": "joke", "category": "no_call", "prompt": "Tell me a joke.", "tools": "@weather",
     "expected": []}

Case keys:
- `prompt` (a user message, with an optional `system`) or `messages` (OpenAI chat shape:
  roles system/user/assistant/tool; assistant `tool_calls` with `function.arguments` as an
  object or a JSON string; tool messages with `tool_call_id`).
- `tools`: a list in any format farmhand reads (OpenAI, Anthropic, Bedrock, Google, MCP),
  a `file://` path (relative to the suite file), or `@name` of an earlier toolset line.
- `expected`: the calls the turn must make, in any order; `[]` means "answer, do not call".
  Each call is `{"name", "arguments"}` where every argument maps to a list of acceptable
  values (a bare non-list value is a list of one); `null` among them means the argument may
  be left out. Arguments the list does not name must not appear, unless the call says
  `"allow_extra": true`. Strings match ignoring case, spaces and `,./-_*^` (as BFCL does);
  numbers match numerically (2 == 2.0).
- `answer_contains` (optional, with `expected: []`): the answer must contain one of these
  strings (case-insensitive), e.g. a fact from the tool result of a follow-up case.
- `id` (default `<file>:<line>`), `category` (default "default"), `tool_choice` (default auto).

Errors name the file, the line and what to fix; a suite that loads is runnable.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from farmhand.errors import ConfigError
from farmhand.eval.cases import EvalCase, ExpectedCall, Suite
from farmhand.messages import Message, ToolCall
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import tool_choice_from_openai
from farmhand.tools.loading import load_tools

__all__ = ["BUILTIN", "EvalCase", "ExpectedCall", "Suite", "load_suite", "parse_suite"]

BUILTIN = "builtin"
_CASE_KEYS = {
    "id", "category", "prompt", "system", "messages", "tools", "expected", "answer_contains",
    "tool_choice",
}  # fmt: skip
_CALL_KEYS = {"name", "arguments", "allow_extra"}


def load_suite(source: str) -> Suite:
    """`builtin` (the suite farmhand ships), `bfcl:...` (`eval/bfcl.py`), or a JSONL file."""
    if source.startswith("bfcl:"):
        from farmhand.eval.bfcl import load_bfcl  # loads the BFCL files only when asked

        return load_bfcl(source.removeprefix("bfcl:"))
    if source == BUILTIN:
        text = resources.files("farmhand.eval").joinpath("builtin.jsonl").read_text("utf-8")
        return parse_suite(text.splitlines(), BUILTIN)
    path = Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"suite file {source} not found; give a JSONL file, `builtin`, or bfcl:CATEGORY"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read suite file {source}: {exc}") from None
    return parse_suite(text.splitlines(), path.stem, base_dir=path.parent, where=str(path))


def parse_suite(
    lines: Iterable[str], name: str, *, base_dir: Path | None = None, where: str | None = None
) -> Suite:
    toolsets: dict[str, tuple[ToolDefinition, ...]] = {}
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        at = f"{where or name}:{number}"
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ConfigError("expected a JSON object")
            if "toolset" in data:
                toolsets[_text(data, "toolset")] = _tools(data.get("tools"), toolsets, base_dir)
                continue
            case = _case(data, f"{name}:{number}", toolsets, base_dir)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{at}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        except ConfigError as exc:
            raise ConfigError(f"{at}: {exc}") from None
        if case.id in seen:
            raise ConfigError(f"{at}: case id {case.id!r} is used twice; ids must be unique")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise ConfigError(f"{where or name}: the suite has no cases")
    return Suite(name, tuple(cases))


def _case(
    data: dict[str, Any],
    default_id: str,
    toolsets: Mapping[str, tuple[ToolDefinition, ...]],
    base_dir: Path | None,
) -> EvalCase:
    unknown = set(data) - _CASE_KEYS
    if unknown:
        known = ", ".join(sorted(_CASE_KEYS))
        raise ConfigError(f"unknown key(s) {', '.join(sorted(unknown))}; a case has {known}")
    if "expected" not in data or not isinstance(data["expected"], list):
        raise ConfigError('`expected` is required: a list of calls, or [] for "no call"')
    answer = data.get("answer_contains", [])
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
        raise ConfigError("`answer_contains` must be a string or a list of strings")
    choice = tool_choice_from_openai(data.get("tool_choice", "auto"))
    tools = _tools(data.get("tools", []), toolsets, base_dir)
    expected = tuple(_expected_call(c, i) for i, c in enumerate(data["expected"]))
    offered = {t.name for t in tools}
    for call in expected:
        if call.name not in offered:
            raise ConfigError(
                f"expected call {call.name!r} is not one of the case's tools"
                f" ({', '.join(sorted(offered)) or 'none'})"
            )
    return EvalCase(
        id=str(data.get("id") or default_id),
        category=str(data.get("category") or "default"),
        messages=tuple(_conversation(data)),
        tools=tools,
        expected=expected,
        answer_contains=tuple(answer),
        tool_choice=choice,
    )


def _conversation(data: Mapping[str, Any]) -> list[Message]:
    if ("prompt" in data) == ("messages" in data):
        raise ConfigError("give either `prompt` (a user message) or `messages`, not both")
    if "prompt" in data:
        system = [Message.system(_text(data, "system"))] if data.get("system") else []
        return [*system, Message.user(_text(data, "prompt"))]
    items = data["messages"]
    if not isinstance(items, list) or not items:
        raise ConfigError("`messages` must be a non-empty list of chat messages")
    names: dict[str, str] = {}
    messages = [_message(item, f"messages[{i}]", names) for i, item in enumerate(items)]
    if messages[-1].role == "assistant":
        raise ConfigError("`messages` ends with an assistant turn; the last turn is the model's")
    return messages


def _message(item: object, where: str, names: dict[str, str]) -> Message:
    if not isinstance(item, dict) or item.get("role") not in (
        "system",
        "user",
        "assistant",
        "tool",
    ):
        raise ConfigError(f"{where} must be an object with role system, user, assistant or tool")
    content = item.get("content") or ""
    if not isinstance(content, str):
        raise ConfigError(f"{where}.content must be a string")
    role = item["role"]
    if role == "assistant":
        raw_calls = item.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise ConfigError(f"{where}.tool_calls must be a list")
        calls = tuple(_past_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(raw_calls))
        names.update((call.id, call.name) for call in calls)
        return Message.assistant(content, calls)
    if role == "tool":
        call_id = item.get("tool_call_id")
        if not isinstance(call_id, str) or call_id not in names:
            raise ConfigError(f"{where}.tool_call_id must be the id of an earlier assistant call")
        return Message("tool", content, tool_call_id=call_id, name=names[call_id])
    return Message(role, content)


def _past_call(item: object, where: str) -> ToolCall:
    function = item.get("function", item) if isinstance(item, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ConfigError(f'{where} must be {{"id", "function": {{"name", "arguments"}}}}')
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise ConfigError(f"{where}.function.arguments is not valid JSON") from None
    if not isinstance(arguments, dict):
        raise ConfigError(f"{where}.function.arguments must be an object")
    call_id = item.get("id") if isinstance(item, dict) else None
    if not isinstance(call_id, str) or not call_id:
        raise ConfigError(f"{where}.id is required (tool messages answer it)")
    return ToolCall(function["name"], arguments, id=call_id)


def _tools(
    value: object,
    toolsets: Mapping[str, tuple[ToolDefinition, ...]],
    base_dir: Path | None,
) -> tuple[ToolDefinition, ...]:
    if isinstance(value, str) and value.startswith("@"):
        if value[1:] not in toolsets:
            known = ", ".join(toolsets) or "none yet"
            raise ConfigError(
                f"tools {value!r} names no earlier toolset line (defined: {known});"
                ' add {"toolset": "NAME", "tools": [...]} above this case'
            )
        return toolsets[value[1:]]
    if isinstance(value, list) and not value:
        return ()
    if isinstance(value, (str, list)):
        return tuple(load_tools(value, base_dir=base_dir))
    raise ConfigError("`tools` must be a list of tools, a file:// path or @toolset")


def _expected_call(item: object, index: int) -> ExpectedCall:
    where = f"expected[{index}]"
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        raise ConfigError(f'{where} must be {{"name": ..., "arguments": {{...}}}}')
    unknown = set(item) - _CALL_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    arguments = item.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ConfigError(f"{where}.arguments must be an object of name -> acceptable values")
    acceptable = {
        key: tuple(values) if isinstance(values, list) else (values,)
        for key, values in arguments.items()
    }
    for key, values in acceptable.items():
        if not values:
            raise ConfigError(f"{where}.arguments.{key} lists no acceptable value")
    return ExpectedCall(item["name"], acceptable, bool(item.get("allow_extra", False)))


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"`{key}` must be a non-empty string")
    return value
