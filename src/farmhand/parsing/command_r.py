"""Command R7B / Command A tool calls, and Command R+'s `Action:` list.

Command R7B and Command A (Cohere2): `<|START_THINKING|>` reasoning, then a response or an
action.

    <|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "f", "parameters": {...}}, ...
    ]<|END_ACTION|>
    <|START_RESPONSE|>text<|END_RESPONSE|>

The response tags (`<|START_TEXT|>`/`<|END_TEXT|>` in Command A) are dropped from the text;
the `tool_call_id` is kept as the call's id.
Inside an action everything is a call: an object that cannot be read becomes a call with a
parse error, so the model is told. A single object without the list around it is accepted.

Command R+ writes `Action:` and the same list, without ids, in a ```json fence:

    Action:
    ```json
    [{"tool_name": "f", "parameters": {...}}]
    ```

There the list's end is found by reading the JSON (a fence inside a string argument does not
end it); `Action:` not followed by a list is text, and the turn tokens are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, ClassVar

from farmhand.messages import ToolCall
from farmhand.parsing.base import CursorParser, ParserOptions, call_from_object
from farmhand.parsing.broken import cut_off, not_a_call_object, unreadable
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import feed_from, feed_until

START_ACTION = "<|START_ACTION|>"
END_ACTION = "<|END_ACTION|>"
START_RESPONSE = "<|START_RESPONSE|>"
END_RESPONSE = "<|END_RESPONSE|>"
TEXT_MARKERS = (START_ACTION, START_RESPONSE, END_RESPONSE, "<|START_TEXT|>", "<|END_TEXT|>")
ACTION = "Action:"
TURN_TOKENS = ("<|START_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>")
FENCE = "```"
_ACTION_LIST = re.compile(r"\s*(?:```(?:json)?\s*)?\[")
_ACTION_SO_FAR = re.compile(r"\s*(?:`{1,2}|```(?:j(?:s(?:o(?:n)?)?)?)?\s*)?")
_ACTION_LIMIT = 64
STOPS = (END_ACTION,)

_STRING = r'"(?:[^"\\]|\\.)*"'
_ID = r'"tool_call_id"\s*:\s*(?:"(?P<id>(?:[^"\\]|\\.)*)"|-?\d+)\s*,\s*'
_ANY_ID = r'"tool_call_id"\s*:\s*(?:' + _STRING + r"|-?\d+)\s*,\s*"
NAME = re.compile(r"\s*\{\s*(?:" + _ID + r')?"tool_name"\s*:\s*"(?P<name>(?:[^"\\]|\\.)*)"')
ARGS = re.compile(
    r"\s*\{\s*(?:" + _ANY_ID + r')?"tool_name"\s*:\s*' + _STRING
    + r"\s*,\s*(?:" + _ANY_ID + r')?"parameters"\s*:'
)  # fmt: skip
_CALL_OBJECT = '{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}'
_WRITE_IT_WHOLE = "write the whole call, then <|END_ACTION|>"


class CommandR7BParser(CursorParser):
    family = "command_r7b"
    think_open = "<|START_THINKING|>"
    think_close = "<|END_THINKING|>"
    assistant_start = ("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",)
    # What ends an action even inside an unfinished call (special tokens: never in JSON).
    action_stops: ClassVar[tuple[str, ...]] = STOPS
    action_end: ClassVar[str] = END_ACTION

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | action | list | object | broken | end | after
        self._reader = CallObjectReader(NAME, ARGS)

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_marker(TEXT_MARKERS, final)
        if marker == START_ACTION:
            self._mode = "action"
        return marker is not None

    def _in_action(self, final: bool) -> bool:
        """Just after `<|START_ACTION|>`: the list of calls (or one call without a list)."""
        if not self._skip_whitespace():
            return False
        if self._starts("["):
            self._at += 1
            self._mode = "list"
        elif self._starts("{"):
            self._mode = "list"
        elif self._starts(END_ACTION):
            self._mode = "end"  # an empty action
        elif self._may_become(END_ACTION) and not final:
            return False
        else:
            self._mode = "broken"
        return True

    def _in_list(self, final: bool) -> bool:
        """Between the calls of an action."""
        if not self._skip_whitespace():
            return False
        if self._starts("{"):
            self._reader = CallObjectReader(NAME, ARGS)
            self._mode = "object"
        elif self._starts(","):
            self._at += 1
        elif self._starts("]"):
            self._at += 1
            self._mode = "end"
        elif self._starts(END_ACTION):
            self._mode = "end"  # the list was not closed
        elif self._may_become(END_ACTION) and not final:
            return False
        else:
            self._mode = "broken"
        return True

    def _in_object(self, final: bool) -> bool:
        reader = self._reader
        if self.action_stops:
            end, fed, stopped = feed_until(reader, self.buf, self.action_stops, final, self._at)
        else:
            end = feed_from(reader, self.buf, self._at)
            fed, stopped = (self._at if reader.invalid else len(self.buf)), False
        self._at = fed if end is None else end
        if reader.name is not None:
            self._call_started(reader.name, reader.call_id)
            self._call_progress(reader)
        if end is None:
            if not stopped and not final:
                return False
            call = cut_off(reader.name, reader.scanner.raw, _WRITE_IT_WHOLE)
            self._call_started(call.name, reader.call_id)
            self._call_done(call)
            self._mode = "end"
            return True
        value, ok = reader.value()
        self._call_done(_call_of(value, ok, reader))
        self._mode = "list"
        return True

    def _in_broken(self, final: bool) -> bool:
        """An action that is not a list of call objects: one call with an error, up to
        `<|END_ACTION|>`."""
        body = self._read_to_stop(STOPS, final)
        if body is None:
            return False
        self._call_started("unknown")
        self._call_done(unreadable(None, body, f"valid JSON like [{_CALL_OBJECT}]"))
        self._mode = "end"
        return True

    def _in_end(self, final: bool) -> bool:
        """What closes an action (`<|END_ACTION|>`), if written."""
        if not self._step_over(self.action_end, final):
            return False
        self._mode = "after"  # its whitespace is dropped; what follows is text again
        return True


class CommandRPlusParser(CommandR7BParser):
    family = "command_r_plus"
    action_stops = ()
    action_end = FENCE  # after the list's `]`

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_marker((ACTION, *TURN_TOKENS), final)
        if marker == ACTION:
            self._mode = "action"
        return marker is not None

    def _in_action(self, final: bool) -> bool:
        """After `Action:`: a fence and the list's `[`, or else `Action:` was text."""
        match = _ACTION_LIST.match(self.buf, self._at)
        if match:
            self._at = match.end()
            self._mode = "list"
            return True
        rest = self.buf[self._at : self._at + _ACTION_LIMIT]
        if not final and len(rest) < _ACTION_LIMIT and _ACTION_SO_FAR.fullmatch(rest):
            return False
        self._text(ACTION)
        self._mode = "text"
        return True


def _call_of(value: Any, ok: bool, reader: CallObjectReader) -> ToolCall:
    if isinstance(value, dict) and isinstance(value.get("tool_name"), str) and value["tool_name"]:
        obj: dict[str, Any] = {"name": value["tool_name"], "arguments": value.get("parameters", {})}
        call_id = value.get("tool_call_id")
        if isinstance(call_id, str | int) and not isinstance(call_id, bool) and str(call_id):
            obj["id"] = str(call_id)
        call = call_from_object(obj)
        if call is not None:
            return call
    return not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok, example=_CALL_OBJECT)
