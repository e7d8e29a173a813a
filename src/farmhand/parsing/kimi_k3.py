"""Kimi K3 tool calls, in its XTML channels (`<|open|>`, `<|close|>`, `<|sep|>` tokens):

    <|open|>tools<|sep|>
    <|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>

Source: vLLM's KimiK3ToolParser and KimiK3ReasoningParser. An argument typed "string" is
its text as written; any other type is JSON. Reasoning is the `think` channel,
`<|open|>think<|sep|>...<|close|>think<|sep|>`; the serving side may open it in the prompt,
so the reply starts inside it (the prompt's opening is read first, or pass
thinking_forced_open), and the model may open its tools channel without closing it. The
reply's own `response` channel markers are not text.
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
TOOLS_OPEN = f"{OPEN}tools{SEP}"
# The reply's channel markers, dropped from the text.
RESPONSE_MARKERS = (f"{OPEN}response{SEP}", f"{CLOSE}response{SEP}", f"{CLOSE}message{SEP}")
KIMI_K3 = XmlFormat(
    block_open=TOOLS_OPEN,
    block_close=f"{CLOSE}tools{SEP}",
    call_open=f"{OPEN}call",
    name_ends=(SEP,),
    name_after="tool=",
    call_close=f"{CLOSE}call{SEP}",
    param_open=f'{OPEN}argument key="',
    key_end='"',
    head_end=SEP,
    param_close=f"{CLOSE}argument{SEP}",
)


class KimiK3Parser(XmlCallParser):
    family = "kimi_k3"
    think_open = f"{OPEN}think{SEP}"
    think_close = f"{CLOSE}think{SEP}"
    think_interrupts = (TOOLS_OPEN,)
    dropped_markers = RESPONSE_MARKERS
    xml = KIMI_K3
