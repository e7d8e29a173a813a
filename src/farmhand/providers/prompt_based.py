"""The prompt-based tool-call strategy (`tool_call_strategy: prompt_based`).

For backends or models without native tool calling: the tools are described in the system
prompt, in the block LlamaFarm documents, and the model's `<tool_call>` tags are read back
out of its text. `PromptBasedProvider(inner)` wraps any provider and is one itself:

- the inner provider gets no tools; the block is appended to the system prompt (a system
  message is added when there is none);
- the history is rewritten into plain turns every backend takes: an assistant turn's calls
  become `<tool_call>` blocks in its text, and tool results become a user turn of
  `<tool_response>` blocks (consecutive results merged into one turn);
- the inner's text is parsed with the Hermes parser, so any number of calls per turn become
  ToolCallEvents; reasoning passes through, and Finish says "tool_calls" when calls were found.

Constrained decoding still applies on a provider that can do it (the embedded one): such a
provider is a `providers.base.GrammarTarget`, and the wrapper hands it the tools as
`grammar_tools` instead of rendering them, so tool_choice required / named (and auto on a
`constrained` model) sample under the grammar for those tools, in the very format the block
asks for. Any other provider gets the block only; tool_choice cannot be enforced there.

With tool_choice "none" there is no block and no parsing: the inner's events pass as they
are (the history is still rewritten, since the inner is sent no tools).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing

from farmhand.messages import (
    Finish,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
)
from farmhand.parsing.hermes import HermesParser
from farmhand.providers.base import GenerationSettings, GrammarTarget, Provider
from farmhand.providers.token_count import count_tokens
from farmhand.tools.definition import ToolDefinition

BLOCK_HEAD = (
    "You may call one or more tools to assist with the user query.\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
)
BLOCK_TAIL = (
    "</tools>\n"
    "For each tool call, return a json object with function name and arguments within"
    " <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


def tools_block(tools: Sequence[ToolDefinition]) -> str:
    """The system-prompt block describing `tools`, one `<tool>` line each (OpenAI shape)."""
    lines = "".join(
        f"<tool>{json.dumps(tool.to_openai(), ensure_ascii=False)}</tool>\n" for tool in tools
    )
    return BLOCK_HEAD + lines + BLOCK_TAIL


def with_tools_block(messages: Sequence[Message], block: str) -> list[Message]:
    """`block` appended to the first system message (after a blank line), or as a new one."""
    out = list(messages)
    for i, message in enumerate(out):
        if message.role == "system":
            content = f"{message.content}\n\n{block}" if message.content else block
            out[i] = Message("system", content, reasoning=message.reasoning)
            return out
    return [Message.system(block), *out]


def call_block(call: ToolCall) -> str:
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def plain_history(messages: Sequence[Message]) -> list[Message]:
    """The conversation without tool roles or structured calls, for a backend sent no tools."""
    out: list[Message] = []
    results: list[str] = []

    def flush_results() -> None:
        if results:
            out.append(Message.user("\n".join(results)))
            results.clear()

    for message in messages:
        if message.role == "tool":
            results.append(f"<tool_response>\n{message.content}\n</tool_response>")
            continue
        flush_results()
        if message.role == "assistant" and message.tool_calls:
            parts = [message.content] if message.content else []
            parts += [call_block(call) for call in message.tool_calls]
            out.append(Message("assistant", "\n".join(parts), reasoning=message.reasoning))
        else:
            out.append(message)
    flush_results()
    return out


class PromptBasedProvider:
    """Tools described in the prompt, `<tool_call>` tags parsed back (see the module doc)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        history = plain_history(messages)
        if settings.tool_choice.mode == "none" or not tools:
            # Closed with ours: the embedded provider holds its model until its stream ends.
            async with aclosing(self.inner.stream(history, [], settings)) as events:
                async for event in events:
                    yield event
            return
        history = with_tools_block(history, tools_block(tools))
        if isinstance(self.inner, GrammarTarget):
            inner = self.inner.stream(history, [], settings, grammar_tools=tools)
        else:
            inner = self.inner.stream(history, [], settings)
        parser = HermesParser(known_names=[t.name for t in tools])
        found_calls = False
        async with aclosing(inner) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    parsed = parser.feed(event.text)
                elif isinstance(event, Finish):
                    parsed = parser.finish()
                    if found_calls or any(isinstance(e, ToolCallEvent) for e in parsed):
                        event = Finish("tool_calls", event.usage)
                    parsed.append(event)
                else:  # reasoning, and calls a constraining inner already read
                    parsed = [event]
                for out in parsed:
                    found_calls = found_calls or isinstance(out, ToolCallEvent)
                    yield out

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        """The inner model's count of the prompt this wrapper sends it (providers/token_count)."""
        history = plain_history(messages)
        if tools:
            history = with_tools_block(history, tools_block(tools))
        return await count_tokens(self.inner, history, [])

    async def aclose(self) -> None:
        await self.inner.aclose()
