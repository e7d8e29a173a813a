"""farmhand's Prometheus metrics, on a registry of their own (one per app: no global).

Every label value is bounded before it gets here (`labels.LabelBounds`): route templates,
configured model and server names, fixed words; never a raw path or anything a user wrote.
Gauges that describe live state (the MCP pool, backend deployments) are read when scraped,
from callbacks, so nothing has to keep them up to date on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The media type of `FarmhandMetrics.exposition()`: the text format every Prometheus
reads (farmhand's names need none of 1.0.0's escaping)."""

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
"""Seconds: from a refused request (milliseconds) to a long tool-calling chat (minutes)."""
TOOL_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class DeploymentReading(Protocol):
    """One backend deployment of a model as its pool reports it when scraped (the fields
    of `DeploymentPool.snapshot()`'s entries; `Deployment` is a plain one)."""

    @property
    def url(self) -> str:
        """Its base_url without credentials: the operator's config names it."""
        ...

    @property
    def health(self) -> str:
        """Its state: up while "healthy", down otherwise (cooling down, being checked)."""
        ...

    @property
    def in_flight(self) -> int: ...


@dataclass(frozen=True)
class Deployment:
    """A `DeploymentReading` as a plain value."""

    url: str
    health: str
    in_flight: int


DeploymentSource = Callable[[], Iterable[tuple[str, Iterable[DeploymentReading]]]]
"""(model name, its deployments) for every model served by a pool; the service reads
every loaded provider that has a `snapshot()` (`service.state.pool_deployments`)."""
HEALTHY = "healthy"
PoolSource = Callable[[], Iterable[str]]
"""The status of every server in the MCP pool ("running", "idle", "restarting", ...)."""


class RequestSeries(NamedTuple):
    """The series one kind of request (dialect, route, status) is recorded in."""

    requests: Counter
    duration: Histogram
    first_byte: Histogram


class FarmhandMetrics:
    """The metrics one app exports at /metrics."""

    def __init__(self) -> None:
        # The labelled series, looked up once: `labels()` takes a lock and builds a key, a
        # few microseconds that every request would pay again. Bounded like the labels.
        self._request_series: dict[tuple[str, str, int], RequestSeries] = {}
        self._token_series: dict[str, tuple[Counter, Counter]] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.requests = Counter(
            "farmhand_requests",
            "HTTP requests answered, by API dialect, route template and status code.",
            ["dialect", "route", "status"],
            registry=registry,
        )
        self.first_byte = Histogram(
            "farmhand_request_first_byte_seconds",
            "Seconds from a request's arrival to the first byte of its response body.",
            ["dialect", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.duration = Histogram(
            "farmhand_request_duration_seconds",
            "Seconds from a request's arrival to the end of its response.",
            ["dialect", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.tokens = Counter(
            "farmhand_tokens",
            "Tokens read (in) and written (out) by each model, as its turns reported them.",
            ["model", "direction"],
            registry=registry,
        )
        self.tool_calls = Counter(
            "farmhand_tool_calls",
            "Tool calls, by server, tool, outcome and caller (the model's tool loop, or a"
            " person by hand).",
            ["server", "tool", "outcome", "caller"],
            registry=registry,
        )
        self.tool_duration = Histogram(
            "farmhand_tool_call_duration_seconds",
            "Seconds a tool call took, by server, tool and caller.",
            ["server", "tool", "caller"],
            buckets=TOOL_BUCKETS,
            registry=registry,
        )
        self.mcp_restarts = Counter(
            "farmhand_mcp_server_restarts",
            "MCP server sessions started again after one broke, crashed or timed out.",
            ["server"],
            registry=registry,
        )
        self.mcp_timeouts = Counter(
            "farmhand_mcp_timeouts",
            "MCP tool calls cancelled at their timeout.",
            ["server"],
            registry=registry,
        )
        self.embedded_wait = Histogram(
            "farmhand_embedded_wait_seconds",
            "Seconds a model turn waited for the embedded engine to admit it.",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def request_series(self, dialect: str, route: str, status: int) -> RequestSeries:
        key = (dialect, route, status)
        series = self._request_series.get(key)
        if series is None:
            series = self._request_series[key] = RequestSeries(
                self.requests.labels(dialect, route, str(status)),
                self.duration.labels(dialect, route),
                self.first_byte.labels(dialect, route),
            )
        return series

    def token_series(self, model: str) -> tuple[Counter, Counter]:
        """(tokens in, tokens out) of `model` (a bounded label)."""
        series = self._token_series.get(model)
        if series is None:
            series = self._token_series[model] = (
                self.tokens.labels(model, "in"),
                self.tokens.labels(model, "out"),
            )
        return series

    def watch_pool(self, statuses: PoolSource) -> None:
        """Export `farmhand_mcp_pool_servers{status}`, read from `statuses` when scraped."""
        self.registry.register(_PoolCollector(statuses))

    def watch_deployments(self, source: DeploymentSource) -> None:
        """Export `farmhand_deployment_up` and `farmhand_deployment_in_flight` per model
        and deployment, read from `source` when scraped (see `DeploymentSource`); the model
        names are held to the configured ones by `Recorder.watch_deployments`."""
        self.registry.register(_DeploymentCollector(source))

    def exposition(self) -> bytes:
        """Every metric in Prometheus text format (`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


class _PoolCollector(Collector):
    def __init__(self, statuses: PoolSource) -> None:
        self.statuses = statuses

    def describe(self) -> Iterable[Metric]:
        return []  # nothing to read at registration

    def collect(self) -> Iterator[Metric]:
        counts: dict[str, int] = {}
        for status in self.statuses():
            counts[status] = counts.get(status, 0) + 1
        family = GaugeMetricFamily(
            "farmhand_mcp_pool_servers",
            "MCP servers the pool holds, by status (running, idle, restarting, closed).",
            labels=["status"],
        )
        for status, count in sorted(counts.items()):
            family.add_metric([status], count)
        yield family


class _DeploymentCollector(Collector):
    def __init__(self, source: DeploymentSource) -> None:
        self.source = source

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "farmhand_deployment_up",
            "1 while a model's backend deployment takes requests, 0 while it is cooled down.",
            labels=["model", "deployment"],
        )
        in_flight = GaugeMetricFamily(
            "farmhand_deployment_in_flight",
            "Requests a model's backend deployment is answering now.",
            labels=["model", "deployment"],
        )
        for model, deployments in self.source():
            for reading in deployments:
                labels = [model, reading.url]
                up.add_metric(labels, 1 if reading.health == HEALTHY else 0)
                in_flight.add_metric(labels, reading.in_flight)
        yield up
        yield in_flight
