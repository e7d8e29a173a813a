"""IBM Granite tool calls, by generation.

- Granite 3.x: `<|tool_call|>` and a JSON list of `{"name", "arguments"}` objects (the
  array reader shared with Mistral Nemo); reasoning in a leading `<think>` block, and the
  reply in `<response>` tags, which are dropped when reasoning is split out.
- Granite 4.x: Hermes' `<tool_call>{json}</tool_call>`, read as Hermes' are.
Both open the assistant's turn with `<|start_of_role|>assistant<|end_of_role|>`.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.hermes import HermesParser

GRANITE_ASSISTANT = "<|start_of_role|>assistant<|end_of_role|>"
TOOL_CALL = "<|tool_call|>"


class Granite3Parser(CallArrayParser):
    family = "granite"
    assistant_start = (GRANITE_ASSISTANT,)
    markers = (TOOL_CALL,)
    reply_tags = ("<response>", "</response>")


class Granite4Parser(HermesParser):
    family = "granite4"
    assistant_start = (GRANITE_ASSISTANT,)
