"""Apriel (ServiceNow) 1.5 / 1.6 Thinker: reasoning first, then the reply or the calls.

The reply starts with `[BEGIN FINAL RESPONSE]`: everything before it is reasoning, which
the model starts without a tag (1.6's prompt writes `Here are my reasoning steps:\\n` for
it), so reasoning is open from the reply's first character. Calls are a JSON list inside
`<tool_calls>[...]</tool_calls>`; `[END FINAL RESPONSE]` and `<|end|>` are not text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from farmhand.parsing.base import ParserOptions
from farmhand.parsing.call_array import CallArrayParser

BEGIN_FINAL = "[BEGIN FINAL RESPONSE]"


class AprielParser(CallArrayParser):
    family = "apriel"
    think_close = BEGIN_FINAL
    assistant_start = ("<|assistant|>\n", "<|begin_assistant|>\n")
    markers = ("<tool_calls>",)
    dropped_tokens = ("</tool_calls>", "[END FINAL RESPONSE]", "<|end|>")

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        options = replace(options or ParserOptions(), thinking_forced_open=True)
        super().__init__(known_names, options=options)
