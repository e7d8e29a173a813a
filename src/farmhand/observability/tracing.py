"""OpenTelemetry traces: the tracer provider farmhand builds from the environment, and the
attribute names it writes (the GenAI semantic conventions for model turns and tool calls,
the HTTP ones for requests).

The provider belongs to the app (`Recorder`), never to OpenTelemetry's global, so two apps
in one process (tests, projects) keep their spans apart and a test can hand in its own
(with an `InMemorySpanExporter`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
DEFAULT_SERVICE_NAME = "farmhand"

# GenAI semantic conventions (gen_ai.*), as of semconv 1.37.
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
ERROR_TYPE = "error.type"
# HTTP semantic conventions.
HTTP_METHOD = "http.request.method"
HTTP_ROUTE = "http.route"
HTTP_STATUS = "http.response.status_code"
URL_PATH = "url.path"


def tracer_provider_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """A provider exporting over OTLP (HTTP/protobuf) when OTEL_EXPORTER_OTLP_ENDPOINT (or
    its _TRACES_ variant) is set and OTEL_SDK_DISABLED is not true; else None (no
    tracing). The exporter reads the rest of the standard OTEL_* variables itself
    (headers, timeout, compression); OTEL_SERVICE_NAME names the service (default
    farmhand)."""
    source = os.environ if environ is None else environ
    if source.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not any(source.get(name, "").strip() for name in ENDPOINT_VARIABLES):
        return None
    # Imported here: the exporter pulls in protobuf, which a server without tracing skips.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    name = source.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider
