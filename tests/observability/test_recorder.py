"""The observability package's own logic: bounded labels, gauges read when scraped (the MCP
pool, backend deployments), the tracer provider the environment asks for, the recorder's
watches, and the embedded engine's queue reported through the service's provider factory.
(The metrics and spans of real requests: tests/server/test_observability.py.)"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from prometheus_client.parser import text_string_to_metric_families
from tests.support.real_servers import faults

from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.observability import (
    NO_OBSERVER,
    ClientProjectModels,
    Deployment,
    FarmhandMetrics,
    LabelBounds,
    Recorder,
    observer_for,
    tracer_provider_from_env,
)
from farmhand.providers.llamacpp.engine import Engine
from farmhand.providers.prompt_based import PromptBasedProvider
from farmhand.providers.scripted import ScriptedProvider
from farmhand.service.projects import state_for, store_for
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool

Sample = tuple[str, dict[str, str], float]


def samples(metrics: FarmhandMetrics) -> list[Sample]:
    text = metrics.exposition().decode()
    return [
        (s.name, s.labels, s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


BOUNDS = LabelBounds.of(models=["farm"], servers=["pantry"])


@pytest.mark.parametrize(
    ("name", "offered", "labels"),
    [
        ("pantry:echo", True, ("pantry", "echo")),
        ("rag_query", True, ("builtin", "rag_query")),  # farmhand's own: its config names it
        ("theirs:drop_tables", True, ("request", "request")),  # a server a request brought
        ("pantry:whatever_the_model_wrote", False, ("none", "unknown")),
        ("no separator at all", False, ("none", "unknown")),
    ],
)
def test_tool_labels_are_configured_names_or_fixed_words(
    name: str, offered: bool, labels: tuple[str, str]
) -> None:
    assert BOUNDS.tool(name, offered=offered) == labels


def test_models_and_servers_a_request_named_share_one_label() -> None:
    assert BOUNDS.model("farm") == "farm"
    assert BOUNDS.model("a project's model") == "request"
    assert BOUNDS.server("pantry") == "pantry"
    assert BOUNDS.server("evil") == "request"


def test_a_projects_models_are_named_by_the_project() -> None:
    operators = BOUNDS.for_project("team", "notes", client=None)
    assert operators.model("farm") == "team/notes/farm"  # not the operator's "farm"
    assert operators.model("x" * 500) == "team/notes/" + "x" * 64
    assert operators.server("pantry") == "pantry"  # servers stay the operator's names


def test_a_clients_projects_share_one_label_past_the_bound() -> None:
    kept = ClientProjectModels(limit=2)
    first = BOUNDS.for_project("a", "one", kept)
    second = BOUNDS.for_project("a", "two", kept)
    assert first.model("m") == "a/one/m"
    assert second.model("m") == "a/two/m"
    assert second.model("other") == "request"  # a third name: past the bound
    assert first.model("m") == "a/one/m"  # the ones kept stay
    operators = BOUNDS.for_project("a", "three", client=None)
    assert operators.model("m") == "a/three/m"  # the operator's files are not bounded


def test_a_projects_own_servers_are_named_by_the_project() -> None:
    operators = BOUNDS.for_project("team", "notes", client=None, servers=["pantry", "barn"])
    assert operators.server("pantry") == "team/notes/pantry"  # not the operator's "pantry"
    assert operators.tool("pantry:echo", offered=True) == ("team/notes/pantry", "echo")
    assert operators.tool("elsewhere:echo", offered=True) == ("request", "request")
    assert operators.tool("rag_query", offered=True) == ("builtin", "rag_query")
    kept, tools = ClientProjectModels(limit=1), ClientProjectModels(limit=2)
    client = BOUNDS.for_project("a", "p", kept, servers=["pantry", "barn"], client_tools=tools)
    assert client.tool("pantry:echo", offered=True) == ("a/p/pantry", "echo")
    assert client.tool("pantry:" + "t" * 300, offered=True) == ("a/p/pantry", "t" * 64)
    assert client.tool("pantry:third", offered=True) == ("a/p/pantry", "request")  # bounded
    assert client.tool("barn:echo", offered=True) == ("request", "request")  # past the bound


def test_a_clients_server_named_like_the_operators_is_counted_as_the_projects(
    tmp_path: Path,
) -> None:
    operator = FarmhandConfig.model_validate(
        {
            "mcp": {"servers": [{"name": "pantry", "command": "pantry-server"}]},
            "server": {"request_servers": {"http_hosts": ["127.0.0.1:9"]}},
        }
    )
    observer = observer_for(metrics=True, models=["default"], servers=["pantry"], environ={})
    state = ServiceState.for_config(operator, home=tmp_path, observer=observer)
    theirs = {"name": "pantry", "transport": "http", "base_url": "http://127.0.0.1:9/mcp"}
    project = store_for(state).create("team", "notes", {"mcp": {"servers": [theirs]}})
    assert project.from_api
    chats = state_for(state, project)
    with chats.observer.chat("default", "openai").tool_call(
        "pantry:echo", "c1", offered=True
    ) as call:
        call.done("ok")
    with observer.chat("default", "openai").tool_call("pantry:echo", "c2", offered=True) as call:
        call.done("ok")  # the operator's own, for comparison
    assert observer.metrics is not None
    found = samples(observer.metrics)
    calls = "farmhand_tool_calls_total"
    theirs_labels = {
        "server": "team/notes/pantry",
        "tool": "echo",
        "outcome": "ok",
        "caller": "model",
    }
    operators = {"server": "pantry", "tool": "echo", "outcome": "ok", "caller": "model"}
    assert (calls, theirs_labels, 1.0) in found
    assert (calls, operators, 1.0) in found  # one each: the client's call is not the operator's


def test_a_project_view_records_into_the_same_metrics() -> None:
    recorder = Recorder(BOUNDS, FarmhandMetrics())
    client = recorder.for_project("a", "p", from_api=True)
    operators = recorder.for_project("team", "notes", from_api=False)
    for observer in (client, operators, recorder):
        with observer.chat("farm", "openai").turn() as turn:
            turn.finished(10, 2, "stop")
    assert recorder.metrics is not None and client.metrics is recorder.metrics
    found = {
        labels["model"]: value
        for name, labels, value in samples(recorder.metrics)
        if name == "farmhand_tokens_total" and labels["direction"] == "in"
    }
    assert found == {"a/p/farm": 10.0, "team/notes/farm": 10.0, "farm": 10.0}
    assert isinstance(client, Recorder) and client.bounds.client is recorder.client_projects
    assert NO_OBSERVER.for_project("a", "p", from_api=True) is NO_OBSERVER


def test_a_call_by_hand_is_counted_apart_from_the_models() -> None:
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    recorder = Recorder(BOUNDS, FarmhandMetrics(), tracing)
    with recorder.hand_call("pantry:echo", "hand_1", offered=True) as call:
        call.done("ok")
    with recorder.hand_call("pantry:no_such_tool", "hand_2", offered=False) as call:
        call.done("error")
    with recorder.chat("farm", "openai").tool_call("pantry:echo", "c", offered=True) as call:
        call.done("ok")
    assert recorder.metrics is not None
    found = samples(recorder.metrics)
    by_hand = {"server": "pantry", "tool": "echo", "outcome": "ok", "caller": "hand"}
    by_model = {**by_hand, "caller": "model"}
    unknown = {"server": "none", "tool": "unknown", "outcome": "error", "caller": "hand"}
    for labels in (by_hand, by_model, unknown):
        assert ("farmhand_tool_calls_total", labels, 1.0) in found
    durations = {"server": "pantry", "tool": "echo", "caller": "hand"}
    assert ("farmhand_tool_call_duration_seconds_count", durations, 1.0) in found
    hand_spans = [s for s in spans.get_finished_spans() if s.attributes is not None]
    names = sorted(str(s.attributes["gen_ai.tool.call.id"]) for s in hand_spans)
    assert names == ["c", "hand_1", "hand_2"]
    (failed,) = [s for s in hand_spans if not s.status.is_ok]
    assert failed.attributes is not None and failed.attributes["error.type"] == "error"


def test_spans_a_sampler_leaves_out_are_left_alone_and_metrics_still_count() -> None:
    spans = InMemorySpanExporter()
    tracing = TracerProvider(sampler=ALWAYS_OFF)
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    recorder = Recorder(BOUNDS, FarmhandMetrics(), tracing)
    request = recorder.request("POST", "/v1/chat/completions", {})
    request.start()
    with recorder.chat("farm", "openai").turn() as turn:
        turn.finished(5, 1, "stop")
    request.finish("openai", "/v1/chat/completions", 200)
    assert spans.get_finished_spans() == ()
    assert request.span is not None and not request.span.is_recording()
    assert recorder.metrics is not None
    found = samples(recorder.metrics)
    assert ("farmhand_tokens_total", {"model": "farm", "direction": "out"}, 1.0) in found
    route = {"dialect": "openai", "route": "/v1/chat/completions", "status": "200"}
    assert ("farmhand_requests_total", route, 1.0) in found


def test_the_pool_gauge_counts_servers_by_status_when_scraped() -> None:
    metrics = FarmhandMetrics()
    statuses = ["running", "idle"]
    metrics.watch_pool(lambda: statuses)
    statuses.append("running")  # read at scrape time, not at registration
    pool = {s[1]["status"]: s[2] for s in samples(metrics) if s[0] == "farmhand_mcp_pool_servers"}
    assert pool == {"idle": 1.0, "running": 2.0}


@dataclass(frozen=True)
class PoolEntry:
    """A pool's own snapshot entry: anything with `url`, `health` and `in_flight` will do."""

    url: str
    health: str
    in_flight: int
    failures: int = 0


def test_deployments_of_configured_models_are_read_when_scraped() -> None:
    recorder = Recorder(BOUNDS, FarmhandMetrics())
    pools: dict[str, list[PoolEntry | Deployment]] = {
        "farm": [PoolEntry("http://10.0.0.1:8080/v1", "healthy", 3)],
        "a project's model": [Deployment("http://client.example/v1", "healthy", 1)],
    }
    recorder.watch_deployments(lambda: pools.items())  # the one line a backend pool needs
    pools["farm"].append(Deployment("http://10.0.0.2:8080/v1", "cooling", 0))
    assert recorder.metrics is not None
    found = {
        (name, labels["model"], labels["deployment"]): value
        for name, labels, value in samples(recorder.metrics)
        if name.startswith("farmhand_deployment_")
    }
    assert found == {
        ("farmhand_deployment_up", "farm", "http://10.0.0.1:8080/v1"): 1.0,
        ("farmhand_deployment_in_flight", "farm", "http://10.0.0.1:8080/v1"): 3.0,
        ("farmhand_deployment_up", "farm", "http://10.0.0.2:8080/v1"): 0.0,
        ("farmhand_deployment_in_flight", "farm", "http://10.0.0.2:8080/v1"): 0.0,
    }


def test_two_apps_keep_their_metrics_apart() -> None:
    first, second = FarmhandMetrics(), FarmhandMetrics()  # no global registry: no clash
    first.mcp_timeouts.labels("pantry").inc()
    assert ("farmhand_mcp_timeouts_total", {"server": "pantry"}, 1.0) in samples(first)
    assert not [s for s in samples(second) if s[0] == "farmhand_mcp_timeouts_total"]


def test_tracing_follows_the_standard_environment() -> None:
    assert tracer_provider_from_env({}) is None
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    assert tracer_provider_from_env({**endpoint, "OTEL_SDK_DISABLED": "true"}) is None
    provider = tracer_provider_from_env({**endpoint, "OTEL_SERVICE_NAME": "farm-a"})
    assert provider is not None
    assert provider.resource.attributes["service.name"] == "farm-a"
    provider.shutdown()


def test_nothing_on_means_the_no_op_observer() -> None:
    off = observer_for(metrics=False, models=[], servers=[], environ={})
    assert off is NO_OBSERVER and not off.active
    on = observer_for(metrics=True, models=[], servers=[], environ={})
    assert isinstance(on, Recorder) and on.metrics is not None and on.tracer is None


def test_a_tool_call_ended_by_an_exception_is_counted_and_its_span_failed() -> None:
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    recorder = Recorder(BOUNDS, FarmhandMetrics(), tracing)
    chat = recorder.chat("farm", "openai")
    with pytest.raises(asyncio.CancelledError), chat.tool_call("pantry:echo", "c", offered=True):
        raise asyncio.CancelledError
    assert recorder.metrics is not None
    labels = {"server": "pantry", "tool": "echo", "outcome": "cancelled", "caller": "model"}
    assert ("farmhand_tool_calls_total", labels, 1.0) in samples(recorder.metrics)
    (span,) = spans.get_finished_spans()
    assert not span.status.is_ok
    assert span.attributes is not None and span.attributes["error.type"] == "CancelledError"


def test_a_turn_queued_behind_another_reports_its_wait() -> None:
    engine = Engine("m")
    waits: list[float] = []
    engine.on_wait = waits.append
    held = 0.0

    async def main() -> None:
        nonlocal held
        first_in = anyio.Event()

        async def first() -> None:
            nonlocal held
            async with engine.turn():
                started = time.perf_counter()
                first_in.set()
                await anyio.sleep(0.05)
                held = time.perf_counter() - started

        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await first_in.wait()
            async with engine.turn():  # queued until the first turn lets go
                pass

    anyio.run(main)
    engine.close()
    assert engine.join(10)
    assert len(waits) == 2
    assert waits[1] >= held  # the second turn's wait covers the first turn's hold


def test_the_service_wires_embedded_waits_to_the_observer() -> None:
    class Embedded(ScriptedProvider):
        """A provider with an engine queue: it reports waits like the embedded one."""

        def report_waits(self, callback: object) -> None:
            self.report = callback

    built: list[Embedded] = []

    def factory(model: ModelConfig) -> PromptBasedProvider:
        built.append(Embedded())
        return PromptBasedProvider(built[-1])  # found inside a wrapper too

    config = FarmhandConfig.model_validate({"runtime": {"models": [{"name": "farm"}]}})
    observer = observer_for(metrics=True, models=["farm"], servers=[], environ={})
    state = ServiceState.for_config(config, provider_factory=factory, observer=observer)
    anyio.run(state.provider, config.model("farm"))
    built[0].report(0.25)  # type: ignore[operator]
    assert observer.metrics is not None
    found = samples(observer.metrics)
    assert ("farmhand_embedded_wait_seconds_count", {"model": "farm"}, 1.0) in found
    assert ("farmhand_embedded_wait_seconds_sum", {"model": "farm"}, 0.25) in found


def test_a_projects_embedded_waits_are_labelled_with_its_project(tmp_path: Path) -> None:
    class Embedded(ScriptedProvider):
        def report_waits(self, callback: object) -> None:
            self.report = callback

    built: list[Embedded] = []

    def factory(model: ModelConfig) -> Embedded:
        built.append(Embedded())
        return built[-1]

    operator = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "farm"}]}, "server": {"allowed_dirs": [str(tmp_path)]}}
    )
    observer = observer_for(metrics=True, models=["farm"], servers=[], environ={})
    state = ServiceState.for_config(
        operator, home=tmp_path, provider_factory=factory, observer=observer
    )
    # A client's project names its embedded model like the operator's (another file).
    model = {"name": "farm", "model": str(tmp_path / "theirs.gguf")}
    project = store_for(state).create("team", "notes", {"runtime": {"models": [model]}})
    assert project.from_api
    chats = state_for(state, project)
    anyio.run(chats.provider, chats.config.model("farm"))
    built[-1].report(0.5)  # type: ignore[operator]
    assert observer.metrics is not None
    found = samples(observer.metrics)
    labels = {"model": "team/notes/farm"}
    assert ("farmhand_embedded_wait_seconds_count", labels, 1.0) in found
    assert not [
        s for s in found if s[0].startswith("farmhand_embedded") and s[1] == {"model": "farm"}
    ]


def test_the_service_exports_the_deployments_of_a_pooled_model() -> None:
    class Pooled(ScriptedProvider):
        """A model served by a pool of deployments: `snapshot()` as `DeploymentPool`'s."""

        def snapshot(self) -> list[Deployment]:
            return [Deployment("http://10.0.0.1:8080/v1", "healthy", 2)]

    backend = {"provider": "openai", "model": "x", "base_url": "http://127.0.0.1:9"}
    config = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "farm", **backend}, {"name": "solo", **backend}]}}
    )
    observer = observer_for(metrics=True, models=["farm", "solo"], servers=[], environ={})

    def factory(model: ModelConfig) -> PromptBasedProvider | ScriptedProvider:
        return PromptBasedProvider(Pooled()) if model.name == "farm" else ScriptedProvider()

    state = ServiceState.for_config(config, provider_factory=factory, observer=observer)
    for name in ("farm", "solo"):
        anyio.run(state.provider, config.model(name))
    assert observer.metrics is not None
    found = [(n, labels, v) for n, labels, v in samples(observer.metrics) if "deployment" in n]
    deployment = {"model": "farm", "deployment": "http://10.0.0.1:8080/v1"}
    assert found == [
        ("farmhand_deployment_up", deployment, 1.0),
        ("farmhand_deployment_in_flight", deployment, 2.0),
    ]


def test_timeouts_of_a_server_from_outside_are_not_the_operators() -> None:
    # The real faults server twice: the operator's "faults", and one a client's project or
    # request named "faults" too (another config: its own pooled session).
    recorder = Recorder(LabelBounds.of(models=[], servers=["faults"]), FarmhandMetrics())

    async def main() -> None:
        async with MCPPool(observer=recorder) as pool:
            operators = pool.toolset(faults(tool_timeout=0.5))
            theirs = pool.toolset(faults("--quiet", tool_timeout=0.5), from_request=True)
            for toolset in (operators, theirs):
                result = await toolset.call_tool("hang", {"seconds": 30})
                assert result.is_error

    anyio.run(main)
    assert recorder.metrics is not None
    found = samples(recorder.metrics)
    assert ("farmhand_mcp_timeouts_total", {"server": "faults"}, 1.0) in found
    assert ("farmhand_mcp_timeouts_total", {"server": "request"}, 1.0) in found
