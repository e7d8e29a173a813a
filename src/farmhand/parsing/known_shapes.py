"""For a model no family knows and no template explains: the known call shapes, in turn.

An OpenAI-compatible backend that returns a model's calls as text, for a model whose name
suggests no family, leaves farmhand guessing. This reads llama.cpp's generic envelope
(`{"tool_call": ...}`, `{"tool_calls": [...]}`, `{"response": ...}`) when the reply opens
with one, as `generic` does; any other reply is read for the shapes models write most,
which are safe on text: a `<tool_call>` tag, the JSON of a call in `<tools>` or another
tag, in a code fence or bare (only when it names an offered tool and fits its schema),
`<function=NAME>{...}</function>` (see `hermes`). `shape` says which one the calls came in.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from farmhand.parsing.base import ParserOptions
from farmhand.parsing.generic import GenericParser
from farmhand.parsing.hermes import HermesParser

GENERIC_SHAPE = "generic JSON envelope"


class KnownShapesParser(GenericParser):
    family = "known_shapes"

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._shapes: HermesParser | None = None  # reads the reply once it is no envelope

    @property
    def shape(self) -> str:
        """The shape the calls came in; "" while there is none."""
        if self._shapes is not None:
            return self._shapes.shape
        return GENERIC_SHAPE if self._index or self._announced else ""

    def _in_text(self, final: bool) -> bool:
        if self._shapes is None:
            # Reasoning is split off here already; the shapes are read from the reply.
            inner = replace(self.options, reasoning_format="none", thinking_forced_open=False)
            self._shapes = HermesParser(options=inner)
        text = self._lead + self.buf
        self._lead = self.buf = ""
        self._events += self._shapes.feed(text)
        if final:
            self._events += self._shapes.finish()
        return False
