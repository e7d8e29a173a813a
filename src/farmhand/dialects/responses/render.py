"""The Response object and its stream events, rendered from a chat's events.

One `ResponseBuilder` serves both forms: it turns each event into the stream events
OpenAI documents (numbered by `sequence_number`) while it builds the output items, so a
non-streamed answer is the same builder's final `response()`:

    response.created, response.in_progress
    message:        output_item.added, content_part.added, output_text.delta...,
                    output_text.done, content_part.done, output_item.done
    reasoning:      the same, with reasoning_text parts and reasoning_text events
    function_call:  output_item.added, function_call_arguments.delta..., .done,
                    output_item.done (calls of the client's tools)
    custom_tool_call: output_item.added, custom_tool_call_input.delta..., .done,
                    output_item.done (calls of the client's custom tools: the `input`
                    string the model writes, decoded as it is written)
    mcp_list_tools: output_item.added, mcp_list_tools.in_progress, .completed, item done
    mcp_call:       output_item.added, mcp_call_arguments.delta..., .done,
                    mcp_call.in_progress, .completed or .failed,
                    output_item.done (MCP tools farmhand ran). A call the tool loop
                    runs opens as the model writes it, its arguments streamed as
                    written; one the loop then drops (a repeat, or the turn is
                    written again) ends `incomplete`. A call of the request's own
                    `mcp` tools is run between loop runs: its arguments go as one delta.
    mcp_approval_request: output_item.added, output_item.done (a call held for approval)
    response.completed (or response.incomplete when max_output_tokens cut the answer)

A question the chat pauses on (`InputRequested`) is the last item: output_item.added,
output_item.done, then response.completed (`questions.py`).
"""

from __future__ import annotations

import time
from typing import Any

from farmhand.dialects.responses.custom import call_input, streamed_input
from farmhand.dialects.responses.mcp import (
    approval_request_item,
    complete_mcp_call,
    list_tools_item,
    mcp_call_item,
)
from farmhand.dialects.responses.questions import question_item
from farmhand.dialects.responses.request import ResponsesRequest, new_id
from farmhand.messages import ToolCall, ToolResult
from farmhand.runtime.events import (
    InputRequested,
    LoopFinished,
    ReasoningChunk,
    TextChunk,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallWriting,
    TurnStarted,
)
from farmhand.service.mcp_chat import McpApprovalNeeded, McpCallDone, McpChatEvent, McpToolsListed
from farmhand.service.mcp_tools import split_name
from farmhand.tools.definition import ToolDefinition

Event = dict[str, Any]


class ResponseBuilder:
    """Events in, stream events out; `response()` is the Response object so far."""

    def __init__(self, parsed: ResponsesRequest, response_id: str | None = None) -> None:
        self.parsed = parsed
        self.id = response_id or new_id("resp")
        self.created_at = int(time.time())
        self.output: list[dict[str, Any]] = []
        self.status = "in_progress"
        self.finished: LoopFinished | None = None
        self.error: dict[str, Any] | None = None
        self.waiting_for: str | None = None  # the question the chat is paused on
        self._sequence = 0
        self._text: int | None = None  # output index of the open message item
        self._reasoning: int | None = None
        self._calls: dict[str, int] = {}  # call id -> output index, for open function calls
        self._arguments: dict[str, str] = {}  # call id -> arguments of a custom call so far
        self._writing: dict[int, str] = {}  # index of a call in the turn -> call id
        self._running: dict[str, int] = {}  # loop-run MCP calls: call id -> output index
        self._written: dict[str, int] = {}  # loop-run calls still being written, likewise
        self._labels = {t.label for t in parsed.tools.mcp}

    # --- the Response object ------------------------------------------------------------

    def response(self) -> dict[str, Any]:
        echo = self.parsed.echo
        done = self.finished
        body: dict[str, Any] = {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": self.status,
            "error": self.error,
            "incomplete_details": (
                {"reason": "max_output_tokens"} if self.status == "incomplete" else None
            ),
            "instructions": echo.get("instructions"),
            "max_output_tokens": echo.get("max_output_tokens"),
            "metadata": echo.get("metadata") or {},
            "model": self.parsed.model,
            "output": self.output,
            "parallel_tool_calls": self.parsed.settings.parallel_tool_calls,
            "previous_response_id": self.parsed.previous_response_id,
            "reasoning": {"effort": None, "summary": None},
            "store": self.parsed.store,
            "temperature": echo.get("temperature"),
            "text": echo.get("text") or {"format": {"type": "text"}},
            "tool_choice": echo.get("tool_choice") or "auto",
            "tools": echo.get("tools") or [],
            "top_p": echo.get("top_p"),
            "truncation": "disabled",
            "usage": _usage(done) if done else None,
            "user": None,
            "background": False,
        }
        extra: dict[str, Any] = {}
        if self.parsed.tools.ignored:
            extra["ignored_tools"] = self.parsed.tools.ignored
        if self.parsed.notes:
            extra["notes"] = self.parsed.notes
        if done is not None:
            extra.update(stop_reason=done.stop_reason, rounds=done.rounds)
        if self.waiting_for is not None:
            extra["waiting_for"] = self.waiting_for
        if extra:
            body["farmhand"] = extra
        return body

    # --- stream events ------------------------------------------------------------------

    def opening(self) -> list[Event]:
        return [
            self.event("response.created", response=self.response()),
            self.event("response.in_progress", response=self.response()),
        ]

    def event(self, kind: str, **fields: Any) -> Event:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def render(self, event: McpChatEvent | InputRequested) -> list[Event]:
        if isinstance(event, TextChunk):
            return self._text_delta(event.text)
        if isinstance(event, ReasoningChunk):
            return self._reasoning_delta(event.text)
        if isinstance(event, ToolCallWriting):
            return self._writing_call(event)
        if isinstance(event, TurnStarted):
            self._writing = {}
            return self._close_text() + self._drop_unrun()
        if isinstance(event, ToolCallStarted):
            return self._mcp_started(event.call)
        if isinstance(event, ToolCallFinished):
            return self._mcp_finished(event.call, event.result, None)
        if isinstance(event, McpToolsListed):
            return self._listed(event.label, event.tools)
        if isinstance(event, McpCallDone):
            return self._mcp_finished(event.call, event.full, event.approval_id)
        if isinstance(event, McpApprovalNeeded):
            return self._approval_request(event.call)
        if isinstance(event, InputRequested):
            return self._ask(event)
        return self._finish(event)

    def failed(self, error: dict[str, Any]) -> list[Event]:
        """The events that end a stream a failure cut short."""
        self.status = "failed"
        self.error = {"code": "server_error", "message": error.get("message", "")}
        return [
            self.event("error", **error),
            self.event("response.failed", response=self.response()),
        ]

    # --- items --------------------------------------------------------------------------

    def _add(self, item: dict[str, Any]) -> tuple[int, Event]:
        self.output.append(item)
        index = len(self.output) - 1
        added = _snapshot(item)  # the item changes after this event is written
        return index, self.event("response.output_item.added", output_index=index, item=added)

    def _done(self, index: int) -> Event:
        item = self.output[index]
        if item.get("status") == "in_progress":
            item["status"] = "completed"
        return self.event("response.output_item.done", output_index=index, item=item)

    def _part_events(self, index: int, kind: str) -> list[Event]:
        item = self.output[index]
        text = item["content"][0]["text"]
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        logprobs: dict[str, Any] = {"logprobs": []} if kind == "output_text" else {}
        part = dict(item["content"][0])
        return [
            self.event(f"response.{kind}.done", **where, text=text, **logprobs),
            self.event("response.content_part.done", **where, part=part),
            self._done(index),
        ]

    def _open_part(self, item: dict[str, Any], part: dict[str, Any]) -> list[Event]:
        index, added = self._add(item)
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        item["content"].append(part)
        return [added, self.event("response.content_part.added", **where, part=dict(part))]

    def _text_delta(self, text: str) -> list[Event]:
        events = self._close_reasoning()
        if self._text is None:
            item = _message_item()
            events += self._open_part(item, {"type": "output_text", "text": "", "annotations": []})
            self._text = len(self.output) - 1
        item = self.output[self._text]
        item["content"][0]["text"] += text
        where = {"item_id": item["id"], "output_index": self._text, "content_index": 0}
        return [*events, self.event("response.output_text.delta", **where, delta=text, logprobs=[])]

    def _reasoning_delta(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self._reasoning is None:
            item: dict[str, Any] = {"id": new_id("rs"), "type": "reasoning", "summary": []}
            item.update(content=[], status="in_progress")
            events += self._open_part(item, {"type": "reasoning_text", "text": ""})
            self._reasoning = len(self.output) - 1
        reasoning = self.output[self._reasoning]
        reasoning["content"][0]["text"] += text
        where = {"item_id": reasoning["id"], "output_index": self._reasoning, "content_index": 0}
        return [*events, self.event("response.reasoning_text.delta", **where, delta=text)]

    def _close_text(self) -> list[Event]:
        events = self._close_reasoning()
        if self._text is not None:
            events += self._part_events(self._text, "output_text")
            self._text = None
        return events

    def _close_reasoning(self) -> list[Event]:
        if self._reasoning is None:
            return []
        events = self._part_events(self._reasoning, "reasoning_text")
        self._reasoning = None
        return events

    def _writing_call(self, event: ToolCallWriting) -> list[Event]:
        if not event.for_client:
            return self._writing_mcp_call(event)
        if self._is_mcp_tool(event.name):
            return []  # the service runs it between loop runs: an mcp_call item once it ran
        call_id = self._writing.get(event.index)
        events = []
        if call_id is None:
            events = self._close_text()
            call_id = self._writing[event.index] = event.id
            index, added = self._add(self._function_item(event.id, event.name))
            self._calls[call_id] = index
            events.append(added)
        index = self._calls[call_id]
        item = self.output[index]
        if not event.arguments:
            return events
        if item["type"] == "custom_tool_call":
            return events + self._input_delta(item, call_id, event.arguments)
        where = {"item_id": item["id"], "output_index": index}
        item["arguments"] += event.arguments
        delta = self.event("response.function_call_arguments.delta", **where, delta=event.arguments)
        return [*events, delta]

    def _writing_mcp_call(self, event: ToolCallWriting) -> list[Event]:
        """A call the loop will run, as the model writes it: its `mcp_call` item opens
        at once and its arguments stream in, so a page can show them being written."""
        events: list[Event] = []
        index = self._written.get(event.id)
        if index is None:
            events = self._close_text()
            item = mcp_call_item(event.id, ToolCall(event.name, {}, id=event.id))
            item["arguments"] = ""
            index, added = self._add(item)
            self._written[event.id] = index
            events.append(added)
        if not event.arguments:
            return events
        item = self.output[index]
        item["arguments"] += event.arguments
        where = {"item_id": item["id"], "output_index": index}
        delta = self.event("response.mcp_call_arguments.delta", **where, delta=event.arguments)
        return [*events, delta]

    def _drop_unrun(self) -> list[Event]:
        """Calls written but never run (a repeat of a call already made, or a turn the
        loop asks for again): their items end `incomplete`, and are not read back as calls."""
        events = []
        for index in self._written.values():
            self.output[index]["status"] = "incomplete"
            events.append(self._done(index))
        self._written = {}
        return events

    def _input_delta(self, item: dict[str, Any], call_id: str, arguments: str) -> list[Event]:
        """The newly written part of a custom call's input, decoded from its arguments."""
        raw = self._arguments[call_id] = self._arguments.get(call_id, "") + arguments
        text = streamed_input(raw)
        if len(text) <= len(item["input"]) or not text.startswith(item["input"]):
            return []
        delta = text[len(item["input"]) :]
        item["input"] = text
        where = {"item_id": item["id"], "output_index": self._calls[call_id]}
        return [self.event("response.custom_tool_call_input.delta", **where, delta=delta)]

    def _is_mcp_tool(self, name: str) -> bool:
        label, tool = split_name(name)
        return bool(tool) and label in self._labels

    def _function_item(self, call_id: str, exposed: str) -> dict[str, Any]:
        """A call of the client's: a function_call, or a custom_tool_call (its `input`)."""
        function = self.parsed.tools.functions.get(exposed)
        custom = function is not None and function.custom
        item: dict[str, Any] = {
            "id": new_id("ctc" if custom else "fc"),
            "type": "custom_tool_call" if custom else "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": function.name if function else exposed,
            "input" if custom else "arguments": "",
        }
        if function is not None and function.namespace is not None:
            item["namespace"] = function.namespace
        return item

    def _close_call(self, call: ToolCall) -> list[Event]:
        events = self._close_text()
        index = self._calls.pop(call.id, None)
        self._arguments.pop(call.id, None)
        if index is None:
            index, added = self._add(self._function_item(call.id, call.name))
            events.append(added)
        item = self.output[index]
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "custom_tool_call":
            item["input"] = call_input(call)
            done = self.event("response.custom_tool_call_input.done", **where, input=item["input"])
            return [*events, done, self._done(index)]
        item["arguments"] = call.arguments_json()
        events.append(
            self.event(
                "response.function_call_arguments.done", **where, arguments=item["arguments"]
            )
        )
        return [*events, self._done(index)]

    def _listed(self, label: str, tools: tuple[ToolDefinition, ...]) -> list[Event]:
        item = list_tools_item(new_id("mcpl"), label, tools)
        index, added = self._add(item)
        where = {"item_id": item["id"], "output_index": index}
        return [
            added,
            self.event("response.mcp_list_tools.in_progress", **where),
            self.event("response.mcp_list_tools.completed", **where),
            self._done(index),
        ]

    def _mcp_started(self, call: ToolCall, approval_id: str | None = None) -> list[Event]:
        events = self._close_text()
        written = self._written.pop(call.id, None) if approval_id is None else None
        if written is not None:  # its arguments streamed as the model wrote them
            item = self.output[written]
            item["arguments"] = call.arguments_json()  # as run: repaired, trimmed
            self._running[call.id] = written
            where = {"item_id": item["id"], "output_index": written}
            return [
                *events,
                self.event(
                    "response.mcp_call_arguments.done", arguments=item["arguments"], **where
                ),
                self.event("response.mcp_call.in_progress", **where),
            ]
        item_id = call.id if approval_id is None else new_id("mcp")
        index, added = self._add(mcp_call_item(item_id, call, approval_id))
        self._running[call.id] = index
        where = {"item_id": self.output[index]["id"], "output_index": index}
        # The call reaches the service whole, so its arguments go out as one delta.
        arguments = self.output[index]["arguments"]
        return [
            *events,
            added,
            self.event("response.mcp_call_arguments.delta", delta=arguments, **where),
            self.event("response.mcp_call_arguments.done", arguments=arguments, **where),
            self.event("response.mcp_call.in_progress", **where),
        ]

    def _mcp_finished(
        self, call: ToolCall, result: ToolResult, approval_id: str | None
    ) -> list[Event]:
        events: list[Event] = []
        index = self._running.pop(call.id, None)
        if index is None:  # run by the service between loop runs: reported once done
            events = self._mcp_started(call, approval_id)
            index = self._running.pop(call.id)
        item = self.output[index]
        ended = complete_mcp_call(item, result)
        where = {"item_id": item["id"], "output_index": index}
        return [*events, self.event(f"response.mcp_call.{ended}", **where), self._done(index)]

    def _approval_request(self, call: ToolCall) -> list[Event]:
        events = self._close_text()
        index, added = self._add(approval_request_item(call))
        return [*events, added, self._done(index)]

    def _ask(self, event: InputRequested) -> list[Event]:
        """The question ends the response; the answer comes with the next request."""
        events = self._close_text()
        index, added = self._add(question_item(event))
        self.status = "completed"
        self.waiting_for = event.id
        done = self._done(index)
        return [*events, added, done, self.event("response.completed", response=self.response())]

    def _finish(self, done: LoopFinished) -> list[Event]:
        events = self._close_text() + self._drop_unrun()
        for call in done.pending_calls:
            events += self._close_call(call)
        for index in self._calls.values():  # written, then sent back to the model
            self.output[index]["status"] = "incomplete"
            events.append(self._done(index))
        self._calls, self._arguments = {}, {}
        self.finished = done
        self.status = "incomplete" if done.stop_reason == "length" else "completed"
        kind = "response.incomplete" if self.status == "incomplete" else "response.completed"
        return [*events, self.event(kind, response=self.response())]


def _message_item() -> dict[str, Any]:
    return {
        "id": new_id("msg"),
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }


def _usage(done: LoopFinished) -> dict[str, Any]:
    usage = done.usage
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens,
    }


def _snapshot(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of an output item that later changes leave alone. The renderer changes an
    item's own fields, its lists and the dicts in them (a part's text), nothing deeper; a
    deep copy cost a twelfth of a whole Responses answer."""
    return {
        key: [dict(v) if isinstance(v, dict) else v for v in value]
        if isinstance(value, list)
        else value
        for key, value in item.items()
    }
