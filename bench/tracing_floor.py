"""The floor under farmhand's tracing: what the OpenTelemetry SDK itself costs for the
spans of one plain chat, with nothing of farmhand around them.

Per "request" it makes exactly the spans farmhand makes for a plain chat (a SERVER span
made current, a CLIENT `chat` span under it, with as many attributes as farmhand's, set
the way farmhand sets them) through a `TracerProvider` with a `BatchSpanProcessor`, in a
tight loop, three times over:
- `lifecycle`: the processor's exporter drops each batch (start, attributes, end, the
  batch queue and its worker thread: the SDK's part);
- `encoded`: the exporter encodes each batch to OTLP protobuf and drops the bytes;
- `otlp`: the SDK's own OTLP/HTTP exporter sends it to `--endpoint` (a sink on loopback).
Each is this process's CPU time (every thread) over the requests, the batch processor
flushed before the clock stops, in microseconds per request. bench/observability_overhead.py
runs it in the same run as the servers it measures, against the same sink, to say how
much of tracing's cost is this floor.

Run: .venv/bin/python bench/tracing_floor.py --endpoint http://127.0.0.1:4318 [--requests N]
Prints one JSON line: {"lifecycle": us, "encoded": us, "otlp": us, "protobuf": "upb"}.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

from google.protobuf.internal import api_implementation
from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Tracer, set_span_in_context

WARM_UP = 200


class Dropped(SpanExporter):
    """Takes every batch and does nothing with it: the SDK's cost without an export."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class Encoded(SpanExporter):
    """Encodes every batch as the OTLP exporters do, then drops the bytes."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        encode_spans(spans).SerializePartialToString()
        return SpanExportResult.SUCCESS


def one_chat(tracer: Tracer) -> None:
    """A plain chat's spans and attributes, as farmhand's recorder makes them."""
    request = tracer.start_span(
        "POST",
        kind=SpanKind.SERVER,
        attributes={"http.request.method": "POST", "url.path": "/v1/chat/completions"},
    )
    token = otel_context.attach(set_span_in_context(request))
    turn = tracer.start_span(
        "chat default",
        context=otel_context.get_current(),
        kind=SpanKind.CLIENT,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "default",
            "gen_ai.provider.name": "openai",
        },
    )
    turn.set_attributes(
        {
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 16,
            "gen_ai.response.finish_reasons": ("stop",),
        }
    )
    turn.end()
    otel_context.detach(token)
    request.update_name("POST /v1/chat/completions")
    request.set_attributes({"http.route": "/v1/chat/completions", "http.response.status_code": 200})
    request.end()


def cpu_per_request(exporter: SpanExporter, requests: int) -> float:
    """Microseconds of this process's CPU per chat's spans, through `exporter`."""
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: "farmhand"}))
    # A queue that holds every span: the loop makes them faster than a server would, and
    # a span dropped from a full queue would be a span never encoded nor sent.
    queue = 2 * (requests + WARM_UP)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=queue))
    tracer = provider.get_tracer("farmhand", "0")
    for _ in range(WARM_UP):  # imports, the first batch
        one_chat(tracer)
    provider.force_flush()
    start = time.process_time()
    for _ in range(requests):
        one_chat(tracer)
    provider.force_flush()
    seconds = time.process_time() - start
    provider.shutdown()
    return seconds * 1e6 / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoint", required=True, help="an OTLP/HTTP base URL")
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    traces = args.endpoint.rstrip("/") + "/v1/traces"
    found = {
        "lifecycle": cpu_per_request(Dropped(), args.requests),
        "encoded": cpu_per_request(Encoded(), args.requests),
        "otlp": cpu_per_request(OTLPSpanExporter(endpoint=traces), args.requests),
        "protobuf": api_implementation.Type(),
    }
    print(json.dumps(found))


if __name__ == "__main__":
    main()
