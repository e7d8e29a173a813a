"""GigaChat 3 / 3.1 (Sber) tool calls: one JSON call object after a call header.

GigaChat 3 starts a call as a new message from the "function call" role,
`<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..., "arguments": {...}}`; GigaChat
3.1 writes `<|function_call|>{...}`. The separator tokens are never text.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser

FUNCTION_CALL_ROLE = "function call<|role_sep|>"
FUNCTION_CALL = "<|function_call|>"
MESSAGE_SEP = "<|message_sep|>"


class GigaChatParser(CallArrayParser):
    family = "gigachat"
    assistant_start = ("assistant<|role_sep|>\n",)
    markers = (MESSAGE_SEP + "\n\n" + FUNCTION_CALL_ROLE, FUNCTION_CALL_ROLE, FUNCTION_CALL)
    dropped_tokens = (MESSAGE_SEP,)
