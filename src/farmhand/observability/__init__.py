"""farmhand's metrics (Prometheus, `metrics.py`) and traces (OpenTelemetry, `tracing.py`),
recorded through one observer the app owns and passes down (`observer.py`: the hooks and
the no-op default; `recorder.py`: the one that records). Imports nothing of farmhand's but
its version, so every layer that has something to report may take an observer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from opentelemetry.sdk.trace import TracerProvider

from farmhand.observability.labels import ClientProjectModels, LabelBounds
from farmhand.observability.metrics import (
    CONTENT_TYPE,
    Deployment,
    DeploymentReading,
    DeploymentSource,
    FarmhandMetrics,
)
from farmhand.observability.observer import (
    NO_CHAT,
    NO_OBSERVER,
    ChatWatch,
    Observer,
    ToolWatch,
    TurnWatch,
)
from farmhand.observability.recorder import Recorder, RequestWatch
from farmhand.observability.tracing import tracer_provider_from_env

__all__ = [
    "CONTENT_TYPE",
    "NO_CHAT",
    "NO_OBSERVER",
    "ChatWatch",
    "ClientProjectModels",
    "Deployment",
    "DeploymentReading",
    "DeploymentSource",
    "FarmhandMetrics",
    "LabelBounds",
    "Observer",
    "Recorder",
    "RequestWatch",
    "ToolWatch",
    "TurnWatch",
    "observer_for",
    "tracer_provider_from_env",
]


def observer_for(
    *,
    metrics: bool,
    models: Iterable[str],
    servers: Iterable[str],
    tracer_provider: TracerProvider | None = None,
    environ: Mapping[str, str] | None = None,
) -> Observer:
    """The observer of a server: metrics when `metrics` (`server.metrics`), traces through
    `tracer_provider` or, without one, over OTLP when the environment names an endpoint
    (`tracer_provider_from_env`); the no-op observer when neither. `models` and `servers`:
    the configured names, the only ones used as label values."""
    owned = tracer_provider is None
    provider = tracer_provider if tracer_provider is not None else tracer_provider_from_env(environ)
    if not metrics and provider is None:
        return NO_OBSERVER
    recorded = FarmhandMetrics() if metrics else None
    bounds = LabelBounds.of(models, servers)
    return Recorder(bounds, recorded, provider, owns_provider=owned)
