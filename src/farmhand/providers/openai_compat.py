"""OpenAI-compatible chat completions: llama-server, vLLM, LM Studio, OpenAI, Ollama's /v1.

One streamed POST to `{base_url}/chat/completions` per model turn. Text and reasoning are
yielded as they arrive; tool calls are assembled from their fragments and yielded whole when
the model finishes; one Finish closes the turn. Every failure becomes a ProviderError.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from farmhand import jsonwire
from farmhand.errors import ProviderError
from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from farmhand.providers.backend_errors import backend_call, clip
from farmhand.providers.backend_http import Answer, HTTPProvider
from farmhand.providers.base import GenerationSettings, ResponseFormat
from farmhand.providers.names import ToolNameMap
from farmhand.providers.text_calls import TextCalls
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition


class OpenAICompatProvider(HTTPProvider):
    """A model behind an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 600,
        name: str = "openai",
        extra_params: dict[str, Any] | None = None,
        text_calls_family: str | None = None,
    ) -> None:
        """`text_calls_family`: read calls the model wrote as text in that family's markup
        (see `text_calls`); None leaves the content as the server sent it."""
        super().__init__(
            base_url=base_url,
            path="/chat/completions",
            model=model,
            name=name,
            api_key=api_key,
            timeout=timeout,
            extra_params=extra_params,
        )
        self.text_calls_family = text_calls_family
        self._empty_content: str | None = None  # "" once the server refused null (`answer`)

    def request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        names: ToolNameMap,
    ) -> dict[str, Any]:
        """The JSON body for one turn. extra_params are defaults that settings override."""
        body: dict[str, Any] = dict(self.extra_params)
        body.update(
            model=self.model,
            messages=[_message_to_openai(m, names, self._empty_content) for m in messages],
            stream=settings.stream,
        )
        if settings.stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [_tool_to_openai(t, names) for t in tools]
            body["tool_choice"] = _tool_choice(settings.tool_choice, names)
            body["parallel_tool_calls"] = settings.parallel_tool_calls
        for key in ("temperature", "max_tokens", "seed", "top_p"):
            if (value := getattr(settings, key)) is not None:
                body[key] = value
        if settings.response_format is not None:
            body["response_format"] = _response_format(settings.response_format)
        if settings.think is not None and self.name == "ollama":
            # Ollama's /v1 switches reasoning with reasoning_effort ("none": off); other
            # OpenAI-compatible servers spell it differently or refuse unknown fields.
            body["reasoning_effort"] = "medium" if settings.think else "none"
        if settings.stop:
            body["stop"] = list(settings.stop)
        if settings.template_kwargs:
            # llama-server's, vLLM's and SGLang's name; the backend renders its template.
            body["chat_template_kwargs"] = dict(settings.template_kwargs)
        return body

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def wire_turn(
        self, names: ToolNameMap, tools: Sequence[ToolDefinition], settings: GenerationSettings
    ) -> _Turn:
        rescue = (
            TextCalls(self.text_calls_family, tools, names, settings.parallel_tool_calls)
            if self.text_calls_family and tools and settings.tool_choice.mode != "none"
            else None
        )
        return _Turn(names, self.url, settings.stop, rescue)

    @asynccontextmanager
    async def answer(
        self, body: dict[str, Any], headers: Mapping[str, str], url: str | None = None
    ) -> AsyncIterator[Answer]:
        """The server's answer to `body`, once its status says it took the request.

        Servers disagree on a tool-calling turn without text: OpenAI's own shape is
        `content: null` beside `tool_calls`, which llama-cpp-python's server and older LM
        Studio refuse, while others refuse `""`. null goes first; a refusal that names the
        content is asked again with "", and this provider keeps to "" from then on."""
        async with self._http.post(url or self.url, body, headers) as answer:
            if answer.status < 300:
                yield answer
                return
            detail = await answer.body()
            if answer.status < 400 or not (
                _has_null_content(body) and b"content" in detail.lower()
            ):
                raise self.status_error(answer, detail)
        self._empty_content = ""
        body["messages"] = [_with_empty_content(m) for m in body["messages"]]
        async with self._http.post(url or self.url, body, headers) as answer:
            if answer.status >= 300:
                raise self.status_error(answer, await answer.body())
            yield answer


def _message_to_openai(
    message: Message, names: ToolNameMap, empty_content: str | None = None
) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            # No text beside the calls: OpenAI's null, unless the server refused it.
            "content": message.content or empty_content,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": names.to_provider(call.name),
                        "arguments": call.arguments_json(),
                    },
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _has_null_content(body: dict[str, Any]) -> bool:
    return any(m.get("tool_calls") and m.get("content") is None for m in body["messages"])


def _with_empty_content(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("tool_calls") and message.get("content") is None:
        return {**message, "content": ""}
    return message


def _tool_to_openai(tool: ToolDefinition, names: ToolNameMap) -> dict[str, Any]:
    spec = tool.to_openai()
    spec["function"]["name"] = names.to_provider(tool.name)
    return spec


def _tool_choice(choice: ToolChoice, names: ToolNameMap) -> str | dict[str, Any]:
    """OpenAI's spelling, with a forced tool under the name the backend knows it by."""
    if choice.name is None:
        return choice.mode
    return {"type": "function", "function": {"name": names.to_provider(choice.name)}}


# Finish reasons farmhand knows; anything else (content_filter, ...) ends the turn as "stop".
_REASONS = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
_REASONS["function_call"] = "tool_calls"  # the pre-tools name of the same thing


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def build(self, names: ToolNameMap) -> ToolCall:
        return backend_call(names.from_provider(self.name), "".join(self.arguments), self.id)


class _Turn:
    """Accumulates one streamed turn: SSE lines in, neutral events out. With `rescue`, the
    text is also read for calls the model wrote as text (`text_calls`)."""

    def __init__(
        self,
        names: ToolNameMap,
        url: str,
        stops: Sequence[str] = (),
        rescue: TextCalls | None = None,
    ) -> None:
        self.names = names
        self.rescue = rescue
        self.url = url
        self.stops = stops
        self.stop_sequence: str | None = None
        self.calls: dict[int, _PartialCall] = {}
        self.emitted: set[int] = set()
        self.native: list[ToolCallEvent] = []  # the calls the server sent as tool_calls
        self.reason: str | None = None
        self.usage = Usage()
        self.done = False
        self.chunks = 0
        self.stray = ""  # the first line that was not SSE, to explain an empty stream

    def feed_line(self, line: str) -> list[StreamEvent]:
        events = self._read_line(line)
        if self.rescue is None:
            return events
        out: list[StreamEvent] = []
        for event in events:
            out.extend(self.rescue.feed(event.text) if isinstance(event, TextDelta) else [event])
        return out

    def whole(self, body: bytes) -> list[StreamEvent]:
        """A server that ignores stream=true sends one whole completion."""
        return self.feed_line(f"data: {body.decode('utf-8', 'replace')}")

    def _read_line(self, line: str) -> list[StreamEvent]:
        # Blank lines separate events, `:` lines are keep-alive comments, and event:/id:
        # lines carry nothing an OpenAI-style stream needs.
        key, _, value = line.partition(":")
        if key == "error":  # older llama-server reports a failed stream this way
            raise ProviderError(f"{self.url} reported an error mid-stream: {clip(value)}")
        if key != "data":
            if line.strip() and key not in ("", "event", "id", "retry"):
                self.stray = self.stray or line
            return []
        data = value.strip()
        if data == "[DONE]":
            self.done = True
            return []
        try:
            chunk = jsonwire.loads(data)
        except json.JSONDecodeError as exc:
            raise ProviderError(
                f"{self.url} sent a stream line that is not valid JSON ({exc.msg}): {clip(line)!r}"
            ) from exc
        if not isinstance(chunk, dict):
            raise ProviderError(f"{self.url} sent a stream chunk that is not an object: {line!r}")
        return self.feed_chunk(chunk)

    def feed_chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        self.chunks += 1
        if error := chunk.get("error"):  # OpenAI and llama-server report failures in-stream
            detail = error.get("message", error) if isinstance(error, dict) else error
            raise ProviderError(f"{self.url} reported an error mid-stream: {clip(str(detail))}")
        if isinstance(usage := chunk.get("usage"), dict):
            prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
            self.usage = Usage(int(prompt or 0), int(completion or 0))
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # only one completion is asked for
            delta = choice.get("delta") or choice.get("message") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events.append(ReasoningDelta(reasoning))
            if isinstance(content := delta.get("content"), str) and content:
                events.append(TextDelta(content))
            for position, fragment in enumerate(delta.get("tool_calls") or []):
                self._add_fragment(fragment, position if "message" in choice else None)
            if choice.get("finish_reason"):
                self.reason = choice["finish_reason"]
                # vLLM alone names the stop string that ended the turn (its own field);
                # other servers say "stop" either way, and the turn's stop stays unknown.
                if (matched := choice.get("stop_reason")) in self.stops:
                    self.stop_sequence = matched
                events.extend(self._flush())
        return events

    def _add_fragment(self, fragment: dict[str, Any], position: int | None) -> None:
        index = fragment.get("index", position)
        if not isinstance(index, int):
            # A server that omits the index: a new id starts a call, anything else continues.
            new_id = fragment.get("id")
            starts = not self.calls or (
                new_id and new_id not in {c.id for c in self.calls.values()}
            )
            index = len(self.calls) if starts else max(self.calls)
        call = self.calls.setdefault(index, _PartialCall())
        # id and name come whole in a call's first fragment; some servers repeat them later.
        call.id = call.id or fragment.get("id") or ""
        function = fragment.get("function") or {}
        call.name = call.name or function.get("name") or ""
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif isinstance(arguments, dict):  # some servers send the object itself
            call.arguments.append(json.dumps(arguments, ensure_ascii=False))

    def _flush(self) -> list[StreamEvent]:
        fresh = sorted(set(self.calls) - self.emitted)
        self.emitted.update(fresh)
        events = [ToolCallEvent(self.calls[i].build(self.names)) for i in fresh]
        self.native += events
        return list(events)

    def finish(self) -> list[StreamEvent]:
        events = self._finish_native()
        if self.rescue is None:
            return events
        finish = events.pop()  # the Finish, which comes last
        events += self.rescue.finish(self.native)
        if self.rescue.found and isinstance(finish, Finish) and finish.reason != "tool_calls":
            finish = Finish("tool_calls", finish.usage)
        return [*events, finish]

    def _finish_native(self) -> list[StreamEvent]:
        if not self.chunks:
            what = f"its first line was {clip(self.stray)!r}" if self.stray else "it was empty"
            raise ProviderError(
                f"{self.url} answered without a chat completion stream ({what}); "
                "is base_url an OpenAI-compatible API (usually ending in /v1)?"
            )
        events = self._flush()
        reason = "tool_calls" if self.emitted else _REASONS.get(self.reason or "stop", "stop")
        events.append(Finish(reason, self.usage, self.stop_sequence if reason == "stop" else None))
        return events


def _response_format(answer: ResponseFormat) -> dict[str, Any]:
    """OpenAI's `response_format` for an answer shape (llama-server, vLLM, Ollama and
    LM Studio read it too)."""
    if answer == "json":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": answer}}
