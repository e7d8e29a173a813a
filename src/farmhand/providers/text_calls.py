"""Tool calls that come back as text: read them out of an OpenAI-compatible server's content.

llama-server without a tool-aware template, Ollama's /v1, vLLM or LM Studio with a parser
that does not know the model, and small models that write their call as a JSON code block
all return the call as plain `content` and no `tool_calls`; the loop would end with no call.
This runs the content through the model family's own parser (the same one the embedded
model uses), so text passes through as text and a call written in the family's markup
becomes a call. Calls the server did return as `tool_calls` are kept; a rescued call that
repeats one of them is dropped, which is why rescued calls come whole at the turn's end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from farmhand.messages import StreamEvent, ToolCall, ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.registry import detect_family, parser_for, resolve_family
from farmhand.providers.names import ToolNameMap
from farmhand.tools.definition import ToolDefinition


def rescue_family(tool_parser: str | None, model: str) -> str:
    """The family whose markup to look for: the config's `tool_parser`, else the one the
    model's name suggests; when it suggests none, the known call shapes in turn
    (`known_shapes`: generic's JSON envelope, then tags, fences and bare call objects)."""
    if tool_parser:
        return resolve_family(tool_parser)
    family = detect_family(None, model)
    return "known_shapes" if family == "generic" else family


class TextCalls:
    """One turn's content, fed as it streams; events out as they become certain. The model
    writes the names the server was sent (`names`); calls come back under farmhand's."""

    def __init__(
        self, family: str, tools: Sequence[ToolDefinition], names: ToolNameMap, parallel: bool
    ) -> None:
        options = ParserOptions(
            parallel_tool_calls=parallel,
            reasoning_format="none",  # the server splits reasoning out, or means it as text
            tool_schemas={names.to_provider(t.name): t.parameters for t in tools},
        )
        wire = [names.to_provider(t.name) for t in tools]
        self._parser = parser_for(None, None, wire, family=family, options=options)
        self._names = names
        self._calls: list[ToolCall] = []
        self.found = False
        """Whether `finish` returned calls."""

    def feed(self, text: str) -> list[StreamEvent]:
        """Text and reasoning as they become certain; calls are held for `finish`."""
        return self._read(self._parser.feed(text))

    def finish(self, native: Sequence[ToolCallEvent]) -> list[StreamEvent]:
        """The rest of the text, then the calls found in it, less those that repeat a call
        the server returned itself."""
        events = self._read(self._parser.finish())
        keys = {event.call.key() for event in native}
        fresh = [c for c in self._calls if c.key() not in keys]
        self.found = bool(fresh)
        return [*events, *(ToolCallEvent(call) for call in fresh)]

    def _read(self, events: list[StreamEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in events:
            if isinstance(event, ToolCallEvent):
                name = self._names.from_provider(event.call.name)
                self._calls.append(dataclasses.replace(event.call, name=name))
            elif not isinstance(event, ToolCallDelta):  # calls come whole, at the end
                out.append(event)
        return out
