"""`Recorder`: the observer that records, into Prometheus metrics and OpenTelemetry spans.

Spans of model turns and tool calls are children of the span that was current when the
chat began (the HTTP request's), started with that context explicitly rather than made
current: a chat is an async generator, and a context attached in one step of a generator
cannot be detached safely in another.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from contextvars import Token
from types import TracebackType

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from farmhand.observability import tracing
from farmhand.observability.labels import (
    FROM_REQUEST,
    HAND,
    MODEL,
    ClientProjectModels,
    LabelBounds,
)
from farmhand.observability.metrics import DeploymentSource, FarmhandMetrics
from farmhand.observability.observer import ChatWatch, Observer, ToolWatch, TurnWatch
from farmhand.version import farmhand_version


class Recorder(Observer):
    """Records into `metrics` (None: no metrics) and spans from `tracer_provider` (None:
    no traces). `owns_provider`: `close()` shuts the provider down (one built from the
    environment); a provider handed in is its owner's to close."""

    def __init__(
        self,
        bounds: LabelBounds,
        metrics: FarmhandMetrics | None,
        tracer_provider: TracerProvider | None = None,
        *,
        owns_provider: bool = False,
    ) -> None:
        self.bounds = bounds
        self.metrics = metrics
        self.tracer_provider = tracer_provider
        self.owns_provider = owns_provider
        self.tracer = (
            tracer_provider.get_tracer("farmhand", farmhand_version())
            if tracer_provider is not None
            else None
        )
        self.propagator = TraceContextTextMapPropagator()
        # Shared by every project's view: the labels of projects written through the API.
        self.client_projects = ClientProjectModels()
        self.client_tools = ClientProjectModels()

    def chat(self, model: str, provider: str) -> ChatWatch:
        return LiveChat(self, model, provider)

    def hand_call(self, name: str, call_id: str, *, offered: bool) -> ToolWatch:
        parent = otel_context.get_current() if self.tracer is not None else None
        return LiveTool(self, parent, name, call_id, offered=offered, caller=HAND)

    def for_project(
        self, namespace: str, project: str, *, from_api: bool, servers: Iterable[str] | None = None
    ) -> Observer:
        view = copy.copy(self)  # the same metrics and tracer; the provider stays ours
        view.owns_provider = False
        view.bounds = self.bounds.for_project(
            namespace,
            project,
            self.client_projects if from_api else None,
            servers=servers,
            client_tools=self.client_tools if from_api else None,
        )
        return view

    def request(self, method: str, path: str, carrier: Mapping[str, str]) -> RequestWatch:
        """One HTTP request; `carrier`: its `traceparent`/`tracestate` headers, if any."""
        return RequestWatch(self, method, path, carrier)

    def watch_deployments(self, source: DeploymentSource) -> None:
        """Export the deployments `source` reports (`FarmhandMetrics.watch_deployments`),
        those of configured models only: a project's model names and backend URLs are a
        client's text."""
        if self.metrics is None:
            return
        models = self.bounds.models
        self.metrics.watch_deployments(
            lambda: [(model, states) for model, states in source() if model in models]
        )

    def mcp_restart(self, server: str, *, operators: bool = True) -> None:
        if self.metrics is not None:
            self.metrics.mcp_restarts.labels(self.server_label(server, operators)).inc()

    def mcp_timeout(self, server: str, *, operators: bool = True) -> None:
        if self.metrics is not None:
            self.metrics.mcp_timeouts.labels(self.server_label(server, operators)).inc()

    def server_label(self, server: str, operators: bool) -> str:
        return self.bounds.server(server) if operators else FROM_REQUEST

    def embedded_wait(self, model: str, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.embedded_wait.labels(self.bounds.model(model)).observe(seconds)

    def close(self) -> None:
        if self.owns_provider and self.tracer_provider is not None:
            self.tracer_provider.shutdown()


class RequestWatch:
    """One HTTP request: a SERVER span made current while the app runs (`start`), and the
    request metrics once its route and status are known (`finish`)."""

    def __init__(
        self, recorder: Recorder, method: str, path: str, carrier: Mapping[str, str]
    ) -> None:
        self.recorder = recorder
        self.method = method
        self.started = time.perf_counter()
        self.first_byte_at: float | None = None
        self.span: Span | None = None
        self.token: Token[Context] | None = None
        tracer = recorder.tracer
        if tracer is not None:
            parent = recorder.propagator.extract(carrier) if carrier else None
            self.span = tracer.start_span(
                method,
                context=parent,
                kind=SpanKind.SERVER,
                attributes={tracing.HTTP_METHOD: method, tracing.URL_PATH: path},
            )

    def start(self) -> None:
        """Make the request's span current (its chat's spans become its children)."""
        if self.span is not None:
            self.token = otel_context.attach(set_span_in_context(self.span))

    def first_byte(self) -> None:
        if self.first_byte_at is None:
            self.first_byte_at = time.perf_counter()

    def finish(self, dialect: str, route: str, status: int) -> None:
        """Record the request; `route` a template (or a fixed word), never a raw path."""
        ended = time.perf_counter()
        metrics = self.recorder.metrics
        if metrics is not None:
            series = metrics.request_series(dialect, route, status)
            series.requests.inc()
            series.duration.observe(ended - self.started)
            if self.first_byte_at is not None:
                series.first_byte.observe(self.first_byte_at - self.started)
        if self.token is not None:
            otel_context.detach(self.token)
        span = self.span
        if span is not None and span.is_recording():  # not one a sampler left out
            span.update_name(f"{self.method} {route}")
            attributes: dict[str, str | int] = {
                tracing.HTTP_ROUTE: route,
                tracing.HTTP_STATUS: status,
            }
            if status >= 500:
                span.set_status(Status(StatusCode.ERROR))
                attributes[tracing.ERROR_TYPE] = str(status)
            span.set_attributes(attributes)  # one lock, not one per attribute
            span.end()


class LiveChat(ChatWatch):
    def __init__(self, recorder: Recorder, model: str, provider: str) -> None:
        self.recorder = recorder
        self.model = model
        self.provider = provider
        self.parent = otel_context.get_current() if recorder.tracer is not None else None
        metrics = recorder.metrics
        self.tokens = (
            metrics.token_series(recorder.bounds.model(model)) if metrics is not None else None
        )

    def turn(self) -> TurnWatch:
        return LiveTurn(self)

    def tool_call(self, name: str, call_id: str, *, offered: bool) -> ToolWatch:
        return LiveTool(self.recorder, self.parent, name, call_id, offered=offered, caller=MODEL)


def _end(span: Span | None, exc: BaseException | None) -> None:
    if span is None:
        return
    if exc is not None and not isinstance(exc, GeneratorExit):
        span.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
        span.set_attribute(tracing.ERROR_TYPE, type(exc).__qualname__)
    span.end()


class LiveTurn(TurnWatch):
    def __init__(self, chat: LiveChat) -> None:
        self.chat = chat
        tracer: Tracer | None = chat.recorder.tracer
        self.span: Span | None = None
        if tracer is not None:  # its name and attributes are built only when traced
            self.span = tracer.start_span(
                f"chat {chat.model}",
                context=chat.parent,
                kind=SpanKind.CLIENT,
                attributes={
                    tracing.OPERATION: "chat",
                    tracing.REQUEST_MODEL: chat.model,
                    tracing.PROVIDER: chat.provider,
                },
            )

    def __enter__(self) -> LiveTurn:
        return self

    def finished(self, input_tokens: int, output_tokens: int, reason: str) -> None:
        if self.chat.tokens is not None:
            tokens_in, tokens_out = self.chat.tokens
            tokens_in.inc(input_tokens)
            tokens_out.inc(output_tokens)
        span = self.span
        if span is not None and span.is_recording():
            span.set_attributes(
                {
                    tracing.INPUT_TOKENS: input_tokens,
                    tracing.OUTPUT_TOKENS: output_tokens,
                    tracing.FINISH_REASONS: (reason,),
                }
            )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _end(self.span, exc)


class LiveTool(ToolWatch):
    """One tool call, a child of `parent` (the request's context); `caller`: MODEL for
    the tool loop's calls, HAND for a person's."""

    def __init__(
        self,
        recorder: Recorder,
        parent: Context | None,
        name: str,
        call_id: str,
        *,
        offered: bool,
        caller: str,
    ) -> None:
        self.recorder = recorder
        self.caller = caller
        self.server, self.tool = recorder.bounds.tool(name, offered=offered)
        self.started = time.perf_counter()
        self.outcome: str | None = None
        tracer: Tracer | None = recorder.tracer
        self.span: Span | None = None
        if tracer is not None:
            self.span = tracer.start_span(
                f"execute_tool {name}",
                context=parent,
                kind=SpanKind.INTERNAL,
                attributes={
                    tracing.OPERATION: "execute_tool",
                    tracing.TOOL_NAME: name,
                    tracing.TOOL_CALL_ID: call_id,
                    tracing.TOOL_TYPE: "function",
                },
            )

    def __enter__(self) -> LiveTool:
        return self

    def done(self, outcome: str) -> None:
        self.outcome = outcome
        metrics = self.recorder.metrics
        if metrics is not None:
            metrics.tool_calls.labels(self.server, self.tool, outcome, self.caller).inc()
            elapsed = time.perf_counter() - self.started
            metrics.tool_duration.labels(self.server, self.tool, self.caller).observe(elapsed)
        if self.span is not None and outcome != "ok":
            self.span.set_status(Status(StatusCode.ERROR, outcome))
            self.span.set_attribute(tracing.ERROR_TYPE, outcome)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.outcome is None:  # ended by an exception (cancelled: the client left)
            self.done("cancelled" if exc is not None else "unfinished")
        _end(self.span, exc)
