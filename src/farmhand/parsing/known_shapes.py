"""For a model no family knows and no template explains: the known call shapes, in turn.

An OpenAI-compatible backend that returns a model's calls as text, for a model whose name
suggests no family, leaves farmhand guessing. The reply is read for the shapes models write
most, in an order where each is safe on text that is not it:

1. llama.cpp's generic envelope (`{"tool_call": ...}`, `{"tool_calls": [...]}`,
   `{"response": ...}`), when the reply opens with one, as `generic` reads it;
2. a Python list of calls opening the reply, `[get_weather(city="Paris"), ...]` (ToolACE's
   and Llama 4's shape, read as `toolace` reads it), when its first call names an offered
   tool (any name, when the tools are not known);
3. anything else as `hermes_2_pro` reads it: a `<tool_call>` tag, the JSON of a call in
   `<tools>` or another tag, in a code fence or bare (only when it names an offered tool
   and fits its schema), `<function=NAME>{...}</function>`.

`shape` says which one the calls came in (what `farmhand parse` prints).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from farmhand.messages import ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import FamilyParser, ParserOptions, is_known_tool
from farmhand.parsing.generic import GenericParser
from farmhand.parsing.hermes import HermesParser
from farmhand.parsing.pythonic import first_call_name, opens_with_calls
from farmhand.parsing.toolace import ToolAceParser

GENERIC_SHAPE = "generic JSON envelope"
PYTHONIC_SHAPE = "pythonic list"


class KnownShapesParser(GenericParser):
    family = "known_shapes"

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._shapes: FamilyParser | None = None  # reads the reply once it is no envelope
        self._inner_calls = False  # that reader has written a call

    @property
    def shape(self) -> str:
        """The shape the calls came in; "" while there is none."""
        if isinstance(self._shapes, HermesParser):
            return self._shapes.shape
        if self._shapes is not None:
            return PYTHONIC_SHAPE if self._inner_calls else ""
        return GENERIC_SHAPE if self._index or self._announced else ""

    def _in_text(self, final: bool) -> bool:
        text = self._lead + self.buf
        if self._shapes is None:
            pythonic = opens_with_calls(text, final)
            if pythonic is None:
                return False  # not yet known whether a list of calls opens the reply
            # Reasoning is split off here already; the shapes are read from the reply.
            inner = replace(self.options, reasoning_format="none", thinking_forced_open=False)
            reader = ToolAceParser if pythonic and self._offered(text) else HermesParser
            self._shapes = reader(options=inner)
        self._lead = self.buf = ""
        events = self._shapes.feed(text) + (self._shapes.finish() if final else [])
        self._inner_calls |= any(isinstance(e, ToolCallDelta | ToolCallEvent) for e in events)
        self._events += events
        return False

    def _offered(self, text: str) -> bool:
        """The list's first call names an offered tool (or the tools are not known)."""
        known = self.options.known_names
        name = first_call_name(text)
        return known is None or (name is not None and is_known_tool(name, known))
