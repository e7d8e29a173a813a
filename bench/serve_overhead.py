"""`farmhand serve` overhead: latency and throughput it adds over calling the backend directly.

Claim: serving a model through farmhand's OpenAI API (request parsing, the tool loop with
no tools, the provider's streamed call to the backend, re-rendering) adds little over
talking to the backend itself.

Backend: a fast fake OpenAI-compatible server (a tiny Starlette app under uvicorn, in its own
process on loopback) that answers every chat at once with a fixed 16-word reply, as one JSON
completion or as an SSE stream of 16 chunks plus a usage chunk.

Baseline: the same request sent straight to the fake backend. Measured: the same request
sent to `farmhand serve` (its own process, its default model pointed at the backend with
`provider: openai`), and, when it is installed (`make bench` puts it in .venv-litellm), to
LiteLLM's proxy pointed at the same backend: the gateway farmhand's users compare it with.

Dialects: farmhand is measured in OpenAI's chat completions (`farmhand`), in Anthropic's
Messages (`fh-msgs`: `/v1/messages`, a stream timed until `message_stop`) and in OpenAI's
Responses (`fh-resp`: `/v1/responses` with `store: false`, as Codex sends it, a stream
timed until `response.completed`) and as an A2A agent (`fh-a2a`: JSON-RPC `SendMessage`,
or `SendStreamingMessage` timed until the status update that completes the task; each
message a task kept in SQLite); the baseline is always the backend's own chat
completion, so those rows include translating to and from its shape. LiteLLM is measured
on chat completions. `relay` is the floor for any gateway written in Python on this stack:
uvicorn and one aiohttp call per request, the bytes passed through untouched.

Method: `--requests` requests per case after a warm-up, from one aiohttp session with 1 and
with 32 concurrent clients (aiohttp, not httpx: httpx's pool at 32 connections capped the
backend alone at about 740 req/s on a 2-core machine, so it measured the client), on
uvloop; non-streaming and streaming (a streamed request is timed until `data: [DONE]`).
Prints p50/p99 latency, the milliseconds added over the backend, the throughput (req/s),
and the server's CPU time per request (user + system time of the serving process, from
/proc, over the measured requests). With `--rounds N` each case runs N times, every target
in turn, and each number is the median of its rounds (added p50 against the backend of the
same round): on a shared machine one run's numbers move by a third.

Run: .venv/bin/python bench/serve_overhead.py [--requests 1000] [--rounds 5]
     [--litellm PATH_TO_LITELLM_CLI]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import anyio

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "farmhand",
    "serves",
    "the",
    "tool",
    "loop",
]
API_KEY = "sk-bench-0123456789abcdef"
BODY = {"model": "default", "messages": [{"role": "user", "content": "Say something."}]}


@dataclass(frozen=True)
class Dialect:
    """How one of the APIs is asked, and how its answer is read."""

    body: dict[str, Any]
    last_line: str  # a stream is timed until this line
    text: Callable[[dict[str, Any]], str]  # a non-streamed answer's text
    stream_body: dict[str, Any] | None = None  # asked this way to stream (else body + stream)
    headers: dict[str, str] = field(default_factory=dict)
    ends: Callable[[bytes], bool] | None = None  # a stream's last line, where not one text


CHAT = Dialect(BODY, "data: [DONE]", lambda j: j["choices"][0]["message"]["content"])
MESSAGES = Dialect(
    {**BODY, "max_tokens": 100},
    'data: {"type": "message_stop"}',
    lambda j: j["content"][0]["text"],
)


RESPONSES = Dialect(
    {"model": "default", "input": "Say something.", "store": False},
    "event: response.completed",
    lambda j: j["output"][-1]["content"][0]["text"],
)
# A2A's JSON-RPC: a task per message; a stream ends with the status update that says the
# task is completed.
A2A_MESSAGE = {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "Say something."}]}
A2A = Dialect(
    {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": A2A_MESSAGE}},
    "(the completed status update)",
    lambda j: j["result"]["task"]["artifacts"][0]["parts"][0]["text"],
    stream_body={
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": A2A_MESSAGE},
    },
    headers={"A2A-Version": "1.0"},
    ends=lambda line: b"TASK_STATE_COMPLETED" in line,
)
# Ollama's /api/generate: NDJSON lines with no closing marker, so a stream is timed to
# its end (the `done` line is the last one).
GENERATE = Dialect(
    {"model": "default", "prompt": "Say something."},
    "(no closing line: the stream's end)",
    lambda j: j["response"],
)


def backend_app() -> object:
    """The fake OpenAI-compatible backend (built in the backend process only)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    usage = {"prompt_tokens": 8, "completion_tokens": len(WORDS), "total_tokens": 8 + len(WORDS)}

    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    async def chat(request: Request) -> Response:
        body = await request.json()
        if not body.get("stream"):
            return JSONResponse(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "fake",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": " ".join(WORDS)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            )

        async def events() -> object:
            yield chunk({"role": "assistant", "content": ""})
            for i, word in enumerate(WORDS):
                yield chunk({"content": word if i == 0 else " " + word})
            yield chunk({}, "stop")
            tail = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []}
            yield f"data: {json.dumps({**tail, 'usage': usage})}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")  # type: ignore[arg-type]

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def relay_app(backend: str) -> object:
    """The floor for any gateway in Python on this stack: uvicorn and one aiohttp call per
    request, the body passed through untouched (no parsing, no tool loop, no rendering)."""
    import aiohttp

    session: aiohttp.ClientSession | None = None
    json_type = {"content-type": "application/json"}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        nonlocal session
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                session = aiohttp.ClientSession()
                await send({"type": "lifespan.startup.complete"})
            if session is not None:
                await session.close()
            await send({"type": "lifespan.shutdown.complete"})
            return
        assert session is not None
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        async with session.post(backend, data=body, headers=json_type) as answer:
            kind = answer.headers["content-type"].encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]}
            )
            async for piece in answer.content.iter_any():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

    return app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float = 60) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise SystemExit(f"a server exited early (code {process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port} after {deadline} s")


@contextmanager
def started(command: list[str], port: int, env: dict[str, str]) -> Iterator[int]:
    """Runs a server until the block ends; yields its pid (for its CPU time)."""
    process = subprocess.Popen(
        command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process, deadline=180)
        yield process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Target:
    name: str
    url: str
    pid: int | None  # None: the backend itself, whose CPU is not the question
    dialect: Dialect = CHAT


async def one(client: aiohttp.ClientSession, target: Target, stream: bool) -> float:
    dialect = target.dialect
    body = {**dialect.body, "stream": stream}
    if dialect.stream_body is not None:  # streams by another method, not a "stream" field
        body = dialect.stream_body if stream else dialect.body
    last_line = dialect.last_line.encode()
    ends = dialect.ends or (lambda line: line == last_line)
    start = time.perf_counter()
    async with client.post(target.url, json=body, headers=dialect.headers) as response:
        response.raise_for_status()
        if stream:
            async for line in response.content:
                if ends(line.rstrip(b"\r\n")):
                    break
        else:
            assert dialect.text(await response.json())
    return time.perf_counter() - start


async def run_case(
    target: Target, stream: bool, clients: int, requests: int
) -> tuple[list[float], float, float]:
    """Latencies (s) of `requests` requests from `clients` concurrent clients, the wall
    time, and the serving process's CPU seconds over them."""
    connector = aiohttp.TCPConnector(limit=clients)
    headers = {"authorization": f"Bearer {API_KEY}"}
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(
        connector=connector, headers=headers, timeout=timeout
    ) as client:
        for _ in range(min(20, requests)):  # warm-up: connections, provider, first turn
            await one(client, target, stream)
        latencies: list[float] = []
        remaining = requests

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                latencies.append(await one(client, target, stream))

        cpu = cpu_seconds(target.pid) if target.pid else 0.0
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker)
        wall = time.perf_counter() - start
        cpu = cpu_seconds(target.pid) - cpu if target.pid else 0.0
        return latencies, wall, cpu


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Row:
    """One target's numbers in one round of one case (milliseconds, requests per second)."""

    p50: float
    p99: float
    added: float
    rate: float
    cpu: float | None


def median(values: list[float]) -> float:
    return percentile(values, 0.5)


async def measure(targets: list[Target], requests: int, rounds: int) -> None:
    """Each case runs `rounds` times, every target in turn each time; a row is the median
    of its rounds, and its added p50 is taken against the backend of the same round, so
    a machine that slows down for a while moves both."""
    direct, served = targets[0], targets[1:]
    print(
        f"{'case':<24}{'server':<10}{'p50':>9}{'p99':>9}{'added p50':>11}{'req/s':>8}"
        f"{'CPU/req':>10}"
    )
    for stream in (False, True):
        for clients in (1, 32):
            case = f"{'stream' if stream else 'non-stream'}, c={clients}"
            rows: dict[str, list[Row]] = {t.name: [] for t in targets}
            for _ in range(rounds):
                b50 = 0.0
                for target in targets:
                    latencies, wall, cpu = await run_case(target, stream, clients, requests)
                    p50 = percentile(latencies, 0.5) * 1e3
                    b50 = p50 if target is direct else b50
                    cpu_ms = cpu / len(latencies) * 1e3 if target.pid is not None else None
                    p99 = percentile(latencies, 0.99) * 1e3
                    row = Row(p50, p99, p50 - b50, len(latencies) / wall, cpu_ms)
                    rows[target.name].append(row)
            for target in [direct, *served]:
                got = rows[target.name]
                p50, p99 = median([r.p50 for r in got]), median([r.p99 for r in got])
                added = median([r.added for r in got])
                shown = f"{added:>+9.2f}ms" if target is not direct else f"{'':>11}"
                cpus = [r.cpu for r in got if r.cpu is not None]
                per_request = f"{median(cpus):>8.2f}ms" if cpus else f"{'':>10}"
                print(
                    f"{case:<24}{target.name:<10}{p50:>7.2f}ms{p99:>7.2f}ms{shown}"
                    f"{median([r.rate for r in got]):>8.0f}{per_request}"
                )
                case = ""
            sys.stdout.flush()
    print(
        f"\nrequests per case and round: {requests}, rounds: {rounds} (each row the median of"
        " its rounds); added p50 = the server's p50 minus the backend's in the same round;"
        " CPU/req = the serving process's user+system time per request"
    )


LITELLM_CONFIG = """model_list:
  - model_name: default
    litellm_params:
      model: openai/fake
      api_base: {backend}
      api_key: none
litellm_settings:
  telemetry: false
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each case; rows are their medians"
    )
    parser.add_argument("--litellm", default=".venv-litellm/bin/litellm", help="LiteLLM's CLI")
    parser.add_argument("--backend", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--relay-to", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.relay_to:
        import uvicorn

        app = relay_app(args.relay_to)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)  # type: ignore[arg-type]
        return
    if args.backend:
        import uvicorn

        uvicorn.run(backend_app(), host="127.0.0.1", port=args.port, log_level="warning")  # type: ignore[arg-type]
        return

    backend_port, farmhand_port, litellm_port, relay_port = (free_port() for _ in range(4))
    backend = f"http://127.0.0.1:{backend_port}/v1"
    litellm = Path(args.litellm) if args.litellm else None
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        config = Path(tmp) / "farmhand.yaml"
        config.write_text(
            "runtime:\n  models:\n    - name: default\n      provider: openai\n"
            f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
            # 32 clients on one key keep 32 A2A tasks running at once.
            "server:\n  limits:\n    max_agent_tasks: 64\n"
        )
        # Both gateways check the same API key, as they would serving anyone.
        env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": tmp}
        backend_cmd = [sys.executable, __file__, "--backend", "--port", str(backend_port)]
        serve_cmd = [
            *(sys.executable, "-m", "farmhand", "serve", "--port", str(farmhand_port)),
            *("--config", str(config), "--log-level", "warning"),
        ]
        stack.enter_context(started(backend_cmd, backend_port, env))
        relay_cmd = [sys.executable, __file__, "--relay-to", f"{backend}/chat/completions"]
        relay_pid = stack.enter_context(
            started([*relay_cmd, "--port", str(relay_port)], relay_port, env)
        )
        farmhand_pid = stack.enter_context(started(serve_cmd, farmhand_port, env))
        farmhand_url = f"http://127.0.0.1:{farmhand_port}/v1"
        targets = [
            Target("backend", f"{backend}/chat/completions", None),
            Target("relay", f"http://127.0.0.1:{relay_port}/", relay_pid),
            Target("farmhand", f"{farmhand_url}/chat/completions", farmhand_pid),
            Target("fh-msgs", f"{farmhand_url}/messages", farmhand_pid, MESSAGES),
            Target("fh-resp", f"{farmhand_url}/responses", farmhand_pid, RESPONSES),
            Target(
                "fh-gen", f"http://127.0.0.1:{farmhand_port}/api/generate", farmhand_pid, GENERATE
            ),
            Target("fh-a2a", f"http://127.0.0.1:{farmhand_port}/a2a", farmhand_pid, A2A),
        ]
        if litellm is not None and litellm.exists():
            litellm_config = Path(tmp) / "litellm.yaml"
            litellm_config.write_text(LITELLM_CONFIG.format(backend=backend))
            litellm_cmd = [str(litellm), "--config", str(litellm_config)]
            litellm_cmd += ["--port", str(litellm_port), "--num_workers", "1"]
            quiet = {"LITELLM_LOG": "ERROR", "LITELLM_MASTER_KEY": API_KEY}
            pid = stack.enter_context(started(litellm_cmd, litellm_port, {**env, **quiet}))
            targets.append(
                Target("litellm", f"http://127.0.0.1:{litellm_port}/chat/completions", pid)
            )
        elif args.litellm:
            print(f"no LiteLLM at {litellm}: measuring farmhand against the backend only")
        uvloop = {"use_uvloop": True}
        anyio.run(measure, targets, args.requests, args.rounds, backend_options=uvloop)


if __name__ == "__main__":
    main()
