"""What a deployment pool costs per request, against one base_url, in the same run.

A model with `deployments` against the same model with one `base_url`, through the same
`farmhand serve`.

Claim: routing a turn through `DeploymentPool` (choosing the deployment with the fewest in
flight, counting, the retry wrapper around its stream) adds nothing measurable to a
request.

Backends: two fast fake OpenAI-compatible servers (bench/serve_overhead.py's, each its own
process on loopback: a 16-word answer at once, whole or as a 17-chunk stream). One
`farmhand serve` process holds three models on them:
- `single`: `base_url` of backend A (the baseline: no pool);
- `pool-1`: `deployments: [A]` (the pool's own cost, the same backend behind it);
- `pool-2`: `deployments: [A, B]` (turns spread over two backends).

Method: `--requests` chat completions per case after a warm-up, from one aiohttp session
with 1 and with 32 concurrent clients, non-streamed and streamed (timed until `[DONE]`);
with `--rounds N` every model runs in turn N times and each number is the median of its
rounds. Prints p50, req/s and farmhand's CPU time per request (from /proc), and each
pool's p50 and CPU per request as a ratio to `single` (1.00: no cost).

Run: .venv/bin/python bench/deployment_pool.py [--requests 1000] [--rounds 3]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

import serve_overhead
from serve_overhead import API_KEY, CHAT, Target, free_port, percentile, run_case, started

MODELS = ("single", "pool-1", "pool-2")


@dataclass(frozen=True)
class Round:
    p50: float  # ms
    rate: float  # requests per second
    cpu: float  # ms of farmhand's CPU per request


def target(url: str, pid: int, model: str) -> Target:
    """OpenAI's chat completions to `model` (serve_overhead's CHAT, another model named)."""
    return Target(model, url, pid, replace(CHAT, body={**CHAT.body, "model": model}))


async def one_round(url: str, pid: int, model: str, stream: bool, clients: int, n: int) -> Round:
    latencies, wall, cpu = await run_case(target(url, pid, model), stream, clients, n)
    count = len(latencies)
    return Round(percentile(latencies, 0.5) * 1e3, count / wall, cpu / count * 1e3)


async def measure(url: str, pid: int, requests: int, rounds: int) -> None:
    print(f"{'case':<20}{'model':<9}{'p50':>9}{'req/s':>8}{'CPU/req':>10}{'p50 x':>8}{'CPU x':>8}")
    for stream in (False, True):
        for clients in (1, 32):
            case = f"{'stream' if stream else 'non-stream'}, c={clients}"
            got: dict[str, list[Round]] = {m: [] for m in MODELS}
            for _ in range(rounds):
                for model in MODELS:
                    got[model].append(await one_round(url, pid, model, stream, clients, requests))
            base_p50 = statistics.median(r.p50 for r in got["single"])
            base_cpu = statistics.median(r.cpu for r in got["single"])
            for model in MODELS:
                p50 = statistics.median(r.p50 for r in got[model])
                rate = statistics.median(r.rate for r in got[model])
                cpu = statistics.median(r.cpu for r in got[model])
                print(
                    f"{case:<20}{model:<9}{p50:>7.2f}ms{rate:>8.0f}{cpu:>8.2f}ms"
                    f"{p50 / base_p50:>8.2f}{cpu / base_cpu:>8.2f}"
                )
                case = ""
            sys.stdout.flush()
    print(
        f"\nrequests per case and round: {requests}, rounds: {rounds} (each number the median"
        " of its rounds); p50 x and CPU x: the model's against `single` (one base_url)"
    )


def config_text(a: str, b: str) -> str:
    model = "provider: openai, model: fake, api_key: none"
    return (
        "runtime:\n  models:\n"
        f"    - {{name: single, {model}, base_url: '{a}'}}\n"
        f"    - {{name: pool-1, {model}, deployments: [{{base_url: '{a}'}}]}}\n"
        f"    - {{name: pool-2, {model},"
        f" deployments: [{{base_url: '{a}'}}, {{base_url: '{b}'}}]}}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each case (medians)")
    args = parser.parse_args()
    port_a, port_b, farmhand_port = free_port(), free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        config = Path(tmp) / "farmhand.yaml"
        urls = [f"http://127.0.0.1:{port}/v1" for port in (port_a, port_b)]
        config.write_text(config_text(*urls))
        env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": tmp}
        for port in (port_a, port_b):
            backend = [sys.executable, serve_overhead.__file__, "--backend", "--port", str(port)]
            stack.enter_context(started(backend, port, env))
        serve = [
            *(sys.executable, "-m", "farmhand", "serve", "--port", str(farmhand_port)),
            *("--config", str(config), "--log-level", "warning"),
        ]
        pid = stack.enter_context(started(serve, farmhand_port, env))
        url = f"http://127.0.0.1:{farmhand_port}/v1/chat/completions"
        anyio.run(
            measure, url, pid, args.requests, args.rounds, backend_options={"use_uvloop": True}
        )


if __name__ == "__main__":
    main()
