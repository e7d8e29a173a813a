"""Metrics and tracing: the server CPU they cost per request.

Claim: `farmhand serve` with its Prometheus metrics and OpenTelemetry traces on (spans sent
over OTLP/HTTP) spends within 5% more CPU per request than with both off.

Baseline (`off`): a `farmhand serve` with `server.metrics: false` and no OTLP endpoint
(the no-op observer: no middleware, a no-op watch per turn). Measured (`on`): the same
config with `server.metrics: true` and OTEL_EXPORTER_OTLP_ENDPOINT pointing at a sink on
loopback (its own process, answering every export with 200), so each request records its
metrics and exports a request span and a model turn span through the batch processor,
protobuf encoding included; (`metrics`) metrics without traces, to tell the two apart;
(`sampled`) `on` with one trace in 20 kept (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
OTEL_TRACES_SAMPLER_ARG=0.05), as a busy server would sample. All in front of
serve_overhead's fake OpenAI-compatible backend (16 words, at once), same machine, same
run, taking turns.

Before and after: with `--baseline-src DIR` (the `src` folder of another checkout, e.g.
`git archive COMMIT src | tar -x -C /tmp/before`), `off-base`, `metrics-base` and `on-base`
are `off`, `metrics` and `on` served by that code, in the same run, so a change is measured
against what it replaced (each `-base` ratio is to `off-base`).

Floor: each round also runs bench/tracing_floor.py against the same sink: the
OpenTelemetry SDK alone making and exporting the same spans, nothing of farmhand around
them (CPU per request, split into the span lifecycle, OTLP encoding and the HTTP export).
`off` plus that floor is the least any request traced with this SDK can cost.

Method: OpenAI chat completions, whole and streamed, `--clients` concurrent clients
(aiohttp), `--requests` per case after a warm-up; the serving process's user + system CPU
time (from /proc) over the measured requests, divided by the requests. `--rounds` rounds,
each target in turn; each number is the median of its rounds. At the end the measured
server's /metrics is read, to show it counted what it served.

Run: .venv/bin/python bench/observability_overhead.py [--requests 2000] [--rounds 3]
     [--clients 8] [--baseline-src DIR]

Numbers are printed, never asserted; on a shared machine read them as rough.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).parent))
from serve_overhead import API_KEY, Target, free_port, run_case, started

OVERHEAD = Path(__file__).parent / "serve_overhead.py"
FLOOR = Path(__file__).parent / "tracing_floor.py"
FLOOR_PARTS = ("lifecycle", "encoded", "otlp")
SAMPLED = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.05"}
SERVERS: dict[str, tuple[bool, bool, dict[str, str]]] = {
    "off": (False, False, {}),
    "metrics": (True, False, {}),
    "on": (True, True, {}),
    "sampled": (True, True, SAMPLED),
}
"""Each measured server: server.metrics, spans over OTLP, more of its environment."""
BASE = "-base"
"""The suffix of a server run from `--baseline-src`, compared with `off-base`."""


def off_of(name: str) -> str:
    """The `off` a server is compared with: its own code's."""
    return "off-base" if name.endswith(BASE) else "off"


class Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that keeps nothing: 200 and an empty export response."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        return


def config_text(backend: str, metrics: bool) -> str:
    return (
        "runtime:\n  models:\n    - name: default\n      provider: openai\n"
        f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
        f"server:\n  metrics: {'true' if metrics else 'false'}\n"
    )


def floor(sink: str, requests: int) -> dict[str, float | str]:
    """bench/tracing_floor.py's microseconds per request, in a process of its own."""
    command = [sys.executable, str(FLOOR), "--endpoint", sink, "--requests", str(requests)]
    found: dict[str, float | str] = json.loads(subprocess.check_output(command, text=True))
    return found


async def measure(
    targets: list[Target], requests: int, rounds: int, clients: int, sink: str
) -> tuple[dict[tuple[str, bool], float], dict[str, float], str]:
    """Median CPU milliseconds per request, by (target, streamed); the floor's median
    microseconds per request by part; the protobuf implementation the floor ran on."""
    cpu: dict[tuple[str, bool], list[float]] = {}
    floors: dict[str, list[float]] = {}
    protobuf = ""
    for round_number in range(rounds):
        found = await anyio.to_thread.run_sync(floor, sink, requests)
        protobuf = str(found["protobuf"])
        for part in FLOOR_PARTS:
            floors.setdefault(part, []).append(float(found[part]))
        print(
            f"round {round_number + 1}   floor:"
            + ",".join(f" {part} {float(found[part]):.0f} us" for part in FLOOR_PARTS)
            + f" per request (protobuf: {protobuf})",
            flush=True,
        )
        for stream in (False, True):
            for target in targets:
                _, wall, seconds = await run_case(target, stream, clients, requests)
                per_request = seconds * 1000 / requests
                cpu.setdefault((target.name, stream), []).append(per_request)
                kind = "stream" if stream else "whole"
                print(
                    f"round {round_number + 1} {target.name:>7} {kind:>6}:"
                    f" {per_request:.3f} ms CPU per request, {requests / wall:.0f} req/s",
                    flush=True,
                )
    medians = {key: statistics.median(values) for key, values in cpu.items()}
    # Each round's ratio to the `off` of the same round, whose load it shared.
    for (name, stream), values in cpu.items():
        offs = cpu[(off_of(name), stream)]
        medians[(f"{name}/off", stream)] = statistics.median(
            value / off for value, off in zip(values, offs, strict=True)
        )
    return medians, {part: statistics.median(v) for part, v in floors.items()}, protobuf


def counted(url: str) -> float:
    """The chat completions the measured server counted in farmhand_requests_total."""
    answer = httpx.get(url, headers={"authorization": f"Bearer {API_KEY}"}, timeout=10)
    answer.raise_for_status()
    total = 0.0
    for line in answer.text.splitlines():
        if line.startswith("farmhand_requests_total{") and "/v1/chat/completions" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src: `on-base`")
    parser.add_argument("--sink", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sink:
        ThreadingHTTPServer(("127.0.0.1", args.sink), Sink).serve_forever()
        return

    servers = dict(SERVERS)
    if args.baseline_src:
        for name in ("off", "metrics", "on"):
            servers[f"{name}-base"] = SERVERS[name]
    backend_port, sink_port = free_port(), free_port()
    ports = {name: free_port() for name in servers}
    backend = f"http://127.0.0.1:{backend_port}/v1"
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": tmp}
        stack.enter_context(
            started(
                [sys.executable, str(OVERHEAD), "--backend", "--port", str(backend_port)],
                backend_port,
                env,
            )
        )
        stack.enter_context(
            started([sys.executable, __file__, "--sink", str(sink_port)], sink_port, env)
        )
        targets = []
        for name, (metrics, traces, more) in servers.items():
            port = ports[name]
            config = Path(tmp) / f"{name}.yaml"
            config.write_text(config_text(backend, metrics))
            sink = f"http://127.0.0.1:{sink_port}" if traces else ""
            tracing = {
                "OTEL_EXPORTER_OTLP_ENDPOINT": sink,
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "",
                **more,
            }
            serve = [sys.executable, "-m", "farmhand", "serve", "--port", str(port)]
            serve += ["--config", str(config), "--log-level", "warning"]
            source = args.baseline_src if name.endswith(BASE) else Path(__file__).parents[1] / "src"
            code = {
                "PYTHONPATH": os.pathsep.join(
                    [str(source.resolve()), os.environ.get("PYTHONPATH", "")]
                )
            }
            pid = stack.enter_context(started(serve, port, {**env, **tracing, **code}))
            targets.append(Target(name, f"http://127.0.0.1:{port}/v1/chat/completions", pid))
        medians, floors, protobuf = anyio.run(
            measure,
            targets,
            args.requests,
            args.rounds,
            args.clients,
            f"http://127.0.0.1:{sink_port}",
            backend_options={"use_uvloop": True},
        )
        seen = counted(f"http://127.0.0.1:{ports['on']}/metrics")
    print(
        f"\nserver CPU per request, median of {args.rounds} rounds, {args.requests} requests"
        f" per case, {args.clients} clients (off: server.metrics false, no OTLP; metrics:"
        " server.metrics true; on: metrics and every request's spans over OTLP/HTTP;"
        " sampled: the same with 1 trace in 20, OTEL_TRACES_SAMPLER=parentbased_traceidratio)"
    )
    measured = [name for name in servers if not name.startswith("off")]
    for stream in (False, True):
        off = medians[("off", stream)]
        kind = "streamed" if stream else "whole"
        cases = [f"{name} {medians[(name, stream)]:.3f} ms" for name in servers]
        ratios = [
            f"{name}/{off_of(name)} {medians[(name, stream)] / medians[base, stream]:.3f}x"
            for name in measured
            for base in [off_of(name)]
        ]
        paired = [f"{name} {medians[(f'{name}/off', stream)]:.3f}x" for name in measured]
        least = (off + floors["otlp"] / 1000) / off
        print(f"  {kind:>8}: {', '.join(cases)}; {', '.join(ratios)}; floor/off {least:.3f}x")
        print(f"  {'':>8}  median of each round's ratio to its own off: {', '.join(paired)}")
    parts = ", ".join(f"{part} {floors[part]:.0f} us" for part in FLOOR_PARTS)
    print(
        f"floor (the SDK alone, the same two spans per request, protobuf {protobuf}): {parts}"
        " per request (lifecycle: made and batched; encoded: + OTLP protobuf; otlp: + sent"
        " over OTLP/HTTP); floor/off is off plus the otlp floor"
    )
    print(f"the measured server counted {seen:.0f} chat completions in farmhand_requests_total")


if __name__ == "__main__":
    main()
