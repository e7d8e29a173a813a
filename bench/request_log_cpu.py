"""What the line per request costs: farmhand's CPU per request with its request log off
(`--log-level warning`), in text and in JSON (`--log-format json`).

Claim measured, not promised: what the request log (`server/request_log.py`, on at the
default level) adds to farmhand's own CPU per request, in text and in JSON.

Backend: bench/serve_overhead.py's fake OpenAI-compatible server, in its own process.
Baseline: the same app in the same run with `farmhand.requests` above INFO (no line).
Measured: the app with the log at INFO, its lines written by the standard handler to
/dev/null, formatted as `farmhand serve` formats them (text; `cli/log_format.JsonFormatter`).
The ASGI app is called directly, as in serve_cpu_in_process.py; chat completions, whole and
streamed. Each case runs `--rounds` times in turn, and each number is the median.

Run: .venv/bin/python bench/request_log_cpu.py [--requests 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from farmhand.assembly import create_app
from farmhand.cli.log_format import JsonFormatter
from farmhand.config.loader import find_config, load_config
from serve_cpu_in_process import ASK, call_app
from serve_overhead import free_port, wait_for_port

FORMATS: dict[str, logging.Formatter | None] = {
    "off": None,
    "text": logging.Formatter("%(levelname)s: %(name)s: %(message)s"),
    "json": JsonFormatter(),
}


def log_as(formatter: logging.Formatter | None, handler: logging.Handler) -> None:
    requests = logging.getLogger("farmhand.requests")
    requests.setLevel(logging.WARNING if formatter is None else logging.INFO)
    if formatter is not None:
        handler.setFormatter(formatter)


async def per_request(app: Any, body: bytes, requests: int) -> float:
    start = time.process_time()
    for _ in range(requests):
        await call_app(app, "/v1/chat/completions", body)
    return (time.process_time() - start) / requests * 1000


async def measure(backend: str, requests: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as home, open(os.devnull, "w") as sink:
        os.environ["FARMHAND_HOME"] = home
        config = Path(home) / "farmhand.yaml"
        config.write_text(
            "runtime:\n  models:\n    - name: default\n      provider: openai\n"
            f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
        )
        handler = logging.StreamHandler(sink)
        logging.getLogger("farmhand.requests").addHandler(handler)
        logging.getLogger("farmhand.requests").propagate = False
        app = create_app(load_config(find_config(config)), api_keys=["bench"])
        print(f"{'case':<16}{'off':>9}{'text':>9}{'json':>9}{'text/off':>10}{'json/off':>10}")
        async with app.router.lifespan_context(app):
            for stream in (False, True):
                body = json.dumps({"model": "default", "messages": ASK, "stream": stream})
                for _ in range(200):
                    await call_app(app, "/v1/chat/completions", body.encode())
                samples: dict[str, list[float]] = {name: [] for name in FORMATS}
                for _ in range(rounds):
                    for name, formatter in FORMATS.items():
                        log_as(formatter, handler)
                        samples[name].append(await per_request(app, body.encode(), requests))
                ms = {name: statistics.median(values) for name, values in samples.items()}
                case = f"chat, {'stream' if stream else 'whole'}"
                print(
                    f"{case:<16}{ms['off']:>7.3f}ms{ms['text']:>7.3f}ms{ms['json']:>7.3f}ms"
                    f"{ms['text'] / ms['off']:>9.3f}x{ms['json'] / ms['off']:>9.3f}x"
                )
    print(f"\nrequests per case and round: {requests}, rounds: {rounds}; CPU ms per request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    here = Path(__file__).with_name("serve_overhead.py")
    command = [sys.executable, str(here), "--backend", "--port", str(port)]
    backend = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, backend)
        import uvloop

        uvloop.run(measure(f"http://127.0.0.1:{port}/v1", args.requests, args.rounds))
    finally:
        backend.terminate()
        backend.wait()


if __name__ == "__main__":
    main()
