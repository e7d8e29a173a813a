"""A load drill: two `farmhand serve` replicas on one PostgreSQL, a model on two backends,
one backend killed and brought back while 64 clients keep asking.

Claim (issue 31): run the way a team runs a gateway, farmhand loses nothing when a backend
dies. While one of the model's two deployments is killed (SIGKILL) and restarted midway,
a request that had not started streaming is retried on the other deployment and succeeds,
one cut mid-stream ends with a clear error, and no stored response is lost: every response
id a client got back is read back from BOTH replicas afterwards.

Set-up: a throwaway PostgreSQL on loopback (tests/support/postgres.py, as the tests start
it), two fake OpenAI-compatible backends (bench/serve_overhead.py's: a 16-word answer at
once, whole or streamed), each its own process, and two `farmhand serve` processes with
one config: the model `default` with `deployments: [A, B]`, `server.store` the database.

Method: `--requests` requests (default 20,000) from `--clients` concurrent clients
(default 64, one aiohttp session), sent round robin to the two replicas as a load
balancer would; the requests take turns among four kinds: chat completions whole and
streamed, and Responses with `store: true` whole and streamed. Backend B gets SIGKILL when
a third of the requests have been sent, and is started again (same port) at two thirds.
Then every stored response id is read with `GET /v1/responses/{id}` from each replica,
and each replica's `/api/ps` shows what its deployments served.

Prints requests ok and failed by kind (failures by reason, and by when they were sent:
before the kill, while B was down, after its restart), p50/p99 of the requests that
succeeded, the stored ids missing on each replica, and the deployments' counts (B's
`served` growing after the restart: traffic came back).

Run: .venv/bin/python bench/load_drill.py [--requests 20000] [--clients 64]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import anyio

import serve_overhead
from serve_overhead import API_KEY, free_port, percentile, started, wait_for_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the server

from tests.support.postgres import fresh_database, throwaway_postgres

KINDS = ("chat", "chat, streamed", "responses, stored", "responses, stored, streamed")
PHASES = ("started before the kill", "started while B was down", "started after B's restart")
QUESTION = "Say something."


class Failed(Exception):
    """A request that did not end as it should: why, in a few words."""


@dataclass
class Tally:
    ok: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_phase: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    phase: str = PHASES[0]


class Backend:
    """A fake backend process that can be killed and started again on its port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, serve_overhead.__file__, "--backend", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, self.process)

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def request_for(kind: str) -> tuple[str, dict[str, Any]]:
    stream = kind.endswith("streamed")
    if kind.startswith("chat"):
        body = {"model": "default", "messages": [{"role": "user", "content": QUESTION}]}
        return "/v1/chat/completions", {**body, "stream": stream}
    return "/v1/responses", {"model": "default", "input": QUESTION, "store": True, "stream": stream}


async def ask(client: aiohttp.ClientSession, base: str, kind: str) -> str | None:
    """One request of `kind`; the response id when it stored one."""
    path, body = request_for(kind)
    async with client.post(base + path, json=body) as response:
        if response.status != 200:
            raise Failed(f"HTTP {response.status}: {(await response.text())[:100]}")
        if not body["stream"]:
            answer = await response.json()
            return str(answer["id"]) if path == "/v1/responses" else None
        return await read_stream(response, path == "/v1/responses")


async def read_stream(response: aiohttp.ClientResponse, responses_api: bool) -> str | None:
    """Read a stream to its end; the id of the completed response (Responses API)."""
    async for raw in response.content:
        line = raw.rstrip(b"\r\n")
        if not line.startswith(b"data: "):
            continue
        data = line[len(b"data: ") :]
        if data == b"[DONE]":
            return None
        event = json.loads(data)
        if event.get("type") == "error" or ("error" in event and "type" not in event):
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            raise Failed(f"stream error: {str(message or event.get('message'))[:100]}")
        if responses_api and event.get("type") == "response.completed":
            return str(event["response"]["id"])
        if responses_api and event.get("type") == "response.failed":
            raise Failed("stream ended with response.failed")
    raise Failed("stream ended without its last event")


async def drill(
    replicas: list[str], backend_b: Backend, requests: int, clients: int
) -> tuple[Tally, float, dict[str, list[dict[str, Any]]]]:
    """Run the requests, killing and restarting B on the way; the tally, the wall time,
    and each replica's deployments just before B's restart."""
    tally = Tally()
    kill_at, restart_at = requests // 3, 2 * requests // 3
    sent = 0
    before_restart: dict[str, list[dict[str, Any]]] = {}
    headers = {"authorization": f"Bearer {API_KEY}"}
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(
        connector=connector, headers=headers, timeout=timeout
    ) as client:

        async def worker() -> None:
            nonlocal sent, before_restart
            while sent < requests:
                n = sent
                sent += 1
                if n == kill_at:
                    backend_b.kill()
                    tally.phase = PHASES[1]
                elif n == restart_at:
                    before_restart = {r: await deployments(client, r) for r in replicas}
                    await anyio.to_thread.run_sync(backend_b.start)
                    tally.phase = PHASES[2]
                base, kind = replicas[n % len(replicas)], KINDS[(n // 2) % len(KINDS)]
                phase = tally.phase
                start = time.perf_counter()
                try:
                    response_id = await ask(client, base, kind)
                except Failed as exc:
                    why = str(exc)
                except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
                    why = f"{type(exc).__name__}: {str(exc)[:100]}"
                else:
                    tally.latencies.append(time.perf_counter() - start)
                    tally.ok[kind] += 1
                    if response_id is not None:
                        tally.stored.append(response_id)
                    continue
                tally.failed[kind] += 1
                tally.reasons[(kind, why)] += 1
                tally.by_phase[phase] += 1

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker)
        return tally, time.perf_counter() - start, before_restart


async def deployments(client: aiohttp.ClientSession, replica: str) -> list[dict[str, Any]]:
    """The model's deployments as the replica's `/api/ps` shows them."""
    async with client.get(f"{replica}/api/ps") as response:
        listed = await response.json()
    for model in listed.get("models", []):
        found = model.get("farmhand", {}).get("deployments")
        if found:
            return list(found)
    return []


async def missing_on(replica: str, ids: list[str], clients: int) -> tuple[int, Counter[str]]:
    """How many of `ids` the replica cannot return (GET /v1/responses/{id}), and why."""
    headers = {"authorization": f"Bearer {API_KEY}"}
    missing = 0
    why: Counter[str] = Counter()
    queue = list(ids)
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=clients), headers=headers
    ) as client:

        async def worker() -> None:
            nonlocal missing
            while queue:
                response_id = queue.pop()
                try:
                    async with client.get(f"{replica}/v1/responses/{response_id}") as response:
                        body = await response.json() if response.status == 200 else None
                        if body is None or body.get("id") != response_id:
                            missing += 1
                            why[f"HTTP {response.status}"] += 1
                except (TimeoutError, aiohttp.ClientError) as exc:
                    missing += 1
                    why[type(exc).__name__] += 1

        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker)
    return missing, why


def show_deployments(
    before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]]
) -> None:
    print("\ndeployments (/api/ps at the end; served since B's restart in brackets):")
    for name, (replica, listed) in zip("ab", after.items(), strict=True):
        earlier = {d["url"]: d["served"] for d in before.get(replica, [])}
        for deployment in listed:
            url = deployment["url"]
            since = deployment["served"] - earlier.get(url, 0)
            print(
                f"  replica {name}  {url:<28}{deployment['state']:<9}sent {deployment['sent']:>6}"
                f"  served {deployment['served']:>6} (+{since})"
                f"  failures {deployment['failures']:>4}"
            )


def report(
    tally: Tally,
    wall: float,
    missing: dict[str, tuple[int, Counter[str]]],
    before: dict[str, list[dict[str, Any]]],
    after: dict[str, list[dict[str, Any]]],
) -> None:
    total_ok, total_failed = sum(tally.ok.values()), sum(tally.failed.values())
    print(f"\n{'kind':<30}{'ok':>8}{'failed':>8}")
    for kind in KINDS:
        print(f"{kind:<30}{tally.ok[kind]:>8}{tally.failed[kind]:>8}")
    print(f"{'all':<30}{total_ok:>8}{total_failed:>8}")
    if tally.latencies:
        p50, p99 = (percentile(tally.latencies, q) * 1e3 for q in (0.5, 0.99))
        rate = (total_ok + total_failed) / wall
        print(f"\nrequests that succeeded: p50 {p50:.1f} ms, p99 {p99:.1f} ms;")
        print(f"wall {wall:.1f} s ({rate:.0f} requests/s over both replicas)")
    print(
        "failed, by when they were sent: " + ", ".join(f"{p} {tally.by_phase[p]}" for p in PHASES)
    )
    for (kind, why), count in tally.reasons.most_common(10):
        print(f"  {count:>6}  {kind}: {why}")
    print(f"\nstored responses a client got the id of: {len(tally.stored)}")
    for name, (replica, (count, causes)) in zip("ab", missing.items(), strict=True):
        detail = f" ({', '.join(f'{k} {v}' for k, v in causes.items())})" if count else ""
        print(f"  missing on replica {name} ({replica}): {count}{detail}")
    show_deployments(before, after)


async def run(replicas: list[str], backend_b: Backend, requests: int, clients: int) -> None:
    print(f"load average at the start: {os.getloadavg()[0]:.2f}; {requests} requests, c={clients}")
    tally, wall, before = await drill(replicas, backend_b, requests, clients)
    missing = {r: await missing_on(r, tally.stored, clients) for r in replicas}
    headers = {"authorization": f"Bearer {API_KEY}"}
    async with aiohttp.ClientSession(headers=headers) as client:
        after = {r: await deployments(client, r) for r in replicas}
    report(tally, wall, missing, before, after)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


def config_text(backends: list[str], store: str) -> str:
    listed = ", ".join(f"{{base_url: '{url}'}}" for url in backends)
    return (
        "runtime:\n  models:\n"
        f"    - {{name: default, provider: openai, model: fake, api_key: none,"
        f" deployments: [{listed}]}}\n"
        f"server:\n  store: '{store}'\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=64)
    args = parser.parse_args()
    port_a, port_b = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        store = fresh_database(stack.enter_context(throwaway_postgres()))
        backend_a = [sys.executable, serve_overhead.__file__, "--backend", "--port", str(port_a)]
        stack.enter_context(started(backend_a, port_a, {}))
        backend_b = Backend(port_b)
        stack.callback(backend_b.stop)
        backend_b.start()
        urls = [f"http://127.0.0.1:{port}/v1" for port in (port_a, port_b)]
        replicas = []
        for name in ("a", "b"):
            home = Path(tmp) / name
            home.mkdir()
            config = home / "farmhand.yaml"
            config.write_text(config_text(urls, store))
            port = free_port()
            serve = [
                *(sys.executable, "-m", "farmhand", "serve", "--port", str(port)),
                *("--config", str(config), "--log-level", "warning"),
            ]
            env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": str(home)}
            stack.enter_context(started(serve, port, env))
            replicas.append(f"http://127.0.0.1:{port}")
        uvloop = {"use_uvloop": True}
        anyio.run(run, replicas, backend_b, args.requests, args.clients, backend_options=uvloop)


if __name__ == "__main__":
    main()
