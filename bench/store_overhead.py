"""What the shared PostgreSQL store adds to a request, against the SQLite file, in one run.

Claim (issue 31): `server.store: postgresql://...` (psycopg 3 pool, the replicas' shared
state) adds at most 0.3 ms to a request's p50 against the default SQLite file, at 1 and at
32 concurrent clients.

Backend: serve_overhead's fast fake OpenAI-compatible server (its own process on
loopback). Two `farmhand serve` processes on it, the same config but `server.store`: one
with the default (SQLite under FARMHAND_HOME), one with a database of a throwaway
PostgreSQL server on loopback (Debian's, as the tests start it: fsync off, so the number is
the client's cost, not a disk's). Requests that write the store: the Responses API with
`store: true` (a response and its items stored per request) and Ollama's `/api/chat` (a
task row written at start and at end).

Method: `--requests` per case after a warm-up, 1 and 32 concurrent clients, whole answers;
with `--rounds N` the two servers take turns N times and each number is the median of its
rounds. Prints p50 and farmhand's CPU per request for each store and PostgreSQL's p50
minus SQLite's in milliseconds (the target: +0.3 ms or less).

The floor, measured first in the same run and printed above the table (p50 of
`--requests` calls in this process, no HTTP): one bare round trip to the PostgreSQL server
(`SELECT 1` on a connection of its own), and what the request's own store calls cost on
each store: a stored response as `ResponseStore.put` writes it (the fake's answer and its
items) and an Ollama chat's task (`TaskStore.start` then `finish`). PostgreSQL's excess
over SQLite there is what a request pays at c=1 at the least; at c=32 the statements'
client CPU on the event loop is paid once per request waiting in line.

Run: .venv/bin/python bench/store_overhead.py [--requests 1000] [--rounds 3]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import anyio
import psycopg

import serve_overhead
from serve_overhead import API_KEY, RESPONSES, Dialect, Target, free_port, percentile, run_case

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the server

from tests.support.postgres import fresh_database, throwaway_postgres

from farmhand.service.responses_store import ResponseStore
from farmhand.service.tasks import TaskStore

STORED_RESPONSE = Dialect({**RESPONSES.body, "store": True}, RESPONSES.last_line, RESPONSES.text)
OLLAMA_CHAT = Dialect(
    {
        "model": "default",
        "messages": [{"role": "user", "content": "Say something."}],
        "stream": False,
    },
    "(not streamed)",
    lambda j: j["message"]["content"],
)
CASES = {
    "responses store": ("/v1/responses", STORED_RESPONSE),
    "ollama chat": ("/api/chat", OLLAMA_CHAT),
}
STORES = ("sqlite", "postgresql")


ANSWER_ITEMS = [{"id": "msg_in", "type": "message", "role": "user", "content": "Say something."}]
ANSWER = {
    "id": "resp_x",
    "object": "response",
    "status": "completed",
    "model": "default",
    "output": [
        {
            "id": "msg_out",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": " ".join(serve_overhead.WORDS)}],
        }
    ],
}


def p50_us(call: Callable[[int], object], count: int) -> float:
    """The median time of `call(n)` for n in 0..count-1, in microseconds (after a warm-up)."""
    for n in range(min(50, count)):
        call(-1 - n)
    times = []
    for n in range(count):
        start = time.perf_counter()
        call(n)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def store_costs(url: str | None, home: Path, count: int) -> tuple[float, float]:
    """p50 (us) of a stored response's put and of a task's start and finish on one store."""
    responses, tasks = ResponseStore.in_home(home, url), TaskStore.in_home(home, url)
    put = p50_us(
        lambda n: responses.put({**ANSWER, "id": f"resp_{n}"}, ANSWER_ITEMS, "default"), count
    )
    task = p50_us(lambda n: tasks.finish(tasks.start(None, "default", "ollama").id), count)
    responses.close()
    tasks.close()
    return put, task


def floor(postgres_url: str, folder: Path, count: int) -> None:
    """The store calls of one request, in this process: bare PostgreSQL round trip, stored
    response, task start and finish, on each store."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        bare = p50_us(lambda n: conn.execute("SELECT 1").fetchone(), count)
    print(f"floor (p50 of {count} calls in-process, no HTTP):")
    print(f"  one bare round trip to PostgreSQL (SELECT 1): {bare:.0f} us")
    costs = {
        store: store_costs(postgres_url if store == "postgresql" else None, folder / store, count)
        for store in STORES
    }
    for n, what in enumerate(("stored response (put)", "task (start + finish)")):
        sqlite, postgresql = costs["sqlite"][n], costs["postgresql"][n]
        print(
            f"  {what:<24} SQLite {sqlite:>5.0f} us  PostgreSQL {postgresql:>5.0f} us"
            f"  (+{postgresql - sqlite:.0f} us)"
        )
    print()


async def measure(ports: dict[str, tuple[int, int]], requests: int, rounds: int) -> None:
    print(f"{'case':<24}{'store':<12}{'p50':>9}{'CPU/req':>10}{'PG - SQLite':>13}")
    for case, (path, dialect) in CASES.items():
        for clients in (1, 32):
            p50s: dict[str, list[float]] = {s: [] for s in STORES}
            cpus: dict[str, list[float]] = {s: [] for s in STORES}
            for _ in range(rounds):
                for store in STORES:
                    port, pid = ports[store]
                    target = Target(store, f"http://127.0.0.1:{port}{path}", pid, dialect)
                    latencies, _, cpu = await run_case(target, False, clients, requests)
                    p50s[store].append(percentile(latencies, 0.5) * 1e3)
                    cpus[store].append(cpu / len(latencies) * 1e3)
            p50 = {s: statistics.median(p50s[s]) for s in STORES}
            label = f"{case}, c={clients}"
            for store in STORES:
                extra = p50["postgresql"] - p50["sqlite"] if store == "postgresql" else None
                delta = f"{extra:+.2f} ms" if extra is not None else ""
                cpu = statistics.median(cpus[store])
                print(f"{label:<24}{store:<12}{p50[store]:>7.2f}ms{cpu:>8.2f}ms{delta:>13}")
                label = ""
            sys.stdout.flush()
    print(f"\nrequests per case and round: {requests}, rounds: {rounds} (medians of rounds)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="turns of each store (medians)")
    args = parser.parse_args()
    backend_port = free_port()
    backend = f"http://127.0.0.1:{backend_port}/v1"
    model = (
        "runtime:\n  models:\n    - name: default\n      provider: openai\n"
        f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
    )
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        server = stack.enter_context(throwaway_postgres())
        print(f"load average: {os.getloadavg()[0]:.2f}")
        floor(fresh_database(server), Path(tmp) / "floor", args.requests)
        stores = {"sqlite": "", "postgresql": f"server:\n  store: {fresh_database(server)}\n"}
        backend_cmd = [sys.executable, serve_overhead.__file__, "--backend"]
        env = {"FARMHAND_API_KEYS": API_KEY}
        stack.enter_context(
            serve_overhead.started([*backend_cmd, "--port", str(backend_port)], backend_port, env)
        )
        ports: dict[str, tuple[int, int]] = {}
        for store, section in stores.items():
            home = Path(tmp) / store
            home.mkdir()
            config = home / "farmhand.yaml"
            config.write_text(model + section)
            port = free_port()
            serve = [
                *(sys.executable, "-m", "farmhand", "serve", "--port", str(port)),
                *("--config", str(config), "--log-level", "warning"),
            ]
            env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": str(home)}
            ports[store] = (port, stack.enter_context(serve_overhead.started(serve, port, env)))
        anyio.run(measure, ports, args.requests, args.rounds, backend_options={"use_uvloop": True})


if __name__ == "__main__":
    main()
