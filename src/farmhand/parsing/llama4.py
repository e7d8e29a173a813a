"""Llama 4 (and Llama 3.2 prompted for it) pythonic tool calls: `[f(a=1), g(b="x")]`.

The list opens the reply, bare or between `<|python_start|>` and `<|python_end|>` (see
`pythonic`); a reply that does not start with a call is text.
"""

from __future__ import annotations

from farmhand.parsing.pythonic import PythonicListParser

LLAMA4_ASSISTANT = "<|header_start|>assistant<|header_end|>\n\n"


class Llama4Parser(PythonicListParser):
    family = "llama4_pythonic"
    assistant_start = (LLAMA4_ASSISTANT,)
    start_marker = "<|python_start|>"
    end_marker = "<|python_end|>"
    bare_list_at_start = True
