"""FunctionGemma (Google's Gemma 3 270M tuned for calls):
`<start_function_call>call:NAME{key:<escape>text<escape>,n:3}<end_function_call>`.

The notation is Gemma 4's (see `gemma4`), with `<escape>` quoting strings; the model ends
its turn with `<start_function_response>` after its calls, which is not text. No reasoning.
"""

from __future__ import annotations

from farmhand.parsing.gemma4 import Gemma4Parser


class FunctionGemmaParser(Gemma4Parser):
    family = "function_gemma"
    assistant_start = ("<start_of_turn>model\n",)
    call_start = "<start_function_call>"
    call_end = "<end_function_call>"
    quote = "<escape>"
    turn_ends = ("<start_function_response>", "<end_of_turn>")
    channel = None
