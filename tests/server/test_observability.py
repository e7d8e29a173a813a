"""Metrics and traces of real requests: the real app under uvicorn, the `openai` SDK, a
scripted model and real MCP servers over stdio (the pantry and faults test servers); the
metrics read from GET /metrics as Prometheus parses them, the spans from an in-memory
exporter handed to the app."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from openai import OpenAI
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families
from tests.support.live import SCRIPTED_HOST, LiveServer, pantry_server, scripted_config
from tests.support.real_servers import faults

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.messages import ToolCall, Usage
from farmhand.providers.scripted import ScriptedProvider, Step

KEY = "metrics-test-key"
CALLER_TRACE = 0x4BF92F3577B34DA6A3CE929D0E0E4736
Labels = dict[str, str]


@dataclass
class Observed:
    server: LiveServer
    spans: InMemorySpanExporter
    client: OpenAI

    def metrics(self) -> dict[str, list[tuple[Labels, float]]]:
        """Every sample of GET /metrics by its name, as Prometheus's own parser reads it."""
        answer = httpx.get(self.server.url + "/metrics", headers={"authorization": f"Bearer {KEY}"})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        samples: dict[str, list[tuple[Labels, float]]] = {}
        for family in text_string_to_metric_families(answer.text):
            for sample in family.samples:
                samples.setdefault(sample.name, []).append((sample.labels, sample.value))
        return samples


def value(samples: dict[str, list[tuple[Labels, float]]], name: str, **labels: str) -> float:
    """The value of the one sample of `name` whose labels include `labels`."""
    found = [v for have, v in samples.get(name, []) if labels.items() <= have.items()]
    assert len(found) == 1, f"{name}{labels}: {samples.get(name)}"
    return found[0]


@contextmanager
def observed(config: FarmhandConfig, provider: ScriptedProvider, home: Path) -> Iterator[Observed]:
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    app = create_app(
        config,
        home=home,
        provider_factory=lambda _: provider,
        api_keys=[KEY],
        tracer_provider=tracing,
    )
    with LiveServer(app) as server:
        yield Observed(server, spans, OpenAI(base_url=server.url + "/v1", api_key=KEY))
    provider.assert_done()


def by_name(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.name == name]


def test_a_chat_with_one_tool_call_is_counted_and_traced(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            Step.calls(
                ToolCall("pantry:echo", {"text": "moo"}, id="call_echo"), usage=Usage(30, 7)
            ),
            Step.text("The pantry said moo.", usage=Usage(45, 6)),
        ]
    )
    with observed(scripted_config(pantry_server()), provider, tmp_path) as seen:
        stream = seen.client.chat.completions.create(
            model="farm",
            messages=[{"role": "user", "content": "echo moo"}],
            stream=True,
            extra_headers={"traceparent": f"00-{CALLER_TRACE:032x}-00f067aa0ba902b7-01"},
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        assert text == "The pantry said moo."
        metrics = seen.metrics()

    route = {"dialect": "openai", "route": "/v1/chat/completions"}
    assert value(metrics, "farmhand_requests_total", status="200", **route) == 1
    assert value(metrics, "farmhand_request_duration_seconds_count", **route) == 1
    assert value(metrics, "farmhand_request_first_byte_seconds_count", **route) == 1
    first_byte = value(metrics, "farmhand_request_first_byte_seconds_sum", **route)
    assert 0 < first_byte <= value(metrics, "farmhand_request_duration_seconds_sum", **route)
    assert value(metrics, "farmhand_tokens_total", model="farm", direction="in") == 75
    assert value(metrics, "farmhand_tokens_total", model="farm", direction="out") == 13
    tool = {"server": "pantry", "tool": "echo"}
    assert value(metrics, "farmhand_tool_calls_total", outcome="ok", **tool) == 1
    assert value(metrics, "farmhand_tool_call_duration_seconds_count", **tool) == 1
    assert value(metrics, "farmhand_mcp_pool_servers", status="running") == 1
    assert "farmhand_mcp_timeouts_total" not in metrics  # no series until one happens

    (request,) = by_name(seen.spans, "POST /v1/chat/completions")
    assert request.kind is SpanKind.SERVER
    assert request.context.trace_id == CALLER_TRACE  # the caller's trace, continued
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/v1/chat/completions"
    assert request.attributes["http.response.status_code"] == 200
    turns = by_name(seen.spans, "chat farm")
    assert len(turns) == 2
    first, second = sorted(turns, key=lambda s: s.start_time or 0)
    for turn in turns:
        assert turn.kind is SpanKind.CLIENT
        assert turn.parent is not None and turn.parent.span_id == request.context.span_id
        assert turn.attributes is not None
        assert turn.attributes["gen_ai.operation.name"] == "chat"
        assert turn.attributes["gen_ai.request.model"] == "farm"
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["gen_ai.usage.input_tokens"] == 30
    assert first.attributes["gen_ai.usage.output_tokens"] == 7
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.usage.input_tokens"] == 45
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    (call,) = by_name(seen.spans, "execute_tool pantry:echo")
    assert call.parent is not None and call.parent.span_id == request.context.span_id
    assert call.attributes is not None
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "pantry:echo"
    assert call.attributes["gen_ai.tool.call.id"] == "call_echo"
    assert call.status.is_ok
    assert first.end_time is not None and call.start_time is not None
    assert first.end_time <= call.start_time  # the call ran after the turn that wrote it


def test_timeouts_restarts_and_calls_of_no_tool_are_counted(tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("faults:hang", {"seconds": 30}, id="call_hang")),
            Step.calls(ToolCall("faults:crash_once", {"marker": str(marker)})),
            Step.calls(ToolCall("pantry:made_up", {"text": "x"})),
            Step.text("Done."),
        ]
    )
    config = scripted_config(pantry_server(), faults(tool_timeout=0.5))
    with observed(config, provider, tmp_path) as seen:
        reply = seen.client.chat.completions.create(
            model="farm", messages=[{"role": "user", "content": "try them"}]
        )
        assert reply.choices[0].message.content == "Done."
        metrics = seen.metrics()

    assert value(metrics, "farmhand_mcp_timeouts_total", server="faults") == 1
    assert value(metrics, "farmhand_mcp_server_restarts_total", server="faults") == 1
    calls = "farmhand_tool_calls_total"
    assert value(metrics, calls, server="faults", tool="hang", outcome="error") == 1
    assert value(metrics, calls, server="faults", tool="crash_once", outcome="ok") == 1
    # A name the model made up is no label of its own: it would let a model grow them.
    assert value(metrics, calls, server="none", tool="unknown", outcome="invalid") == 1
    assert not [labels for labels, _ in metrics[calls] if labels["tool"] == "made_up"]
    (hang,) = by_name(seen.spans, "execute_tool faults:hang")
    assert not hang.status.is_ok
    assert hang.attributes is not None and hang.attributes["error.type"] == "error"


def test_a_projects_model_is_labelled_with_its_project(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [Step.text("From the project.", usage=Usage(11, 3)), Step.text("From the operator.")]
    )
    # The client's project names its model like the operator's: still told apart.
    model = {"name": "farm", "provider": "openai", "model": "scripted"}
    config = {"runtime": {"models": [{**model, "base_url": f"http://{SCRIPTED_HOST}"}]}}
    with observed(scripted_config(), provider, tmp_path) as seen:
        auth = {"authorization": f"Bearer {KEY}"}
        written = httpx.post(
            seen.server.url + "/v1/projects/team",
            json={"name": "notes", "config": config},
            headers=auth,
        )
        assert written.status_code == 200, written.text
        chat = {"model": "farm", "messages": [{"role": "user", "content": "hi"}]}
        url = seen.server.url + "/v1/projects/team/notes/chat/completions"
        answer = httpx.post(url, json=chat, headers=auth)
        assert answer.status_code == 200, answer.text
        plain = seen.client.chat.completions.create(
            model="farm", messages=[{"role": "user", "content": "hi"}]
        )
        assert plain.choices[0].message.content == "From the operator."
        metrics = seen.metrics()

    assert value(metrics, "farmhand_tokens_total", model="team/notes/farm", direction="in") == 11
    assert value(metrics, "farmhand_tokens_total", model="team/notes/farm", direction="out") == 3
    models = {labels["model"] for labels, _ in metrics["farmhand_tokens_total"]}
    assert models == {"team/notes/farm", "farm"}
    route = {"route": "/v1/projects/{namespace}/{project}/chat/completions", "status": "200"}
    assert value(metrics, "farmhand_requests_total", **route) == 1


def test_a_tool_called_by_hand_is_counted_as_the_hands(tmp_path: Path) -> None:
    with observed(scripted_config(pantry_server()), ScriptedProvider([]), tmp_path) as seen:
        auth = {"authorization": f"Bearer {KEY}"}
        url = seen.server.url + "/api/mcp/call"
        for tool in ("echo", "made_up"):
            body = {"server": "pantry", "tool": tool, "arguments": {"text": "moo"}}
            answer = httpx.post(url, json=body, headers=auth, timeout=60)
            assert answer.status_code == 200, answer.text
        assert answer.json()["is_error"] is True  # no such tool: the server says so
        metrics = seen.metrics()

    calls = "farmhand_tool_calls_total"
    echo = {"server": "pantry", "tool": "echo", "caller": "hand"}
    assert value(metrics, calls, outcome="ok", **echo) == 1
    assert value(metrics, "farmhand_tool_call_duration_seconds_count", **echo) == 1
    # A name the client made up is no label of its own, as one a model made up.
    assert value(metrics, calls, server="none", tool="unknown", caller="hand") == 1
    assert not [labels for labels, _ in metrics[calls] if labels["caller"] != "hand"]
    requests = by_name(seen.spans, "POST /api/mcp/call")
    (call,) = by_name(seen.spans, "execute_tool pantry:echo")
    assert call.parent is not None
    assert call.parent.span_id in {r.context.span_id for r in requests}  # under its request
    assert call.status.is_ok


def test_metrics_refuse_a_client_without_the_key(tmp_path: Path) -> None:
    app = create_app(scripted_config(), home=tmp_path, api_keys=[KEY])
    with LiveServer(app) as server:
        refused = httpx.get(server.url + "/metrics")
        wrong = httpx.get(server.url + "/metrics", headers={"authorization": "Bearer nope"})
        key = {"x-api-key": KEY}
        assert httpx.get(server.url + "/no/such/path-8c1f", headers=key).status_code == 404
        let_in = httpx.get(server.url + "/metrics", headers=key)
    for answer in (refused, wrong):
        assert answer.status_code == 401
        assert "API key" in answer.json()["error"]["message"]
        assert "farmhand_" not in answer.text
    assert let_in.status_code == 200
    # The refusals themselves are counted, under no route (they never reached one).
    families = {f.name: f for f in text_string_to_metric_families(let_in.text)}
    refusals = [s for s in families["farmhand_requests"].samples if s.labels["status"] == "401"]
    assert [(s.labels["route"], s.value) for s in refusals] == [("none", 2.0)]
    assert "path-8c1f" not in let_in.text  # a path is never a label: any client could grow them
    (missing,) = [s for s in families["farmhand_requests"].samples if s.labels["status"] == "404"]
    assert missing.labels["route"] == "none"


def test_metrics_can_be_switched_off(tmp_path: Path) -> None:
    config = FarmhandConfig.model_validate({"server": {"metrics": False}})
    with LiveServer(create_app(config, home=tmp_path, api_keys=[])) as server:
        answer = httpx.get(server.url + "/metrics")
    assert answer.status_code == 404
    assert "server: {metrics: true}" in answer.json()["error"]["message"]
