"""farmhand as an A2A 1.0 agent: the agent card, the executor that runs a message as a
chat of the service's, the task store over farmhand's SQLite file, and the JSON-RPC
endpoint, built from the official `a2a-sdk`'s request handler and dispatcher."""

import os

# The SDK wraps each of its calls in an OpenTelemetry span whenever opentelemetry can be
# imported (a tenth of an A2A request's CPU in a profile of the server), and reads this
# switch once, when it is first imported. farmhand exports no traces: off,
# unless the operator set it.
os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")
