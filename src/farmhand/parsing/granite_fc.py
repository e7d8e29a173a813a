"""IBM granite-20b-functioncalling tool calls: each call after a `<function_call>` tag,

    <function_call> {"name": "NAME", "arguments": {...}}
    <function_call> {"name": "OTHER", "arguments": {...}}

Source: vLLM's Granite20bFCToolParser and the model card. The tag is one of those the Hermes
reader already takes for a call's wrapper (without a closing tag); here it is the model's
own, so what follows it is a call whatever it holds, as `<tool_call>` is for Hermes.
Detected from the template by its `<|function_call_library|>` (the tool list) or its
`<function_call>` and `<function_response>` tags, else from the model's name.
"""

from __future__ import annotations

from farmhand.parsing.hermes import HermesParser

FUNCTION_CALL = "<function_call>"


class Granite20bFcParser(HermesParser):
    family = "granite_20b_fc"
    call_tags = (FUNCTION_CALL,)
