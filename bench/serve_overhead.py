"""`farmhand serve` overhead: latency and throughput it adds over calling the backend directly.

Claim: serving a model through farmhand's OpenAI API (request parsing, the tool loop with
no tools, the provider's streamed call to the backend, re-rendering) adds little over
talking to the backend itself.

Backend: a fast fake OpenAI-compatible server (a tiny Starlette app under uvicorn, in its own
process on loopback) that answers every chat at once with a fixed 16-word reply, as one JSON
completion or as an SSE stream of 16 chunks plus a usage chunk.

Baseline: the same request sent straight to the fake backend. Measured: the same request
sent to `farmhand serve` (its own process, its default model pointed at the backend with
`provider: openai`), which streams from the backend whatever the client asked for.

Dialects: OpenAI chat completions (`/v1/chat/completions`) and Anthropic Messages
(`/v1/messages`, streamed until `message_stop`); the baseline is always the backend's own
chat completion, so a dialect's ratio includes translating to and from OpenAI's shape.

Method: `--requests` requests per case after a warm-up, from httpx.AsyncClient with 1 and
with 32 concurrent clients; non-streaming and streaming (a streamed request is timed until
`data: [DONE]`). Prints p50/p99 latency of both, the added milliseconds, and the
throughput ratio farmhand/direct.

Run: .venv/bin/python bench/serve_overhead.py [--requests 400]

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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

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
BODY = {"model": "default", "messages": [{"role": "user", "content": "Say something."}]}


@dataclass(frozen=True)
class Dialect:
    """How one of farmhand's APIs is asked, and how its answer is read."""

    name: str
    path: str
    body: dict[str, Any]
    last_line: str  # a stream is timed until this line
    text: Callable[[dict[str, Any]], str]  # a non-streamed answer's text


CHAT = Dialect(
    "chat",
    "/v1/chat/completions",
    BODY,
    "data: [DONE]",
    lambda j: j["choices"][0]["message"]["content"],
)
DIALECTS = [
    CHAT,
    Dialect(
        "messages",
        "/v1/messages",
        {**BODY, "max_tokens": 100},
        'data: {"type": "message_stop"}',
        lambda j: j["content"][0]["text"],
    ),
]


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
def started(command: list[str], port: int, env: dict[str, str]) -> Iterator[None]:
    process = subprocess.Popen(
        command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


async def one(client: httpx.AsyncClient, url: str, stream: bool, dialect: Dialect) -> float:
    body = {**dialect.body, "stream": stream}
    start = time.perf_counter()
    if stream:
        async with client.stream("POST", url, json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line == dialect.last_line:
                    break
    else:
        response = await client.post(url, json=body)
        response.raise_for_status()
        assert dialect.text(response.json())
    return time.perf_counter() - start


async def run_case(
    url: str, stream: bool, clients: int, requests: int, dialect: Dialect = CHAT
) -> tuple[list[float], float]:
    """Latencies (s) of `requests` requests from `clients` concurrent clients; wall time."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        for _ in range(min(20, requests)):  # warm-up: connections, provider, first turn
            await one(client, url, stream, dialect)
        latencies: list[float] = []
        remaining = requests

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                latencies.append(await one(client, url, stream, dialect))

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker)
        return latencies, time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(direct: str, served: str, requests: int) -> None:
    print(
        f"{'case':<36}{'direct p50':>12}{'p99':>10}{'farmhand p50':>14}{'p99':>10}"
        f"{'added p50':>12}{'p99':>10}{'req/s ratio':>13}"
    )
    for dialect, stream, clients in [
        (d, s, c) for d in DIALECTS for s in (False, True) for c in (1, 32)
    ]:
        base, base_wall = await run_case(direct, stream, clients, requests)
        url = served + dialect.path
        ours, ours_wall = await run_case(url, stream, clients, requests, dialect)
        b50, b99 = percentile(base, 0.5) * 1e3, percentile(base, 0.99) * 1e3
        o50, o99 = percentile(ours, 0.5) * 1e3, percentile(ours, 0.99) * 1e3
        ratio = (len(ours) / ours_wall) / (len(base) / base_wall)
        mode = "stream" if stream else "non-stream"
        name = f"{dialect.name} {mode}, {clients} client(s)"
        print(
            f"{name:<36}{b50:>10.2f}ms{b99:>8.2f}ms{o50:>12.2f}ms{o99:>8.2f}ms"
            f"{o50 - b50:>+10.2f}ms{o99 - b99:>+8.2f}ms{ratio:>12.2f}x"
        )
        sys.stdout.flush()
    print(f"\nrequests per case: {requests}; ratio = farmhand req/s / direct req/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--backend", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend:
        import uvicorn

        uvicorn.run(backend_app(), host="127.0.0.1", port=args.port, log_level="warning")  # type: ignore[arg-type]
        return

    backend_port, farmhand_port = free_port(), free_port()
    backend = f"http://127.0.0.1:{backend_port}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "farmhand.yaml"
        config.write_text(
            "runtime:\n  models:\n    - name: default\n      provider: openai\n"
            f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
        )
        env = {"FARMHAND_API_KEYS": "", "FARMHAND_HOME": tmp}
        backend_cmd = [sys.executable, __file__, "--backend", "--port", str(backend_port)]
        serve_cmd = [
            *(sys.executable, "-m", "farmhand", "serve", "--port", str(farmhand_port)),
            *("--config", str(config), "--log-level", "warning"),
        ]
        with started(backend_cmd, backend_port, env), started(serve_cmd, farmhand_port, env):
            served = f"http://127.0.0.1:{farmhand_port}"
            anyio.run(measure, f"{backend}/chat/completions", served, args.requests)


if __name__ == "__main__":
    main()
