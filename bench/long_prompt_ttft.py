"""A second client's time to first token while a first one sends a 12k-token prompt.

Claim (issue 26): on farmhand's engine, one client's long prompt does not hold everyone
else: a short tool-calling chat that arrives while a 12k-token prompt is being read gets its
first token within 2x of its time alone. Baseline: the same short chat alone, on the same
server, in the same run; llama-server (`--jinja -np 2`, the set-up's build) is measured the
same way beside it.

Method, per server (one at a time, each with 2 slots of `--n-ctx` tokens): a warm-up chat;
`--repeat` short chats alone (time to the first streamed delta that carries text or a call);
then a long request (source files of farmhand itself, about `--long-tokens` tokens, "say
what these files do", streamed) and, once it has been sent, the same short chats one after
another while it is still reading its prompt. A short chat that ends after the long one's
first token is not counted (it no longer ran beside a prompt being read).

Run: .venv/bin/python bench/long_prompt_ttft.py [--long-tokens 12000] [--repeat 3]
     [--n-ctx 14336] [--skip-llama-server] [--model-path GGUF]

Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from openai import AsyncOpenAI

from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from served import farmhand_serving, llama_server_serving

SOURCES = Path(__file__).resolve().parent.parent / "src" / "farmhand"
CHARS_PER_TOKEN = 3.2  # Python source in Qwen's tokenizer, near enough to size the prompt
SYSTEM = "You are a helpful assistant. Use the tools when a question needs them."
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}},
            "required": ["city"],
        },
    },
}
QUESTIONS = [
    "What is the weather like in Lisbon right now?",
    "Is it raining in Vancouver?",
    "How warm is it in Nairobi today?",
    "What's the weather in Oslo?",
    "Is it sunny in Lima?",
    "Will I need a coat in Warsaw right now?",
]


def long_text(tokens: int) -> str:
    """Source files of farmhand, whole, until about `tokens` tokens."""
    wanted = int(tokens * CHARS_PER_TOKEN)
    parts: list[str] = []
    size = 0
    for path in sorted(SOURCES.rglob("*.py")):
        text = f"# file: {path.relative_to(SOURCES)}\n{path.read_text()}\n"
        parts.append(text[: wanted - size])
        size += len(parts[-1])
        if size >= wanted:
            break
    return "".join(parts)


async def first_token_seconds(client: AsyncOpenAI, question: str) -> tuple[float, float]:
    """(seconds to the first delta with text or a call, seconds to the end)."""
    started = time.perf_counter()
    first = None
    stream = await client.chat.completions.create(
        model="bench",
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        tools=[WEATHER],  # type: ignore[list-item]
        temperature=0,
        max_tokens=32,
        stream=True,
    )
    async for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if first is None and delta is not None and (delta.content or delta.tool_calls):
            first = time.perf_counter() - started
    ended = time.perf_counter() - started
    return (ended if first is None else first), ended


@dataclass
class Result:
    server: str
    alone: list[float] = field(default_factory=list)
    beside: list[float] = field(default_factory=list)
    long_prompt_tokens: int = 0
    long_first_token: float = 0.0
    dropped: int = 0  # short chats that ended after the long one's first token


async def measure(server: str, port: int, args: argparse.Namespace) -> Result:
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=3600)
    result = Result(server)
    await first_token_seconds(client, "Hello")  # warm: loaded, the head cached
    for index in range(args.repeat):
        result.alone.append((await first_token_seconds(client, QUESTIONS[index]))[0])
        print(f"  {server}: alone {result.alone[-1]:.2f} s", flush=True)

    long_started = time.perf_counter()
    long_first: list[float] = []

    async def long_request() -> None:
        stream = await client.chat.completions.create(
            model="bench",
            messages=[
                {"role": "user", "content": long_text(args.long_tokens)},
                {"role": "user", "content": "Say in one sentence what these files do."},
            ],
            temperature=0,
            max_tokens=8,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content and not long_first:
                long_first.append(time.perf_counter() - long_started)
            if chunk.usage is not None:
                result.long_prompt_tokens = chunk.usage.prompt_tokens

    task = asyncio.create_task(long_request())
    await asyncio.sleep(args.head_start)  # the long prompt is being read
    for index in range(args.repeat):
        started = time.perf_counter() - long_started
        first, ended = await first_token_seconds(client, QUESTIONS[args.repeat + index])
        if long_first and long_first[0] < started + ended:
            result.dropped += 1
            print(f"  {server}: beside {first:.2f} s (the long prompt was already read)")
            continue
        result.beside.append(first)
        print(f"  {server}: beside the long prompt {first:.2f} s", flush=True)
    await task
    result.long_first_token = long_first[0] if long_first else float("nan")
    await client.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long-tokens", type=int, default=12_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=14_336, help="per slot")
    parser.add_argument("--n-parallel", type=int, default=2, help="farmhand's and -np")
    parser.add_argument("--head-start", type=float, default=3.0, help="s before the 2nd client")
    parser.add_argument("--model-path", type=Path, default=None)
    parser.add_argument("--skip-llama-server", action="store_true")
    args = parser.parse_args()
    gguf = args.model_path or ensure_model(DEFAULT_MODEL)
    results = []
    with tempfile.TemporaryDirectory(prefix="farmhand-bench-") as temp:
        work = Path(temp)
        serving = dict(n_ctx=args.n_ctx, n_parallel=args.n_parallel)
        with farmhand_serving(gguf, work, **serving) as port:
            results.append(asyncio.run(measure("farmhand", port, args)))
        if not args.skip_llama_server:
            with llama_server_serving(gguf, work, **serving) as port:
                results.append(asyncio.run(measure("llama-server", port, args)))
    header = ["server", "long prompt", "its first token", "2nd client alone (p50)",
              "beside it (p50)", "ratio", "counted"]  # fmt: skip
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        alone = statistics.median(r.alone)
        beside = statistics.median(r.beside) if r.beside else float("nan")
        print(
            f"| {r.server} | {r.long_prompt_tokens} tokens | {r.long_first_token:.1f} s"
            f" | {alone:.2f} s | {beside:.2f} s | {beside / alone:.2f}x"
            f" | {len(r.beside)}/{len(r.beside) + r.dropped} |"
        )


if __name__ == "__main__":
    main()
