"""History repair: a conversation any backend accepts, whatever the model wrote earlier.

A malformed call in an earlier turn (a name no API allows, arguments that were not JSON, a
call whose result is missing, a result whose call is gone) would make a strict backend
reject every later request. Each is rewritten into its nearest valid form; nothing the
model or a tool said is dropped.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from farmhand.messages import Message, ToolCall, new_call_id

_NAME_OK = re.compile(r"^[A-Za-z0-9_:.\-]{1,64}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_:.\-]+")
NO_RESULT = "Error: this call was not run (no result was recorded for it)."


def repair_history(messages: Sequence[Message]) -> list[Message]:
    """Calls get valid names and ids; every call has exactly one result right after its
    turn; a result without its call becomes a user message that quotes it."""
    repaired: list[Message] = []
    # The last assistant turn's calls not answered yet: (the id the model gave, the call).
    open_calls: list[tuple[str, ToolCall]] = []
    for message in messages:
        if message.role != "tool" and open_calls:
            repaired += [_missing_result(c) for _, c in open_calls]
            open_calls = []
        if message.role == "assistant" and message.tool_calls:
            calls = _repaired_calls(message.tool_calls)
            repaired.append(dataclasses.replace(message, tool_calls=calls))
            open_calls = list(zip((c.id for c in message.tool_calls), calls, strict=True))
        elif message.role == "tool":
            match = next(
                (i for i, (id_, _) in enumerate(open_calls) if id_ == message.tool_call_id), None
            )
            if match is None:
                repaired.append(_orphan_result(message))
            else:
                call = open_calls.pop(match)[1]
                repaired.append(dataclasses.replace(message, tool_call_id=call.id, name=call.name))
        else:
            repaired.append(message)
    repaired += [_missing_result(c) for _, c in open_calls]
    return repaired


def _repaired_calls(calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
    seen: set[str] = set()
    fixed = []
    for call in calls:
        changes: dict[str, object] = {}
        if not _NAME_OK.match(call.name):
            changes["name"] = safe_tool_name(call.name)
        if not call.id or call.id in seen:
            changes["id"] = new_call_id()
        if call.parse_error and call.arguments:
            changes["arguments"] = {}
        repaired = dataclasses.replace(call, **changes) if changes else call  # type: ignore[arg-type]
        seen.add(repaired.id)
        fixed.append(repaired)
    return tuple(fixed)


def safe_tool_name(name: str) -> str:
    """A name every tool-calling API accepts, kept recognisable."""
    cleaned = _NAME_BAD_CHARS.sub("_", name).strip("_")[:64]
    return cleaned or "invalid_tool_call"


def _missing_result(call: ToolCall) -> Message:
    return Message("tool", NO_RESULT, tool_call_id=call.id, name=call.name)


def _orphan_result(message: Message) -> Message:
    label = message.name or "a tool"
    return Message.user(
        f"(Result from {label}, whose call is no longer in the conversation:)\n{message.content}"
    )
