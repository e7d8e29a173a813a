"""farmhand's own CPU per request, without the HTTP server: the ASGI app called directly.

Claim: what farmhand spends per served request, beyond the one backend call it cannot
avoid, is small; and (unlike wall times) this holds on a busy machine, since CPU time of
one process is counted.

Backend: bench/serve_overhead.py's fake OpenAI-compatible server, in its own process.
Baseline: the same request sent to the backend by the HTTP client farmhand's provider uses
(aiohttp), in this process: the floor for any proxy written in Python.
Measured: the same request handed to `create_app(...)` as an ASGI call (no sockets on the
client side, no uvicorn), through the whole app: middleware, dialect, service, loop,
provider, rendering. Per dialect, non-streamed and streamed.

Prints CPU milliseconds per request for both and the ratio farmhand / baseline.

Run: .venv/bin/python bench/serve_cpu_in_process.py [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).parent))
from farmhand.assembly import create_app
from farmhand.config.loader import find_config, load_config
from serve_overhead import free_port, wait_for_port

ASK = [{"role": "user", "content": "Say something."}]
CASES: dict[str, tuple[str, Callable[[bool], dict[str, Any]]]] = {
    "chat": ("/v1/chat/completions", lambda s: {"model": "default", "messages": ASK, "stream": s}),
    "messages": (
        "/v1/messages",
        lambda s: {"model": "default", "max_tokens": 64, "messages": ASK, "stream": s},
    ),
    "responses": (
        "/v1/responses",
        lambda s: {"model": "default", "input": "Say something.", "store": False, "stream": s},
    ),
}


def cpu() -> float:
    return time.process_time()


async def call_app(app: Any, path: str, body: bytes) -> None:
    """One request through the ASGI app, its whole response read."""
    delivered = False
    done = asyncio.Event()
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif not message.get("more_body", False):
            done.set()

    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"authorization", b"Bearer bench"),
        (b"content-length", str(len(body)).encode()),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    await app(scope, receive, send)
    if status != [200]:
        raise SystemExit(f"{path} answered {status}")


async def baseline(url: str, stream: bool, requests: int) -> float:
    """CPU ms per request of the backend call alone, with aiohttp, body read to the end."""
    body = json.dumps({"model": "fake", "messages": ASK, "stream": stream}).encode()
    headers = {"content-type": "application/json"}
    async with aiohttp.ClientSession() as session:
        for _ in range(100):
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
        start = cpu()
        for _ in range(requests):
            async with session.post(url, data=body, headers=headers) as response:
                async for _chunk in response.content.iter_any():
                    pass
        return (cpu() - start) / requests * 1000


async def measure(backend: str, requests: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["FARMHAND_HOME"] = home
        config = Path(home) / "farmhand.yaml"
        config.write_text(
            "runtime:\n  models:\n    - name: default\n      provider: openai\n"
            f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
        )
        app = create_app(load_config(find_config(config)), api_keys=["bench"])
        print(f"{'case':<22}{'farmhand':>10}{'baseline':>10}{'ratio':>8}")
        async with app.router.lifespan_context(app):
            for stream in (False, True):
                floor = await baseline(f"{backend}/chat/completions", stream, requests)
                for name, (path, shape) in CASES.items():
                    body = json.dumps(shape(stream)).encode()
                    for _ in range(100):
                        await call_app(app, path, body)
                    start = cpu()
                    for _ in range(requests):
                        await call_app(app, path, body)
                    ours = (cpu() - start) / requests * 1000
                    case = f"{name}, {'stream' if stream else 'whole'}"
                    print(f"{case:<22}{ours:>9.3f}ms{floor:>8.3f}ms{ours / floor:>7.1f}x")
    print(
        f"\nrequests per case: {requests}; CPU ms per request of this process; baseline = the"
        " backend's chat completion fetched with aiohttp alone"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    port = free_port()
    here = Path(__file__).with_name("serve_overhead.py")
    command = [sys.executable, str(here), "--backend", "--port", str(port)]
    backend = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, backend)
        import uvloop

        uvloop.run(measure(f"http://127.0.0.1:{port}/v1", args.requests))
    finally:
        backend.terminate()
        backend.wait()


if __name__ == "__main__":
    main()
