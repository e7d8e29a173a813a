"""`farmhand serve` against llama-server with several clients at once, on the same GGUF.

Claim: farmhand's embedded engine serves concurrent clients at least as well as llama-server
(`--jinja -np N`, the build the set-up installs), while parsing the tool calls llama-server
leaves as text; and one client is no slower than before.

Method: the same tool-calling chats (a question and a few tools, temperature 0, the same
max_tokens) are sent to each server at concurrency 1, 4 and 8 (`--levels`), through the
OpenAI SDK's async client: a pool of N workers takes the chats in order. farmhand runs with
its default engine settings (queue raised so no chat is refused); llama-server is started
again for each level with `-np N` and `-c` N x the context, so each slot has the context
farmhand's model has. The servers run one after the other, never at the same time. For each
level: wall time, aggregate completion tokens per second (completion tokens of all chats
over the wall time), p50 and p95 latency of a chat, and calls parsed (a chat whose answer
has a structured tool call naming the tool the question needs), and the prompt tokens each
server evaluated against those it was sent (farmhand's `/api/ps` count, llama-server's
`timings.prompt_n`): the chats share their system prompt and tools, so a server that shares
prompt heads evaluates that head once.

Run: .venv/bin/python bench/concurrency.py [--levels 1 4 8] [--chats 8] [--max-tokens 128]
     [--model-path GGUF] [--n-ctx 4096] [--n-parallel N] [--skip-llama-server]

Timings are printed, never asserted; on a shared machine read them as rough.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from openai import AsyncOpenAI

from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from served import farmhand_serving, llama_server_serving


def _tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": text} for key, text in properties.items()
                },
                "required": list(properties),
            },
        },
    }


TOOLS = [
    _tool("get_weather", "Get the current weather for a city.", city="The city, e.g. Paris"),
    _tool("get_time", "Get the current local time in a time zone.", timezone="e.g. Europe/Paris"),
    _tool(
        "convert_currency",
        "Convert an amount of money from one currency to another.",
        amount="The amount, e.g. 12.5",
        source="ISO code of the currency to convert from",
        target="ISO code of the currency to convert to",
    ),
    _tool("search_flights", "Find flights between two cities.", origin="City", destination="City"),
]

# (question, the tool it needs)
CHATS = [
    ("What is the weather like in Lisbon right now?", "get_weather"),
    ("What time is it in Tokyo (Asia/Tokyo)?", "get_time"),
    ("Convert 250 US dollars to euros.", "convert_currency"),
    ("Find me flights from Berlin to Madrid.", "search_flights"),
    ("Is it raining in Vancouver?", "get_weather"),
    ("What is the local time in America/New_York?", "get_time"),
    ("How many Japanese yen is 80 British pounds?", "convert_currency"),
    ("Which flights go from Oslo to Rome?", "search_flights"),
]
SYSTEM = "You are a helpful assistant. Use the tools when a question needs them."


@dataclass
class Outcome:
    seconds: float
    completion_tokens: int
    parsed: bool
    prompt_tokens: int = 0
    evaluated: int | None = None  # prompt tokens the server evaluated (llama-server's timings)


@dataclass
class Row:
    server: str
    level: int
    wall: float
    outcomes: list[Outcome]
    evaluated: int | None = None  # prompt tokens evaluated over the level, if the server says

    def evaluated_cell(self) -> str:
        sent = sum(o.prompt_tokens for o in self.outcomes)
        each = [o.evaluated for o in self.outcomes]
        evaluated = self.evaluated if None in each else sum(e or 0 for e in each)
        return "?" if evaluated is None else f"{evaluated}/{sent}"

    def cells(self) -> list[str]:
        latencies = sorted(o.seconds for o in self.outcomes)
        tokens = sum(o.completion_tokens for o in self.outcomes)
        p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
        return [
            self.server,
            str(self.level),
            f"{self.wall:.1f} s",
            f"{tokens / self.wall:.1f}",
            f"{statistics.median(latencies):.1f} s",
            f"{p95:.1f} s",
            f"{sum(o.parsed for o in self.outcomes)}/{len(self.outcomes)}",
            self.evaluated_cell(),
        ]


async def _chat(client: AsyncOpenAI, model: str, index: int, max_tokens: int) -> Outcome:
    question, tool = CHATS[index % len(CHATS)]
    started = time.perf_counter()
    reply = await client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        tools=TOOLS,  # type: ignore[arg-type]
        temperature=0,
        max_tokens=max_tokens,
    )
    seconds = time.perf_counter() - started
    calls = reply.choices[0].message.tool_calls or []
    parsed = any(getattr(c, "function", None) and c.function.name == tool for c in calls)
    usage = reply.usage
    timings = (reply.model_extra or {}).get("timings") or {}
    return Outcome(
        seconds,
        usage.completion_tokens if usage else 0,
        parsed,
        usage.prompt_tokens if usage else 0,
        timings.get("prompt_n"),
    )


def _evaluated_so_far(url: str) -> int | None:
    """farmhand's count of prompt tokens its engine evaluated (`/api/ps`), None elsewhere."""
    try:
        models = httpx.get(url.removesuffix("/v1") + "/api/ps", timeout=30).json()["models"]
    except (httpx.HTTPError, ValueError, KeyError):
        return None
    engines = [m.get("farmhand") for m in models if isinstance(m, dict)]
    counts = [e["prompt_tokens_processed"] for e in engines if e and "prompt_tokens_processed" in e]
    return sum(counts) if counts else None


async def _level(url: str, model: str, level: int, chats: int, max_tokens: int) -> Row:
    client = AsyncOpenAI(base_url=url, api_key="none", max_retries=0, timeout=1800)
    await _chat(client, model, 0, 8)  # warm: the model loaded, its head cached
    pending = list(range(chats))
    outcomes: list[Outcome] = []

    async def worker() -> None:
        while pending:
            index = pending.pop(0)
            outcomes.append(await _chat(client, model, index, max_tokens))

    before = _evaluated_so_far(url)
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(level):
            group.create_task(worker())
    wall = time.perf_counter() - started
    await client.close()
    after = _evaluated_so_far(url)
    evaluated = None if before is None or after is None else after - before
    return Row("", level, wall, outcomes, evaluated)


def _measured(server: str, port: int, level: int, args: argparse.Namespace) -> Row:
    url = f"http://127.0.0.1:{port}/v1"
    row = asyncio.run(_level(url, "bench", level, args.chats, args.max_tokens))
    row.server = server
    print("  ", " | ".join(row.cells()), flush=True)
    return row


def farmhand_rows(gguf: Path, args: argparse.Namespace, work: Path) -> list[Row]:
    with farmhand_serving(gguf, work, n_ctx=args.n_ctx, n_parallel=args.n_parallel) as port:
        return [_measured("farmhand", port, level, args) for level in args.levels]


def llama_server_rows(gguf: Path, args: argparse.Namespace, work: Path) -> list[Row]:
    rows = []
    for level in args.levels:  # a fresh server per level: -np is fixed at start
        with llama_server_serving(gguf, work, n_ctx=args.n_ctx, n_parallel=level) as port:
            rows.append(_measured("llama-server", port, level, args))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--model-path", type=Path, default=None)
    parser.add_argument(
        "--n-parallel", type=int, default=None, help="farmhand's n_parallel (default: its own)"
    )
    parser.add_argument("--skip-llama-server", action="store_true")
    args = parser.parse_args()
    gguf = args.model_path or ensure_model(DEFAULT_MODEL)
    print(f"{gguf.name}: {args.chats} tool-calling chats per level, levels {args.levels}")
    with tempfile.TemporaryDirectory(prefix="farmhand-bench-") as temp:
        work = Path(temp)
        rows = farmhand_rows(gguf, args, work)
        if not args.skip_llama_server:
            rows += llama_server_rows(gguf, args, work)
    header = ["server", "clients", "wall", "tok/s (aggregate)", "p50", "p95", "calls parsed",
              "prompt tokens evaluated/sent"]  # fmt: skip
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |")
    by = {(r.server, r.level): r for r in rows}
    for level in args.levels if not args.skip_llama_server else []:
        ours, theirs = by[("farmhand", level)], by[("llama-server", level)]
        tok = lambda r: sum(o.completion_tokens for o in r.outcomes) / r.wall  # noqa: E731
        p50 = lambda r: statistics.median(o.seconds for o in r.outcomes)  # noqa: E731
        print(
            f"c={level}: farmhand/llama-server aggregate tok/s {tok(ours) / tok(theirs):.2f}x,"
            f" p50 {p50(ours) / p50(theirs):.2f}x"
        )


if __name__ == "__main__":
    main()
