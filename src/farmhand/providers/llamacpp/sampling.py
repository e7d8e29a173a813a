"""farmhand's own sampling loop over llama-cpp-python's low-level API.

`Llama.generate` takes a grammar that constrains every token from the first, which costs
free text half its speed (each step checks the whole vocabulary against the grammar). A
lazy grammar (llama.cpp's `llama_sampler_init_grammar_lazy_patterns`) is inactive until a
trigger, such as the `<tool_call>` token, is sampled, and from there admits only valid
calls; `Llama.generate` cannot take one, hence this loop. It does what generate does for the
settings farmhand uses (same sampler chain: grammar, then greedy at temperature 0, else
top-k 40, typical 1.0, top-p 0.95, min-p 0.05, temperature, seeded dist; repeat penalty off),
and reuses the KV cache for the prompt prefix the context already holds, as generate does.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

TOP_K = 40
TOP_P = 0.95
MIN_P = 0.05
TYPICAL_P = 1.0


@dataclass(frozen=True)
class LazyTrigger:
    """When a lazy grammar wakes up: a regex over the text so far, matched whole, whose
    first group starts the constrained part; or one of these tokens."""

    patterns: tuple[str, ...] = ()
    tokens: tuple[int, ...] = ()


Steer = Callable[[Sequence[int], npt.NDArray[np.float32]], None]
"""Called before each token is sampled with the tokens sampled so far and the next token's
logits, which it may change in place (e.g. ban a token); see `call_gate.py`. It runs after
the grammar (the tokens the grammar rules out are already -inf), and bans that would leave
no token to sample are undone: a steer can narrow what the grammar admits, never empty it
(llama.cpp aborts the process on a token its grammar cannot accept)."""


@dataclass(frozen=True)
class Sampling:
    temperature: float
    seed: int | None = None
    grammar: str | None = None  # GBNF, root rule `root`
    lazy: LazyTrigger | None = None  # with a grammar: constrain only from the trigger on
    steer: Steer | None = None
    top_k: int = TOP_K
    top_p: float = TOP_P


@dataclass
class Processed:
    """Prompt tokens llama.cpp actually evaluated (not restored or reused), summed."""

    prompt_tokens: int = 0


def reuse_prefix(llama: Any, tokens: Sequence[int]) -> list[int]:
    """Keep the longest prefix of `tokens` the context already holds; return the rest to
    evaluate (at least one token, so that there are fresh logits to sample from)."""
    held = llama.n_tokens
    same = 0
    cached = llama.input_ids
    limit = min(held, len(tokens))
    while same < limit and cached[same] == tokens[same]:
        same += 1
    if same == len(tokens):
        same -= 1
    if same > 0 and llama._ctx.kv_cache_seq_rm(-1, same, -1):
        llama.n_tokens = same
    else:
        llama.reset()
        same = 0
    return list(tokens[same:])


READING = -1
"""Yielded by `sample_tokens` with a `chunk` for each chunk of the prompt it evaluated."""


def sample_tokens(
    llama: Any,
    prompt: Sequence[int],
    sampling: Sampling,
    processed: Processed | None = None,
    chunk: int | None = None,
) -> Generator[int, None, None]:
    """Evaluate `prompt` (reusing what the KV cache holds) and yield sampled tokens until
    the caller stops asking. With `chunk`, a long prompt is evaluated `chunk` tokens per
    step, yielding READING after each, so its caller can stop between them. Blocking: run
    it in a worker thread."""
    sampled: list[int] = []
    sampler = build_sampler(llama, sampling, sampled)
    try:
        pending = reuse_prefix(llama, prompt)
        if processed is not None:
            processed.prompt_tokens += len(pending)
        while chunk is not None and len(pending) > chunk:
            llama.eval(pending[:chunk])
            pending = pending[chunk:]
            yield READING
        while True:
            llama.eval(pending)
            token = int(sampler.sample(llama._ctx, -1))
            sampled.append(token)
            yield token
            pending = [token]
    finally:
        sampler.close()


def _steering(steer: Steer, sampled: Sequence[int], n_vocab: int) -> Callable[[Any], None]:
    """`steer` as a step of llama.cpp's sampler chain (after the grammar)."""

    def apply(candidates: Any) -> None:
        array = candidates.contents
        data = np.ctypeslib.as_array(array.data, shape=(array.size,))
        ids, logits = data["id"], data["logit"]
        # The chain starts from every token in id order; the grammar keeps that order.
        in_order = array.size == n_vocab and ids[0] == 0 and ids[-1] == n_vocab - 1
        view = logits if in_order else np.full(n_vocab, -np.inf, dtype=np.float32)
        if not in_order:
            view[ids] = logits
        before = view.copy()
        steer(sampled, view)
        if not np.isfinite(view).any():
            view[:] = before  # the steer would leave nothing the grammar admits
        if not in_order:
            logits[:] = view[ids]

    return apply


def build_sampler(llama: Any, sampling: Sampling, sampled: Sequence[int]) -> Any:
    """The sampler chain `sampling` describes (see the module docstring); `sampled` is the
    list the caller appends each sampled token to (the steer reads it)."""
    from llama_cpp import _internals
    from llama_cpp.llama_grammar import LlamaGrammar

    internals: Any = _internals  # untyped
    sampler = internals.LlamaSampler()
    if sampling.grammar is not None:
        grammar = LlamaGrammar.from_string(sampling.grammar, verbose=False)
        if sampling.lazy is None:
            sampler.add_grammar(llama._model, grammar)
        else:
            sampler.add_grammar_lazy_patterns(
                llama._model, grammar, list(sampling.lazy.patterns), list(sampling.lazy.tokens)
            )
    if sampling.steer is not None:
        sampler.add_custom(_steering(sampling.steer, sampled, int(llama.n_vocab())))
    if sampling.temperature <= 0:
        sampler.add_greedy()
    else:
        seed = sampling.seed if sampling.seed is not None else llama._seed
        sampler.add_top_k(sampling.top_k)
        sampler.add_typical(TYPICAL_P, 1)
        sampler.add_top_p(sampling.top_p, 1)
        sampler.add_min_p(MIN_P, 1)
        sampler.add_temp(sampling.temperature)
        sampler.add_dist(seed)
    return sampler
