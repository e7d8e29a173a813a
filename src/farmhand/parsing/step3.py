"""StepFun Step 3 tool calls: StepTML invokes inside DeepSeek-like call tokens.

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="KEY">VALUE</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>

Source: vLLM's Step3ToolParser and Step3ReasoningParser. Values are bare text, typed by the
tool's schema. Reasoning ends with `</think>`; the template opens it, so the reply starts
inside it (the prompt's `<think>` is read first, or pass thinking_forced_open).
(Step 3.5 writes Qwen3-Coder's calls: the `qwen3_coder` family.)
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

CALL_END = "<｜tool_call_end｜>"
STEP3 = XmlFormat(
    block_open="<｜tool_calls_begin｜>",
    block_close="<｜tool_calls_end｜>",
    call_open="<｜tool_call_begin｜>",
    # `function<｜tool_sep｜><steptml:invoke name="NAME"`: the separator token ends in `>` too.
    name_ends=('">',),
    name_after="name=",
    call_close="</steptml:invoke>",
    param_open='<steptml:parameter name="',
    key_end='">',
    param_close="</steptml:parameter>",
    skipped=(CALL_END,),
)


class Step3Parser(XmlCallParser):
    family = "step3"
    assistant_start = ("<|BOT|>assistant\n",)
    think_interrupts = ("<｜tool_calls_begin｜>",)
    xml = STEP3
