"""Constrained decoding: what sampling under the tool-call grammar costs in tokens per second.

Claim: constraining the embedded model's tool calls with a grammar (providers/llamacpp/grammar.py)
keeps generation usable: the ratio constrained/unconstrained generation tok/s is printed for
the two grammars a turn can get.

- free text: a question answered in prose while three tools are offered, under the `auto`
  grammar (text that may not contain `<tool_call>`, then optional calls) of a provider built
  with `constrained=True`. The grammar admits every token the model picks here, so both sides
  write the same text: the difference is the grammar's masking of the vocabulary per token.
- a call: a question the model answers with a call, under the `required` grammar. Left
  alone, the 0.5B model writes this call as fenced JSON (29 tokens); the grammar makes it
  write the `<tool_call>` form (25 tokens): the same call, not the same tokens, so this
  ratio compares JSON-writing speed, not identical work.

Baseline: the same `LlamaCppProvider` machinery on the same loaded `Llama`, the same
rendered prompt and tools, greedy sampling, the same token budget, with no grammar
(tool_choice auto, `constrained=False`).

Method: one untimed warm-up of each side, then `--runs` alternating pairs. The KV cache is
kept between runs: every run repeats the same prompt, so llama.cpp re-evaluates only its last
token and the time measured is generation (plus the grammar's setup, which counts: a turn
pays it). Generation tok/s is completion tokens over the turn's wall time; medians reported.

Run: .venv/bin/python bench/constrained_decoding.py [--runs 3] [--max-tokens 128]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from farmhand.messages import Finish, Message, TextDelta, ToolCallEvent
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import EmbeddedProfile, LlamaCppProvider
from farmhand.providers.llamacpp.grammar import GrammarSpec, build_tool_grammar
from farmhand.providers.llamacpp.load import DEFAULT_N_CTX, load_llama
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import OpenAIToolChoice, tool_choice_from_openai

TOOLS = [
    ToolDefinition(
        "get_weather",
        "Get the current weather for a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolDefinition(
        "add_numbers",
        "Add two integers.",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    ToolDefinition(
        "search_files",
        "Find files whose path matches a glob pattern.",
        {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "max_results": {"type": "integer"}},
            "required": ["pattern", "max_results"],
        },
    ),
]
TEXT_PROMPT = "Explain what a Python list is in two sentences, with a tiny code example."
CALL_PROMPT = "What's the weather in Oslo?"


@dataclass(frozen=True)
class Run:
    completion_tokens: int
    seconds: float
    output: str

    @property
    def rate(self) -> float:
        return self.completion_tokens / self.seconds


def run_turn(
    provider: LlamaCppProvider, prompt: str, choice: OpenAIToolChoice, max_tokens: int
) -> Run:
    settings = GenerationSettings(
        temperature=0.0, max_tokens=max_tokens, tool_choice=tool_choice_from_openai(choice)
    )

    async def go() -> Run:
        start = time.perf_counter()
        pieces: list[str] = []
        finish: Finish | None = None
        async for event in provider.stream([Message.user(prompt)], TOOLS, settings):
            if isinstance(event, TextDelta):
                pieces.append(event.text)
            elif isinstance(event, ToolCallEvent):
                pieces.append(f"{event.call.name}{event.call.arguments_json()}")
            elif isinstance(event, Finish):
                finish = event
        seconds = time.perf_counter() - start
        if finish is None:
            raise RuntimeError("the provider's stream ended without a Finish event")
        return Run(finish.usage.completion_tokens, seconds, "".join(pieces))

    return anyio.run(go)


def compare(
    label: str,
    plain: LlamaCppProvider,
    constrained: LlamaCppProvider,
    prompt: str,
    choice: OpenAIToolChoice,
    args: argparse.Namespace,
) -> float:
    """Alternating runs of both sides; returns the median constrained/plain tok/s ratio."""
    sides: list[tuple[str, LlamaCppProvider, OpenAIToolChoice, list[Run]]] = [
        ("no grammar", plain, "auto", []),
        ("grammar", constrained, choice, []),
    ]
    for _, provider, side_choice, _ in sides:
        run_turn(provider, prompt, side_choice, args.max_tokens)  # warm-up
    for i in range(args.runs):
        for name, provider, side_choice, runs in sides:
            run = run_turn(provider, prompt, side_choice, args.max_tokens)
            runs.append(run)
            print(
                f"  {label} run {i + 1} {name:<10}  {run.completion_tokens:4d} tokens"
                f"  {run.seconds:6.2f} s  {run.rate:6.1f} tok/s"
            )
            sys.stdout.flush()
    plain_runs, grammar_runs = sides[0][3], sides[1][3]
    plain_rate = statistics.median(r.rate for r in plain_runs)
    grammar_rate = statistics.median(r.rate for r in grammar_runs)
    print(f"  {label}: no grammar {plain_rate:.1f} tok/s, grammar {grammar_rate:.1f} tok/s")
    if plain_runs[0].output != grammar_runs[0].output:  # calls compare as name + arguments
        print(f"  note: the outputs differ:\n    {plain_runs[0].output[:120]!r}")
        print(f"    {grammar_runs[0].output[:120]!r}")
    return grammar_rate / plain_rate


def build_cost_ms(tools: list[ToolDefinition], check: Any) -> float:
    start = time.perf_counter()
    grammar = build_tool_grammar(GrammarSpec(tuple(tools), False, True), check)
    if check is not None:
        check(grammar.text)
    return (time.perf_counter() - start) * 1000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--model-path",
        help=f"a GGUF file or catalog name (default: {DEFAULT_MODEL}, assembled if needed)",
    )
    parser.add_argument("--max-tokens", type=int, default=128, help="tokens to generate per run")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each (alternating)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.max_tokens < 2:
        parser.error("--runs must be at least 1 and --max-tokens at least 2")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = ensure_model(args.model_path or DEFAULT_MODEL)
    llama = load_llama(Path(path), n_ctx=DEFAULT_N_CTX)
    plain = LlamaCppProvider(llama, model_name=path.stem)
    constrained = LlamaCppProvider(llama, EmbeddedProfile(constrained=True), model_name=path.stem)

    threads = llama.context_params.n_threads
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"model: {path.name}   threads: {threads} of {os.cpu_count()} cores   load: {load}")
    print(f"max tokens: {args.max_tokens}   runs: {args.runs} each, alternating, after a warm-up")
    from farmhand.providers.llamacpp.grammar import llama_grammar_check

    print(f"building the 3-tool grammar: {build_cost_ms(TOOLS, llama_grammar_check(llama)):.1f} ms")

    text_ratio = compare("free text", plain, constrained, TEXT_PROMPT, "auto", args)
    call_ratio = compare("a call", plain, constrained, CALL_PROMPT, "required", args)
    print()
    print(f"ratio constrained/unconstrained generation tok/s, free text: {text_ratio:.2f}")
    print(f"ratio constrained/unconstrained generation tok/s, a call: {call_ratio:.2f}")
    llama.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
