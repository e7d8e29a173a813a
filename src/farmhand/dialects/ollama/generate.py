"""Ollama's `POST /api/generate`: the body, checked and turned into a GenerateRequest, and
the response lines (NDJSON by default, one object with `stream: false`).

An empty prompt loads the model and answers `done_reason: "load"` (with `keep_alive: 0`,
it unloads it: "unload"), as Ollama does. `suffix` (fill-in-the-middle) and `images` are
refused; `context` is returned where the backend has tokens (the embedded model) and is
accepted back from it.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from farmhand.dialects.ollama.common import (
    OllamaBody,
    Options,
    keep_alive_seconds,
    refuse_images,
    response_format,
    think_flag,
)
from farmhand.dialects.ollama.template import DEFAULT_LIMITS, TemplateLimits, render_go_template
from farmhand.errors import RequestError
from farmhand.messages import Finish
from farmhand.service.generate import GenerateRequest
from farmhand.service.tasks import iso_time

DONE_REASONS = {"stop": "stop", "length": "length", "tool_calls": "stop"}


class GenerateBody(OllamaBody):
    """The fields of `POST /api/generate` farmhand reads."""

    model: str = ""
    prompt: str | None = None
    suffix: str | None = None
    system: str | None = None
    template: str | None = None
    context: list[int] | None = None
    stream: bool = True
    raw: bool = False
    format: Any = None
    options: Options | None = None
    keep_alive: Any = None
    images: list[Any] | None = None
    think: Any = None
    # Image generation's fields: refused with the rest of images.
    width: int | None = Field(default=None, ge=1)
    height: int | None = Field(default=None, ge=1)

    @property
    def loads_only(self) -> bool:
        """Ollama's "load the model" request: no prompt at all."""
        return not self.prompt and not self.context

    def keep_alive_seconds(self) -> float | None:
        return keep_alive_seconds(self.keep_alive)


def generate_request(
    body: GenerateBody, limits: TemplateLimits = DEFAULT_LIMITS
) -> GenerateRequest:
    """The GenerateRequest of a checked body; RequestError for what the types cannot say.
    `limits`: how far the request's own `template` may go."""
    if not body.model:
        raise RequestError("model is required; GET /api/tags lists the models", param="model")
    refuse_images(body.images, body.model)
    if body.width is not None or body.height is not None:
        refuse_images(True, body.model, "width/height (image generation)")
    if body.suffix:
        raise RequestError(
            "suffix (fill-in-the-middle) is not supported; send the text before the gap as"
            " the prompt",
            param="suffix",
        )
    if body.raw and body.template is not None:
        raise RequestError("raw and template exclude each other: send one", param="raw")
    body.keep_alive_seconds()
    options = body.options or Options()
    prompt = body.prompt or ""
    if body.template is not None and prompt:
        # A request's own template: rendered here, then continued as raw text.
        values = {"System": body.system or "", "Prompt": prompt, "Response": ""}
        first = not body.context
        prompt = render_go_template(body.template, {**values, "First": first}, limits)
    return GenerateRequest(
        model=body.model,
        prompt=prompt,
        system=body.system,
        raw=body.raw or (body.template is not None and bool(prompt)),
        context=body.context,
        settings=options.settings(
            response_format=response_format(body.format),
            think=think_flag(body.think),
            stream=body.stream,
        ),
    )


class GenerateLines:
    """Renders one generate: pieces as they come, then the final object with the counts
    and durations (nanoseconds, as Ollama reports them)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.started = time.perf_counter_ns()
        self.first_token: int | None = None

    def piece(self, text: str = "", thinking: str = "") -> dict[str, Any]:
        if self.first_token is None and text:
            self.first_token = time.perf_counter_ns()
        line: dict[str, Any] = self._head(text)
        if thinking:
            line["thinking"] = thinking
        return {**line, "done": False}

    def final(
        self,
        finish: Finish,
        context: list[int] | None,
        text: str = "",
        thinking: str = "",
    ) -> dict[str, Any]:
        now = time.perf_counter_ns()
        first = self.first_token or now
        line = self._head(text)
        if thinking:
            line["thinking"] = thinking
        line.update(
            done=True,
            done_reason=DONE_REASONS.get(finish.reason, finish.reason),
            total_duration=now - self.started,
            load_duration=0,
            prompt_eval_count=finish.usage.prompt_tokens,
            prompt_eval_duration=first - self.started,
            eval_count=finish.usage.completion_tokens,
            eval_duration=now - first,
        )
        if context is not None:
            line["context"] = context
        return line

    def loaded(self, reason: str) -> dict[str, Any]:
        """The answer to a prompt-less generate: the model is loaded ("load") or unloaded
        ("unload")."""
        return {**self._head(""), "done": True, "done_reason": reason}

    def _head(self, text: str) -> dict[str, Any]:
        return {"model": self.model, "created_at": iso_time(time.time()), "response": text}
