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

Qwen3.8 writes the same calls, also inside `<think>` before closing it (its model card's
examples; llama.cpp reads Qwen3.5's call there as reasoning, so this is Qwen3.8's own
family): a call's opening ends the reasoning, and the `</think>` that may follow the calls
is not text.
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


class Qwen38Parser(Qwen3CoderParser):
    family = "qwen3_8"
    think_interrupts = ("<tool_call>\n<function=", "<tool_call><function=")
    dropped_markers = ("</think>",)
