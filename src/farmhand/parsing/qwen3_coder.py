"""Qwen3-Coder's tool calls, also written by Qwen3.5, Nemotron 3 Nano and Step 3.5:

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

Each value is on lines of its own (those newlines are framing, not part of it) and is bare
text, typed by the tool's schema. Reasoning, where the model has it, is `<think>...</think>`.
A `<function=...>` written without its `<tool_call>` is still a call.
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

QWEN3_CODER = XmlFormat(
    block_open="<tool_call>",
    block_close="</tool_call>",
    call_open="<function=",
    name_ends=(">",),
    call_close="</function>",
    param_open="<parameter=",
    key_end=">",
    param_close="</parameter>",
    newline_framed=True,
    bare_calls=True,
)


class Qwen3CoderParser(XmlCallParser):
    family = "qwen3_coder"
    assistant_start = ("<|im_start|>assistant\n",)
    xml = QWEN3_CODER
