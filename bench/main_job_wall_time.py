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
  and tools of every model turn of the first run (its transcript) through
  `Llama.create_chat_completion` (the GGUF's own chat template), greedy, each turn cut at
  the number of tokens farmhand's turn wrote; within the process llama-cpp-python reuses its
  KV cache for a prefix shared with the previous turn, as farmhand does.

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

    model = ensure_model(DEFAULT_MODEL)
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
    print(
        f"{'run':<24}{'wall s':>8}{'turns':>6}{'prompt tok':>11}{'processed':>10}"
        f"{'completion':>11}{'calls':>6}  head (per turn)"
    )
    for name, run in (("farmhand, first run", first), ("farmhand, second run", second),
                      ("raw llama-cpp-python", raw)):  # fmt: skip
        wall = second_wall if run is second else run["wall"]
        print(
            f"{name:<24}{wall:>8.2f}{run['turns']:>6}{run['prompt_tokens']:>11}"
            f"{run['processed']:>10}{run['completion_tokens']:>11}{run['calls']:>6}"
            f"  {run.get('head', '-')}"
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
    """What `farmhand chat --tools examples QUESTION` does, recording every model turn."""
    import anyio

    from farmhand.cli.service import command_model
    from farmhand.config.loader import find_config, load_config
    from farmhand.messages import Finish, Message
    from farmhand.prompting.templates import message_to_template_dict
    from farmhand.providers.base import GenerationSettings
    from farmhand.providers.factory import provider_for
    from farmhand.service.chat import ChatRequest, complete_chat, start_chat
    from farmhand.service.loaded_models import unbounded_models
    from farmhand.service.state import ServiceState
    from farmhand.toolsets.mcp.known_servers import filesystem_server

    config = load_config(find_config(None))
    request = ChatRequest(
        model=command_model(config, None),
        messages=[Message.user(question)],
        settings=GenerationSettings(temperature=temperature, seed=seed),
        folder_servers=[filesystem_server(Path("examples"))],
    )
    turns: list[dict[str, Any]] = []
    loaded: list[Any] = []

    class Recording:
        """The provider, noting each turn's messages, tools and completion length (`inner`:
        the service finds the embedded engine through it, as through any wrapper)."""

        def __init__(self, provider: Any) -> None:
            self.inner = provider
            self.name = provider.name

        async def stream(self, messages: Any, tools: Any, turn_settings: Any) -> Any:
            offered = [] if turn_settings.tool_choice == "none" else tools
            turn = {
                "messages": [message_to_template_dict(m) for m in messages],
                "tools": [t.to_openai() for t in offered],
                "completion_tokens": 0,
            }
            turns.append(turn)
            async for event in self.inner.stream(messages, tools, turn_settings):
                if isinstance(event, Finish):
                    turn["completion_tokens"] = event.usage.completion_tokens
                yield event

        async def aclose(self) -> None:
            await self.inner.aclose()

    def recorded(model: Any) -> Any:
        loaded.append(provider_for(model))
        return Recording(loaded[-1])

    async def job() -> dict[str, Any]:
        # As `farmhand chat` runs it (cli/service.py): the model loads while the server
        # starts, then the chat; the service closes both.
        async with ServiceState.open(
            config, provider_factory=recorded, models=unbounded_models()
        ) as state:
            await start_chat(state, request)
            result = (await complete_chat(state, request)).finished
        provider = loaded[0]
        return {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "processed": provider.processed_prompt_tokens,
            "head": ",".join(provider.prefix_outcomes) or "-",
            "turns": len(turns),
            "calls": len(result.tool_calls),
            "answer": result.answer,
            "transcript": turns,
        }

    return anyio.run(job)


def _raw_job(transcript_file: Path, seed: int) -> dict[str, Any]:
    """The same model turns through llama-cpp-python alone, without any saved state."""
    from llama_cpp import Llama

    from farmhand.models.assemble import ensure_model
    from farmhand.models.catalog import DEFAULT_MODEL
    from farmhand.providers.llamacpp.load import DEFAULT_N_CTX
    from farmhand.providers.llamacpp.prefix_cache import head_length

    transcript = json.loads(transcript_file.read_text())
    threads = os.cpu_count() or 1
    llama = Llama(
        str(ensure_model(DEFAULT_MODEL)),
        n_ctx=DEFAULT_N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    prompt_tokens = processed = completion_tokens = 0
    answer = ""
    for turn in transcript:
        before = list(llama.input_ids[: llama.n_tokens])
        reply: Any = llama.create_chat_completion(
            messages=turn["messages"],
            tools=turn["tools"] or None,
            temperature=0.0,
            seed=seed,
            max_tokens=max(1, turn["completion_tokens"]),  # as long as farmhand's turn
        )
        used = reply["usage"]["prompt_tokens"]
        reused = head_length(list(llama.input_ids[:used]), before)  # kept from the last turn
        prompt_tokens += used
        processed += used - reused
        completion_tokens += reply["usage"]["completion_tokens"]
        answer = reply["choices"][0]["message"].get("content") or ""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "processed": processed,
        "turns": len(transcript),
        "calls": "-",
        "answer": answer,
    }


if __name__ == "__main__":
    main()
