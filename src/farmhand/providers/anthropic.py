"""Anthropic's Messages API as a backend: `POST {base_url}/messages`, streamed or whole.

The conversation goes over as Anthropic wants it: system messages in `system`, tool calls
as `tool_use` blocks, their results as `tool_result` blocks in the next user turn, tools
with `input_schema`. A streamed answer's `text_delta`s and `thinking_delta`s are yielded as
they arrive; a `tool_use` block's `input_json_delta` pieces are gathered and the call is
yielded whole when its block stops; one Finish closes the turn. Every failure becomes a
ProviderError, worded by `backend_errors`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from farmhand.errors import ProviderError, RequestError
from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from farmhand.providers.backend_errors import backend_call, clip
from farmhand.providers.backend_http import Answer, HTTPProvider
from farmhand.providers.base import GenerationSettings
from farmhand.providers.names import ToolNameMap
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import named_tool_choice
from farmhand.tools.formats.anthropic import tool_choice_to_anthropic, tools_to_anthropic

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires `max_tokens`; this is sent when the request names none."""
THINKING_BUDGET = 2048
"""Tokens of reasoning asked for when a request turns thinking on (`think`)."""

# Anthropic's stop reasons, as farmhand's Finish reasons; refusal, pause_turn and anything
# newer end the turn as "stop".
_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


class AnthropicProvider(HTTPProvider):
    """A model behind Anthropic's Messages API (or a server that speaks it)."""

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 600,
        extra_params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            base_url=base_url,
            path="/messages",
            model=model,
            name="anthropic",
            api_key=api_key,
            timeout=timeout,
            extra_params=extra_params,
        )

    def request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        names: ToolNameMap,
    ) -> dict[str, Any]:
        """The JSON body for one turn. extra_params are defaults that settings override."""
        if settings.response_format is not None:
            raise RequestError(
                "an Anthropic model cannot be held to a JSON answer (response_format or"
                " format); describe the shape in the prompt instead",
                param="response_format",
            )
        if settings.template_kwargs:
            raise RequestError(
                "an Anthropic model has no chat template to pass chat_template_kwargs to;"
                " send the request without them",
                param="chat_template_kwargs",
            )
        offered = tools if settings.tool_choice.mode != "none" else []
        body: dict[str, Any] = dict(self.extra_params)
        body.update(self._prompt(messages, offered, names), stream=settings.stream)
        body["max_tokens"] = settings.max_tokens or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        if offered:
            body["tool_choice"] = tool_choice(
                settings.tool_choice, names, parallel=settings.parallel_tool_calls
            )
        for key in ("temperature", "top_p", "top_k"):
            if (value := getattr(settings, key)) is not None:
                body[key] = value
        if settings.stop:
            body["stop_sequences"] = list(settings.stop)
        if settings.think:
            budget = min(THINKING_BUDGET, max(1024, body["max_tokens"] - 1))
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max(body["max_tokens"], budget + 1)
        return body

    def wire_turn(
        self, names: ToolNameMap, tools: Sequence[ToolDefinition], settings: GenerationSettings
    ) -> _Turn:
        return _Turn(names, self.url)

    def reads_whole(self, answer: Answer, settings: GenerationSettings) -> bool:
        return not settings.stream or super().reads_whole(answer, settings)

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        """Anthropic's own count (`POST /messages/count_tokens`) of this prompt."""
        body = self._prompt(messages, tools, ToolNameMap.for_turn(messages, tools))
        url = f"{self.url}/count_tokens"
        content = await self.fetch(url, body)
        count = _json(content, url).get("input_tokens")
        if not isinstance(count, int):
            raise ProviderError(f"{url} answered without input_tokens: {clip(content.decode())!r}")
        return count

    def _prompt(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], names: ToolNameMap
    ) -> dict[str, Any]:
        """What a turn and a token count both send: the model, the system text, the
        messages and the tools."""
        system, turns = conversation(messages, names)
        body: dict[str, Any] = {"model": self.model, "messages": turns}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = _tools(tools, names)
        return body

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION, "Accept": "text/event-stream"}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def status_note(self, status: int) -> str:
        if status in (429, 529):
            return " (Anthropic is rate-limiting or overloaded; try again shortly)"
        return ""


def conversation(
    messages: Sequence[Message], names: ToolNameMap
) -> tuple[str, list[dict[str, Any]]]:
    """Anthropic's `system` text and `messages`: system messages joined, each run of tool
    results one user turn of `tool_result` blocks (text the user wrote after them joins
    that turn), calls as `tool_use` blocks after the text that came with them. Reasoning is
    not sent back: Anthropic only takes thinking blocks it signed itself."""
    system = [m.content for m in messages if m.role == "system" and m.content]
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        blocks = _blocks(message, names)
        if not blocks:
            continue  # an empty assistant turn: Anthropic refuses empty text blocks
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(system), turns


def _blocks(message: Message, names: ToolNameMap) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return [result]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": names.to_provider(call.name),
                "input": call.arguments,
            }
        )
    return blocks


def _tools(tools: Sequence[ToolDefinition], names: ToolNameMap) -> list[dict[str, Any]]:
    """The tools in Anthropic's shape (`tools/formats`), under their provider-safe names."""
    offered = []
    for tool in tools:
        spec = tool.to_openai()
        spec["function"]["name"] = names.to_provider(tool.name)
        offered.append(spec)
    return tools_to_anthropic(offered)


def tool_choice(choice: ToolChoice, names: ToolNameMap, *, parallel: bool) -> dict[str, Any]:
    """Anthropic's spelling (`tools/formats`): auto, any (OpenAI's required), or one named
    tool; `parallel` False asks for one call at most."""
    if choice.name is not None:
        spelled = tool_choice_to_anthropic(named_tool_choice(names.to_provider(choice.name)))
    else:
        spelled = tool_choice_to_anthropic(choice.mode)
    if not parallel:
        spelled["disable_parallel_tool_use"] = True
    return spelled


def _json(content: bytes, url: str) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except ValueError:
        text = clip(content.decode("utf-8", "replace"))
        raise ProviderError(f"{url} answered with something that is not JSON: {text!r}") from None
    if not isinstance(data, dict):
        raise ProviderError(f"{url} answered with JSON that is not an object: {clip(str(data))!r}")
    return data


@dataclass
class _Block:
    """A content block of the answer being streamed; a tool_use gathers its input."""

    kind: str
    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)


class _Turn:
    """One answer: SSE lines (or the whole message) in, neutral events out."""

    def __init__(self, names: ToolNameMap, url: str) -> None:
        self.names = names
        self.url = url
        self.blocks: dict[int, _Block] = {}
        self.calls = 0
        self.reason: str | None = None
        self.stop_sequence: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.started = False
        self.done = False  # message_stop: the rest of the body is not read

    def feed_line(self, line: str) -> list[StreamEvent]:
        # `event:` lines repeat the data's own "type"; blank and comment lines carry nothing.
        key, _, value = line.partition(":")
        if key != "data" or value.strip() == "[DONE]":  # [DONE]: an OpenAI-style stream
            return []
        try:
            data = json.loads(value)
        except ValueError:
            raise ProviderError(
                f"{self.url} sent a stream line that is not valid JSON: {clip(line)!r}"
            ) from None
        return self.feed(data) if isinstance(data, dict) else []

    def feed(self, data: dict[str, Any]) -> list[StreamEvent]:
        kind = data.get("type")
        if kind == "message_start":
            self.started = True
            self._count(data.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            block = data.get("content_block") or {}
            self.blocks[data.get("index", len(self.blocks))] = _Block(
                str(block.get("type")), str(block.get("id") or ""), str(block.get("name") or "")
            )
            if block.get("type") == "text" and block.get("text"):
                return [TextDelta(block["text"])]
        elif kind == "content_block_delta":
            return self._delta(data.get("index"), data.get("delta") or {})
        elif kind == "content_block_stop":
            block = self.blocks.get(data.get("index", -1))
            if block is not None and block.kind == "tool_use":
                return [self._call(block.id, block.name, "".join(block.pieces))]
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            self.reason = delta.get("stop_reason") or self.reason
            self.stop_sequence = delta.get("stop_sequence") or self.stop_sequence
            self._count(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = data.get("error") or {}
            detail = error.get("message", error) if isinstance(error, dict) else error
            raise ProviderError(f"{self.url} reported an error mid-stream: {clip(str(detail))}")
        return []

    def _delta(self, index: object, delta: dict[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ReasoningDelta(delta["thinking"])]
        if kind == "input_json_delta" and isinstance(index, int) and index in self.blocks:
            self.blocks[index].pieces.append(str(delta.get("partial_json") or ""))
        return []

    def _call(self, call_id: str, name: str, arguments: object) -> ToolCallEvent:
        self.calls += 1
        return ToolCallEvent(backend_call(self.names.from_provider(name), arguments, call_id))

    def _count(self, usage: object) -> None:
        if isinstance(usage, dict):
            self.input_tokens = int(usage.get("input_tokens") or self.input_tokens)
            self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)

    def whole(self, body: bytes) -> list[StreamEvent]:
        """A non-streamed answer: the Messages API's message object."""
        message = _json(body, self.url)
        if message.get("type") == "error":
            self.feed(message)
        events: list[StreamEvent] = []
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and block.get("text"):
                events.append(TextDelta(block["text"]))
            elif kind == "thinking" and block.get("thinking"):
                events.append(ReasoningDelta(block["thinking"]))
            elif kind == "tool_use":
                arguments = block.get("input") or {}
                call_id, name = str(block.get("id") or ""), str(block.get("name") or "")
                events.append(self._call(call_id, name, arguments))
        self.started = True
        self.reason = message.get("stop_reason")
        self.stop_sequence = message.get("stop_sequence")
        self._count(message.get("usage"))
        return events

    def finish(self) -> list[StreamEvent]:
        if not self.started:
            raise ProviderError(
                f"{self.url} answered without a Messages stream; is base_url Anthropic's API"
                " (https://api.anthropic.com/v1) or a server that speaks it?"
            )
        reason = "tool_calls" if self.calls else _REASONS.get(self.reason or "end_turn", "stop")
        stop = self.stop_sequence if self.reason == "stop_sequence" else None
        return [Finish(reason, Usage(self.input_tokens, self.output_tokens), stop)]
