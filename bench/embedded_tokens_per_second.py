"""Embedded provider vs raw llama-cpp-python: prompt and generation tokens per second.

Claim: farmhand's embedded provider (chat template rendering, running llama.cpp off the event
loop in worker threads, the tool-call parser) adds next to nothing to llama.cpp itself.

Baseline: raw llama-cpp-python on the same loaded `Llama` object (so the same weights, n_ctx and
n_threads), the same rendered prompt tokens, greedy sampling (temperature 0), the same token
budget and the same end-of-generation set: a `Llama.generate` loop that detokenizes each token,
which is the least a caller of llama-cpp-python does to stream text. It runs on a fresh thread,
off the main thread as the provider's generation is: with the OpenMP build of llama.cpp,
compute driven from the main thread did not time like compute driven from another thread (on a
busy 2-core machine it ran 3-5x slower; OMP_WAIT_POLICY=PASSIVE closed the gap), so a
main-thread baseline would measure thread placement, not farmhand.

Method: one untimed warm-up of each, then `--runs` alternating pairs (raw, farmhand, raw, ...).
`Llama.reset()` runs before every run: llama-cpp-python otherwise reuses the KV cache for a
prompt prefix it has already seen, and every run after the first would skip prompt processing.
Prompt tok/s is prompt tokens over the time to the first text; generation tok/s is the tokens
after the first over the time from the first text to the end. Medians are reported.

With `--n-parallel N` the provider takes the batched path `farmhand serve` uses (a context of
N sequences stepped by one decode per token, `llamacpp/batch.py`), on a second copy of the model
so the baseline's context stays as llama-cpp-python makes it.

Run: .venv/bin/python bench/embedded_tokens_per_second.py [--runs 3] [--max-tokens 128]
     [--n-parallel 4]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import codecs
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from farmhand.messages import Finish, Message, TextDelta
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import LlamaCppProvider
from farmhand.providers.llamacpp.load import DEFAULT_N_CTX, load_llama

DEFAULT_PROMPT = """Explain what this Python module does, function by function, then suggest \
three concrete improvements with code.

```python
import json
import os
from pathlib import Path


def load_settings(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    settings = {}
    for key, value in data.items():
        if key.startswith("_"):
            continue
        if isinstance(value, str) and value.startswith("$"):
            value = os.environ.get(value[1:], "")
        settings[key.lower()] = value
    return settings


def merge(base, override):
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = value
    return result


def find_config(start):
    current = Path(start).resolve()
    while True:
        candidate = current / "settings.json"
        if candidate.exists():
            return candidate
        if current.parent == current:
            return None
        current = current.parent
```"""


@dataclass(frozen=True)
class Run:
    prompt_tokens: int
    completion_tokens: int
    first_text: float  # seconds from the call to the first text
    total: float  # seconds from the call to the end
    text: str

    @property
    def prompt_rate(self) -> float:
        return self.prompt_tokens / self.first_text

    @property
    def generation_rate(self) -> float:
        after_first = self.completion_tokens - 1
        span = self.total - self.first_text
        return after_first / span if after_first > 0 and span > 0 else float("nan")


def end_of_generation(llama: Any) -> Callable[[int], bool]:
    """llama.cpp's end-of-generation set (EOS, EOT, <|im_end|>, ...), as the provider uses."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))


def raw_run(llama: Any, prompt: str, max_tokens: int, is_end: Callable[[int], bool]) -> Run:
    """The baseline: tokenize, `generate` greedily, detokenize each token."""
    llama.reset()
    start = time.perf_counter()
    tokens = llama.tokenize(prompt.encode(), add_bos=False, special=True)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pieces: list[str] = []
    first: float | None = None
    count = 0
    for token in llama.generate(tokens, temp=0.0):
        if is_end(token):
            break
        count += 1
        pieces.append(decoder.decode(llama.detokenize([token])))
        if first is None:
            first = time.perf_counter()
        if count >= max_tokens:
            break
    pieces.append(decoder.decode(b"", final=True))
    end = time.perf_counter()
    return Run(len(tokens), count, (first or end) - start, end - start, "".join(pieces))


def raw_run_on_worker(
    llama: Any, prompt: str, max_tokens: int, is_end: Callable[[int], bool]
) -> Run:
    """`raw_run` on a fresh thread, off the main thread like the provider's worker."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(raw_run, llama, prompt, max_tokens, is_end).result()


def farmhand_run(provider: LlamaCppProvider, messages: list[Message], max_tokens: int) -> Run:
    """The provider as the runtime drives it: `stream` with no tools, counting its events."""
    settings = GenerationSettings(temperature=0.0, max_tokens=max_tokens)

    async def go() -> Run:
        provider.llama.reset()
        if provider.batch is not None:  # the batched slots keep heads too: empty them
            async with provider.engine.turn() as turn:
                await turn.call(provider.batch.forget)
        start = time.perf_counter()
        first: float | None = None
        pieces: list[str] = []
        finish: Finish | None = None
        async for event in provider.stream(messages, [], settings):
            if isinstance(event, TextDelta):
                pieces.append(event.text)
                if first is None:
                    first = time.perf_counter()
            elif isinstance(event, Finish):
                finish = event
        end = time.perf_counter()
        if finish is None:
            raise RuntimeError("the provider's stream ended without a Finish event")
        usage = finish.usage
        return Run(
            usage.prompt_tokens,
            usage.completion_tokens,
            (first or end) - start,
            end - start,
            "".join(pieces),
        )

    return anyio.run(go)


def median_of(runs: list[Run], value: Callable[[Run], float]) -> float:
    return statistics.median(value(run) for run in runs)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--model-path",
        help=f"a GGUF file or catalog name (default: {DEFAULT_MODEL}, assembled if needed)",
    )
    parser.add_argument("--max-tokens", type=int, default=128, help="tokens to generate per run")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each (alternating)")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, help="the user message to send")
    parser.add_argument(
        "--n-parallel",
        type=int,
        default=1,
        help="the provider's sequences (>1: the batched path `farmhand serve` takes, on a"
        " model loaded a second time; the raw baseline keeps its own)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.max_tokens < 2:
        parser.error("--runs must be at least 1 and --max-tokens at least 2")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = ensure_model(args.model_path or DEFAULT_MODEL)
    llama = load_llama(Path(path), n_ctx=DEFAULT_N_CTX)
    if not callable(getattr(llama, "reset", None)):
        print("this llama-cpp-python has no Llama.reset(); cannot clear the KV cache between runs")
        return 1
    own = llama if args.n_parallel == 1 else load_llama(Path(path), n_ctx=DEFAULT_N_CTX)
    provider = LlamaCppProvider(own, model_name=path.stem, n_parallel=args.n_parallel)
    messages = [Message.user(args.prompt)]
    prompt = provider.render(messages, [])
    is_end = end_of_generation(llama)

    threads = llama.context_params.n_threads
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"model: {path.name}   threads: {threads} of {os.cpu_count()} cores   load: {load}")
    print(f"max tokens: {args.max_tokens}   runs: {args.runs} each, alternating, after a warm-up")

    raw_run_on_worker(llama, prompt, args.max_tokens, is_end)
    farmhand_run(provider, messages, args.max_tokens)

    raw: list[Run] = []
    farm: list[Run] = []
    for i in range(args.runs):
        for label, runs, run in (
            ("raw", raw, lambda: raw_run_on_worker(llama, prompt, args.max_tokens, is_end)),
            ("farmhand", farm, lambda: farmhand_run(provider, messages, args.max_tokens)),
        ):
            result = run()
            runs.append(result)
            print(
                f"  run {i + 1} {label:<8}  first text {result.first_text:6.3f} s"
                f"  prompt {result.prompt_rate:8.1f} tok/s"
                f"  generation {result.generation_rate:6.1f} tok/s"
                f"  ({result.completion_tokens} tokens)"
            )
            sys.stdout.flush()

    header = (
        f"{'':<22}{'prompt tok':>11}{'gen tok':>9}{'first text s':>14}"
        f"{'prompt tok/s':>14}{'gen tok/s':>11}"
    )
    print()
    print(header)
    for label, runs in (("raw llama-cpp-python", raw), ("farmhand embedded", farm)):
        print(
            f"{label:<22}{runs[0].prompt_tokens:>11}"
            f"{median_of(runs, lambda r: r.completion_tokens):>9.0f}"
            f"{median_of(runs, lambda r: r.first_text):>14.3f}"
            f"{median_of(runs, lambda r: r.prompt_rate):>14.1f}"
            f"{median_of(runs, lambda r: r.generation_rate):>11.1f}"
        )
    print()

    def ratio(value: Callable[[Run], float]) -> float:
        return median_of(farm, value) / median_of(raw, value)

    prompt_ratio = ratio(lambda r: r.prompt_rate)
    gen_ratio = ratio(lambda r: r.generation_rate)
    print(f"ratio farmhand/raw prompt tok/s: {prompt_ratio:.2f}")
    print(f"ratio farmhand/raw generation tok/s: {gen_ratio:.2f}")

    if raw[0].prompt_tokens != farm[0].prompt_tokens:
        print("note: the two sides processed different prompt token counts")
    if {r.completion_tokens for r in raw} != {r.completion_tokens for r in farm}:
        print("note: the two sides generated different token counts")
    if raw[0].text != farm[0].text:
        print("note: the texts differ (the provider's parser may hold back or drop markup)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
