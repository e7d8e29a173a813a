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
items), an Ollama chat's task (`TaskStore.start` then `finish`) as their caller waits for
them (on PostgreSQL a task with an id the store made is written behind its caller), and the
same until its rows are written (`TaskStore.flush`). PostgreSQL's excess over SQLite there
is what a request pays at c=1 at the least (the put, and a task's end: the answer waits for
it); at c=32 the statements' client CPU is paid once per request waiting in line.

With `--baseline-src DIR` (another tree's `src`, e.g. `git archive main src | tar -x -C
/tmp/base`) the servers of both trees run in the same run, all four taking turns, and the
floor is measured for each tree (in a process of its own that imports that tree): the
table then has both trees' rows, `base` and `this`.

Run: .venv/bin/python bench/store_overhead.py [--requests 1000] [--rounds 3]
     [--baseline-src DIR]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
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


def store_costs(url: str | None, home: Path, count: int) -> tuple[float, float, float]:
    """p50 (us) of a stored response's put, of a task's start and finish as their caller
    waits for them, and of the same until their rows are written, on one store."""
    responses, tasks = ResponseStore.in_home(home, url), TaskStore.in_home(home, url)
    flush = getattr(tasks, "flush", lambda: None)  # a tree before the write-behind has none
    put = p50_us(
        lambda n: responses.put({**ANSWER, "id": f"resp_{n}"}, ANSWER_ITEMS, "default"), count
    )
    task = p50_us(lambda n: tasks.finish(tasks.start(None, "default", "ollama").id), count)

    def written(n: int) -> None:
        tasks.finish(tasks.start(None, "default", "ollama").id)
        flush()

    task_written = p50_us(written, count)
    responses.close()
    tasks.close()
    return put, task, task_written


def floor(postgres_url: str, folder: Path, count: int) -> None:
    """The store calls of one request, in this process: bare PostgreSQL round trip, stored
    response, task start and finish, on each store."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        bare = p50_us(lambda n: conn.execute("SELECT 1").fetchone(), count)
    print(f"  one bare round trip to PostgreSQL (SELECT 1): {bare:.0f} us")
    costs = {
        store: store_costs(postgres_url if store == "postgresql" else None, folder / store, count)
        for store in STORES
    }
    whats = ("stored response (put)", "task start + finish", "... until written")
    for n, what in enumerate(whats):
        sqlite, postgresql = costs["sqlite"][n], costs["postgresql"][n]
        print(
            f"  {what:<24} SQLite {sqlite:>5.0f} us  PostgreSQL {postgresql:>5.0f} us"
            f"  (+{postgresql - sqlite:.0f} us)"
        )
    sys.stdout.flush()


def floor_of(tree: str, src: str, postgres_url: str, folder: Path, count: int) -> None:
    """`floor` in a process that imports the tree at `src` (this file run with `--floor`)."""
    print(f"floor of {tree} (p50 of {count} calls in-process, no HTTP):", flush=True)
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": src}
    command = [sys.executable, __file__, "--floor", postgres_url, str(folder), str(count)]
    subprocess.run(command, env=env, check=True)


Server = tuple[str, str]  # (tree, store)


async def measure(ports: dict[Server, tuple[int, int]], requests: int, rounds: int) -> None:
    print(f"{'case':<24}{'tree':<6}{'store':<12}{'p50':>9}{'CPU/req':>10}{'PG - SQLite':>13}")
    for case, (path, dialect) in CASES.items():
        for clients in (1, 32):
            p50s: dict[Server, list[float]] = {s: [] for s in ports}
            cpus: dict[Server, list[float]] = {s: [] for s in ports}
            for _ in range(rounds):
                for server, (port, pid) in ports.items():
                    url = f"http://127.0.0.1:{port}{path}"
                    target = Target("/".join(server), url, pid, dialect)
                    latencies, _, cpu = await run_case(target, False, clients, requests)
                    p50s[server].append(percentile(latencies, 0.5) * 1e3)
                    cpus[server].append(cpu / len(latencies) * 1e3)
            p50 = {s: statistics.median(p50s[s]) for s in ports}
            label = f"{case}, c={clients}"
            for tree, store in ports:
                extra = p50[tree, store] - p50[tree, "sqlite"] if store == "postgresql" else None
                delta = f"{extra:+.2f} ms" if extra is not None else ""
                cpu = statistics.median(cpus[tree, store])
                row = f"{label:<24}{tree:<6}{store:<12}{p50[tree, store]:>7.2f}ms"
                print(f"{row}{cpu:>8.2f}ms{delta:>13}")
                label = ""
            sys.stdout.flush()
    print(f"\nrequests per case and round: {requests}, rounds: {rounds} (medians of rounds)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="turns of each store (medians)")
    parser.add_argument(
        "--baseline-src", help="another tree's src folder, measured beside this one (`base`)"
    )
    parser.add_argument("--floor", nargs=3, help=argparse.SUPPRESS)  # URL FOLDER COUNT
    args = parser.parse_args()
    if args.floor:
        url, folder, count = args.floor
        floor(url, Path(folder), int(count))
        return
    this_src = str(Path(__file__).resolve().parents[1] / "src")
    trees = {"this": this_src}
    if args.baseline_src:
        trees = {"base": str(Path(args.baseline_src).resolve()), **trees}
    backend_port = free_port()
    backend = f"http://127.0.0.1:{backend_port}/v1"
    model = (
        "runtime:\n  models:\n    - name: default\n      provider: openai\n"
        f"      model: fake\n      base_url: {backend}\n      api_key: none\n"
    )
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        server = stack.enter_context(throwaway_postgres())
        print(f"load average: {os.getloadavg()[0]:.2f}")
        for tree, src in trees.items():
            floor_of(tree, src, fresh_database(server), Path(tmp) / f"floor-{tree}", args.requests)
        print()
        backend_cmd = [sys.executable, serve_overhead.__file__, "--backend"]
        env = {"FARMHAND_API_KEYS": API_KEY}
        stack.enter_context(
            serve_overhead.started([*backend_cmd, "--port", str(backend_port)], backend_port, env)
        )
        ports: dict[Server, tuple[int, int]] = {}
        for tree, src in trees.items():
            stores = {"sqlite": "", "postgresql": f"server:\n  store: {fresh_database(server)}\n"}
            for store, section in stores.items():
                home = Path(tmp) / f"{tree}-{store}"
                home.mkdir()
                config = home / "farmhand.yaml"
                config.write_text(model + section)
                port = free_port()
                serve = [
                    *(sys.executable, "-m", "farmhand", "serve", "--port", str(port)),
                    *("--config", str(config), "--log-level", "warning"),
                ]
                env = {"FARMHAND_API_KEYS": API_KEY, "FARMHAND_HOME": str(home), "PYTHONPATH": src}
                started = serve_overhead.started(serve, port, env)
                ports[tree, store] = (port, stack.enter_context(started))
        anyio.run(measure, ports, args.requests, args.rounds, backend_options={"use_uvloop": True})


if __name__ == "__main__":
    main()
