"""The main job's wall time: first run, second run (KV prefix restored) and raw llama-cpp-python.

Claim: with the KV prefix cache, the second `make chat` (`farmhand chat --tools examples
"List the files in the examples folder."`) processes only the question and what follows it,
not the system prompt and tool definitions again; target: second run <= 1/3 of the raw
baseline's wall time.

Runs, each a fresh process, in this order:
- farmhand, first run: the KV cache folder is empty (FARMHAND_HOME is a temporary folder
  whose models/ links to the real model cache), so the head is processed and saved;
- farmhand, second run: the same, with the head saved by the first run;
- raw llama-cpp-python, no cache: the same model file and context size, given the messages
  and tools of the first run's model turns (its transcript) through
  `Llama.create_chat_completion` (the GGUF's own chat template), greedy; within the process
  llama-cpp-python reuses its KV cache for a shared prefix between turns, as farmhand does.

A farmhand run does what `farmhand chat` does (config, filesystem MCP server on examples/,
model load, tool loop) in its own process; its wall time is the whole process, Python start
and imports included, and so is raw's. Prompt tokens processed are the prompt tokens llama.cpp
evaluated: not restored from the cache file, not reused from the previous turn.

Run: .venv/bin/python bench/main_job_wall_time.py [--question TEXT] [--seed 0] [--repeat 1]
Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUESTION = "List the files in the examples folder."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=None, help="default: the CLI's")
    parser.add_argument("--repeat", type=int, default=1, help="second runs to time (median)")
    parser.add_argument("--child", choices=["farmhand", "raw"], help=argparse.SUPPRESS)
    parser.add_argument("--transcript", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "farmhand":
        print(json.dumps(_farmhand_job(args.question, args.seed, args.temperature)))
    elif args.child == "raw":
        print(json.dumps(_raw_job(Path(args.transcript), args.seed)))
    else:
        _bench(args)


def _bench(args: argparse.Namespace) -> None:
    from farmhand.models.assemble import ensure_model
    from farmhand.models.catalog import DEFAULT_MODEL

    model = ensure_model(DEFAULT_MODEL, progress=False)
    with tempfile.TemporaryDirectory(prefix="farmhand-bench-") as home:
        (Path(home) / "models").symlink_to(model.parent, target_is_directory=True)
        env = {**os.environ, "FARMHAND_HOME": home}
        common = ["--question", args.question, "--seed", str(args.seed)]
        if args.temperature is not None:
            common += ["--temperature", str(args.temperature)]
        first = _child(["--child", "farmhand", *common], env)
        seconds = [_child(["--child", "farmhand", *common], env) for _ in range(args.repeat)]
        transcript = Path(home) / "transcript.json"
        transcript.write_text(json.dumps(first["transcript"]))
        raw = _child(["--child", "raw", "--transcript", str(transcript), *common], env)
    second = seconds[0]
    second_wall = statistics.median(s["wall"] for s in seconds)
    print(f"main job: farmhand chat --tools examples {args.question!r} (seed {args.seed})")
    print(f"{'run':<28}{'wall s':>8}{'prompt tok':>12}{'processed':>11}{'calls':>7}  head")
    for name, run in (("farmhand, first run", first), ("farmhand, second run", second),
                      ("raw llama-cpp-python", raw)):  # fmt: skip
        wall = second_wall if run is second else run["wall"]
        print(
            f"{name:<28}{wall:>8.2f}{run['prompt_tokens']:>12}{run['processed']:>11}"
            f"{run['calls']:>7}  {run.get('head', '-')}"
        )
    print(f"second/raw wall time: {second_wall / raw['wall']:.2f} (target <= 0.33)")
    print(f"first/raw wall time: {first['wall'] / raw['wall']:.2f}")
    print(f"second/raw prompt tokens processed: {second['processed'] / raw['processed']:.2f}")
    print(f"answer (second run): {second['answer'][:200]!r}")


def _child(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, __file__, *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed:\n{run.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def _farmhand_job(question: str, seed: int, temperature: float | None) -> dict[str, Any]:
    """What `farmhand chat --tools examples QUESTION` does, reporting tokens and transcript."""
    import anyio

    from farmhand.config.loader import find_config, load_config
    from farmhand.prompting.templates import message_to_template_dict
    from farmhand.providers.base import GenerationSettings
    from farmhand.runtime.loop import run_to_completion
    from farmhand.runtime.session import session_for
    from farmhand.toolsets.mcp.known_servers import filesystem_server

    config = load_config(find_config(None))
    session = session_for(
        config, None, folder_servers=[filesystem_server(Path("examples"))], progress=False
    )
    settings = GenerationSettings(temperature=temperature, seed=seed)

    async def job() -> dict[str, Any]:
        async with session:
            tools = await session.router.list_tools()
            result = await run_to_completion(
                session.provider,
                session.opening(question),
                session.router,
                settings,
                max_tool_rounds=session.max_tool_rounds,
            )
            await session.provider.aclose()
        provider: Any = session.provider
        return {
            "prompt_tokens": result.usage.prompt_tokens,
            "processed": provider.processed_prompt_tokens,
            "head": ",".join(provider.prefix_outcomes) or "-",
            "calls": len(result.tool_calls),
            "answer": result.answer,
            "transcript": {
                "tools": [t.to_openai() for t in tools],
                "turns": _turns([message_to_template_dict(m) for m in result.messages]),
            },
        }

    return anyio.run(job)


def _turns(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The prompt of every model turn: the messages before each assistant message."""
    return [messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"]


def _raw_job(transcript_file: Path, seed: int) -> dict[str, Any]:
    """The same model turns through llama-cpp-python alone, without any saved state."""
    from llama_cpp import Llama

    from farmhand.models.assemble import ensure_model
    from farmhand.models.catalog import DEFAULT_MODEL
    from farmhand.providers.llamacpp import DEFAULT_N_CTX, TOOL_TURN_MAX_TOKENS
    from farmhand.providers.prefix_cache import head_length

    transcript = json.loads(transcript_file.read_text())
    threads = os.cpu_count() or 1
    llama = Llama(
        str(ensure_model(DEFAULT_MODEL, progress=False)),
        n_ctx=DEFAULT_N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    prompt_tokens = processed = calls = 0
    answer = ""
    for messages in transcript["turns"]:
        before = list(llama.input_ids[: llama.n_tokens])
        reply: Any = llama.create_chat_completion(
            messages=messages,
            tools=transcript["tools"],
            tool_choice="auto",
            temperature=0.0,
            seed=seed,
            max_tokens=TOOL_TURN_MAX_TOKENS,
        )
        used = reply["usage"]["prompt_tokens"]
        now = list(llama.input_ids[:used])
        reused = head_length(now, before)  # what llama-cpp-python kept of the last turn
        prompt_tokens += used
        processed += used - reused
        message = reply["choices"][0]["message"]
        calls += len(message.get("tool_calls") or [])
        answer = message.get("content") or ""
    return {"prompt_tokens": prompt_tokens, "processed": processed, "calls": calls,
            "answer": answer}  # fmt: skip


if __name__ == "__main__":
    main()
