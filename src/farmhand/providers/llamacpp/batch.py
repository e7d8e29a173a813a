"""Continuous batching: several sequences of one llama context stepped by one llama_decode.

The context is made with `n_parallel` sequences and one KV buffer they share (llama.cpp's
unified KV cache, `n_ctx` cells per sequence); each sequence lives in a slot that remembers
the tokens its KV holds. A new sequence takes the free slot whose tokens share the longest
prefix with its prompt and keeps that prefix (a follow-up turn of the same chat, or another
chat with the same system prompt and tools, starts where the last one stopped); when a
busy slot shares a longer head, its KV cells are shared with `llama_memory_seq_cp` (cells of
a unified cache take several sequence ids, nothing is computed or copied).

`step` builds one batch from every sequence that asked for a token: one token each for the
sequences that are generating, and a chunk of the prompt for each that is still reading
its prompt (with nobody generating, the shortest prompts first, at most `prompt_chunk`
tokens a step so that a newcomer waits little for the step in flight; while others
generate, a short prompt joins at once and a long one pauses, reading a `prompt_chunk` only
after the streams had `READ_PAUSE` seconds to themselves, so a question that arrives beside
a 12k-token prompt is answered at about its own pace), decodes it once, and samples each
sequence whose logits are ready with its own sampler (its own grammar, call gate steer and
seed: `sampling.build_sampler`). A step that only reads long prompts is abandoned when a new
request waits for a slot (`yield_to`, through llama.cpp's abort callback): the newcomer
need not wait seconds for a chunk of someone else's prompt, and the chunk is read again.

Blocking, not thread-safe: only the model's engine thread calls it (`engine.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farmhand.errors import ProviderError
from farmhand.providers.llamacpp.prefix_cache import (
    MIN_TOKENS,
    Outcome,
    PrefixCache,
    head_length,
    load_sequence,
    save_sequence,
)
from farmhand.providers.llamacpp.sampling import Processed, Sampling, build_sampler

# Prompt tokens a step reads: a question that arrives meanwhile waits for the step in
# flight, and on a 2-core CPU llama.cpp reads 128-token steps as fast as 512-token ones
# (46.5 tok/s vs 47.8 and 43.7, the default GGUF, alternating in one run).
PROMPT_CHUNK = 128
# Seconds the streams get to themselves before a long prompt reads its next chunk beside
# them (a short tool call, about 20 tokens, finishes inside it).
READ_PAUSE = 4.0
MIN_SHARED = 16  # a head shorter than this is cheaper to compute than to share
DECODE_ABORTED = 2  # llama_decode's code when the abort callback stopped it

log = logging.getLogger(__name__)


@dataclass
class Slot:
    seq_id: int
    held: list[int] = field(default_factory=list)  # the tokens its KV cells hold, in order
    busy: bool = False
    last_used: int = 0


@dataclass(eq=False)
class Generation:
    """One request's generation in a slot: the tokens still to evaluate, what it sampled."""

    slot: Slot
    sampler: Any
    pending: list[int]
    sampled: list[int] = field(default_factory=list)
    closed: bool = False
    prompt: Sequence[int] = ()
    order: int = 0  # when it was opened: a fresh one may wait for an older one's head
    fresh: bool = True  # nothing of its own prompt evaluated yet
    read_at: float = field(default_factory=time.monotonic)  # its last chunk of prompt

    @property
    def reading_prompt(self) -> bool:
        return len(self.pending) > 1 or not self.sampled


def batch_share(
    pending: int,
    *,
    reading_prompt: bool,
    room: int,
    prompt_chunk: int,
    streaming: bool,
    first: bool,
    paused: float = 0.0,
    read_pause: float = READ_PAUSE,
) -> int:
    """How many of a sequence's `pending` tokens go into this step's batch (`room` left).

    A generating sequence gives its one token. While any sequence streams, a prompt that
    fits in a chunk joins at once; a longer one reads `prompt_chunk` tokens only once it
    has `paused` for `read_pause` seconds, so the streams run at nearly their own pace and
    the long prompt still moves. With none streaming, the shortest prompt (`first`: prompts
    come shortest first) fills the batch and a longer one rides along only if it finishes
    in the room left, so a short question beside a 12k-token prompt gets its first token
    about as soon as it would alone."""
    if not reading_prompt:
        return min(pending, room)
    if streaming:
        if pending <= prompt_chunk or paused >= read_pause:
            return min(pending, prompt_chunk, room)
        return 0
    return min(pending, room) if first or pending <= room else 0


def batched_context(llama: Any, n_parallel: int) -> Any:
    """Give `llama` a context of `n_parallel` sequences sharing one KV buffer (n_ctx cells
    each), in place of the one llama-cpp-python made."""
    import llama_cpp
    from llama_cpp import _internals

    internals: Any = _internals  # untyped
    params = llama.context_params
    params.n_seq_max = n_parallel + 1  # the last one is `scratch`: heads to and from disk
    params.kv_unified = True
    params.n_ctx = int(llama.n_ctx()) * n_parallel
    llama._ctx.close()
    llama._ctx = internals.LlamaContext(model=llama._model, params=params, verbose=False)
    llama._stack.callback(llama._ctx.close)
    return llama_cpp.llama_get_memory(llama._ctx.ctx)


class BatchedContext:
    """The slots of one context and the step that decodes them together."""

    def __init__(
        self,
        llama: Any,
        n_parallel: int,
        *,
        prompt_chunk: int = PROMPT_CHUNK,
    ) -> None:
        import llama_cpp

        self.llama = llama
        self.n_parallel = n_parallel
        self.n_ctx = int(llama.n_ctx())  # per sequence
        self.memory = batched_context(llama, n_parallel)
        self.n_batch = int(llama.n_batch)
        self.prompt_chunk = min(prompt_chunk, self.n_batch)
        self.slots = [Slot(i) for i in range(n_parallel)]
        self.scratch = n_parallel  # a sequence no slot uses: heads pass through it to disk
        self.unsaved: dict[Path, list[int]] = {}  # heads no file holds yet, saved on close
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._clock = 0
        self.processed: Processed | None = None  # the provider's count of evaluated tokens
        self.generations: list[Generation] = []  # open, oldest first
        # Set by the engine: whether a request waits for a slot. Checked by llama.cpp
        # between the graph's nodes, only during steps that read long prompts alone.
        self.yield_to: Callable[[], bool] | None = None
        self._abort_check = llama_cpp.ggml_abort_callback(lambda _data: self._should_yield())
        self._no_abort_check = llama_cpp.ggml_abort_callback(0)
        self.abandoned_steps = 0
        llama._stack.callback(self._free_batch)

    def open(
        self, prompt: Sequence[int], sampling: Sampling, processed: Processed | None = None
    ) -> Generation:
        """A sequence for `prompt` in a free slot, keeping the longest prefix any slot holds."""
        free = [s for s in self.slots if not s.busy]
        if not free:
            raise ProviderError("no free sequence slot (the engine admits at most n_parallel)")
        sampled: list[int] = []
        sampler = build_sampler(self.llama, sampling, sampled)  # may fail: nothing taken yet
        # Keep what slots hold for others: a prefix too short to share is no reason to
        # take a slot over the least recently used one.
        slot = max(free, key=lambda s: (self._worth_keeping(s, prompt), -s.last_used))
        same = min(head_length(slot.held, prompt), len(prompt) - 1)
        donor = max(self.slots, key=lambda s: head_length(s.held, prompt))
        shared = min(head_length(donor.held, prompt), len(prompt) - 1)
        if donor is not slot and shared >= same + MIN_SHARED:
            self._remove(slot, 0)
            self._copy(donor, slot, shared)
            same = shared
        else:
            self._remove(slot, same)
        slot.busy = True
        self._clock += 1
        slot.last_used = self._clock
        sequence = Generation(slot, sampler, list(prompt[same:]), sampled, prompt=prompt)
        sequence.order = self._clock
        self.generations.append(sequence)
        if processed is not None:
            processed.prompt_tokens += len(sequence.pending)
            self.processed = processed
        return sequence

    @staticmethod
    def _worth_keeping(slot: Slot, prompt: Sequence[int]) -> int:
        shared = head_length(slot.held, prompt)
        return shared if shared >= MIN_SHARED else 0

    def close(self, sequence: Generation) -> None:
        """Free the sequence's sampler and slot; its KV stays for the next prompt like it."""
        if sequence.closed:
            return
        sequence.closed = True
        self.generations.remove(sequence)
        sequence.sampler.close()
        sequence.slot.busy = False
        for path, head in list(self.unsaved.items()):
            if head_length(sequence.slot.held, head) >= len(head):
                del self.unsaved[path]
                self._save_head(sequence.slot, head, path)

    def _save_head(self, holder: Slot, head: Sequence[int], path: Path) -> bool:
        """Write the first len(head) cells of `holder` to `path` (through `scratch`, which
        then holds exactly the head)."""
        import llama_cpp

        llama_cpp.llama_memory_seq_cp(self.memory, holder.seq_id, self.scratch, 0, len(head))
        try:
            return save_sequence(self.llama._ctx.ctx, path, self.scratch, head)
        finally:
            self._drop_scratch()

    def _drop_scratch(self) -> None:
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self.memory, self.scratch, 0, -1)

    def seed(self, head: Sequence[int], cache: PrefixCache) -> Outcome:
        """Before a turn opens: have a free slot hold `head` (the system prompt and tools),
        restored from the on-disk prefix cache when no slot holds it yet, so the first
        request after a restart computes only its question. A head no file has is saved
        once a sequence has computed it (`close`)."""
        if len(head) < MIN_TOKENS:
            return "skipped"
        path = cache.path_for(head)
        holder = max(self.slots, key=lambda s: head_length(s.held, head))
        if head_length(holder.held, head) >= len(head):
            if path.exists():
                return "held"
            return "saved" if self._save_head(holder, head, path) else "skipped"
        free = [s for s in self.slots if not s.busy]
        if free and path.exists():
            slot = min(free, key=lambda s: s.last_used)
            self._remove(slot, 0)
            if load_sequence(self.llama._ctx.ctx, path, self.scratch, head):
                self._copy(Slot(self.scratch, list(head)), slot, len(head))
                self._drop_scratch()
                return "restored"
        self.unsaved[path] = list(head)
        return "saved"

    def forget(self) -> None:
        """Empty every free slot (a benchmark's fresh start: no prompt head kept)."""
        for slot in self.slots:
            if not slot.busy:
                self._remove(slot, 0)

    def step(self, sequences: Sequence[Generation]) -> list[tuple[Generation, int]]:
        """One llama_decode over every sequence given; the tokens sampled for those whose
        prompt is read (the others read a chunk of it and come again)."""

        batch = self.batch
        batch.n_tokens = 0
        generating = [s for s in sequences if not s.reading_prompt]
        reading = [s for s in sequences if s.reading_prompt and not self._waits(s)]
        reading.sort(key=lambda s: len(s.pending))  # the shortest prompt first
        ready: list[tuple[Generation, int]] = []
        decoded: list[Generation] = []
        # With nobody generating, a step reads at most a chunk of prompt.
        room = self.n_batch if generating else self.prompt_chunk
        now = time.monotonic()
        taken: list[tuple[Generation, int, list[int]]] = []  # what to undo if abandoned
        only_long_prompts = not generating
        for sequence in [*generating, *reading]:
            take = batch_share(
                len(sequence.pending),
                reading_prompt=sequence.reading_prompt,
                room=room,
                prompt_chunk=self.prompt_chunk,
                streaming=bool(generating),
                first=not decoded,
                paused=now - sequence.read_at,
            )
            if take <= 0:
                continue
            start = len(sequence.slot.held)
            if start + take > self.n_ctx:
                raise ProviderError(f"a sequence outgrew its context of {self.n_ctx} tokens")
            for offset, token in enumerate(sequence.pending[:take]):
                index = batch.n_tokens
                batch.token[index] = token
                batch.pos[index] = start + offset
                batch.n_seq_id[index] = 1
                batch.seq_id[index][0] = sequence.slot.seq_id
                batch.logits[index] = 0
                batch.n_tokens += 1
            only_long_prompts &= len(sequence.pending) > self.prompt_chunk
            taken.append((sequence, start, sequence.pending[:take]))
            sequence.slot.held.extend(sequence.pending[:take])
            del sequence.pending[:take]
            decoded.append(sequence)
            room -= take
            if not sequence.pending:
                batch.logits[batch.n_tokens - 1] = 1
                ready.append((sequence, batch.n_tokens - 1))
        if batch.n_tokens == 0:
            return []
        code = self._decode(batch, abortable=only_long_prompts and self.yield_to is not None)
        if code == DECODE_ABORTED:
            self._abandon(taken)
            return []
        if code != 0:
            for sequence in decoded:  # their KV cannot be trusted: their turns fail
                self._remove(sequence.slot, 0)
            raise ProviderError(f"llama_decode failed ({code}) on a batch of {batch.n_tokens}")
        done = time.monotonic()  # a long prompt's pause counts from the end of its chunk
        for sequence in decoded:
            sequence.read_at = done
        sampled = []
        for sequence, index in ready:
            token = int(sequence.sampler.sample(self.llama._ctx, index))
            sequence.sampled.append(token)
            sequence.pending = [token]
            sampled.append((sequence, token))
        return sampled

    def _decode(self, batch: Any, *, abortable: bool) -> int:
        import llama_cpp

        ctx = self.llama._ctx.ctx
        if not abortable:
            return int(llama_cpp.llama_decode(ctx, batch))
        llama_cpp.llama_set_abort_callback(ctx, self._abort_check, None)
        try:
            return int(llama_cpp.llama_decode(ctx, batch))
        finally:
            llama_cpp.llama_set_abort_callback(ctx, self._no_abort_check, None)

    def _should_yield(self) -> bool:
        try:
            return self.yield_to is not None and self.yield_to()
        except Exception:  # raised into C it would be printed and read as False anyway
            return False

    def _abandon(self, taken: list[tuple[Generation, int, list[int]]]) -> None:
        """Undo a step llama.cpp stopped: the chunks go back to their prompts (llama.cpp
        dropped the cells it had not finished; those it had are dropped here)."""
        import llama_cpp

        self.abandoned_steps += 1
        done = time.monotonic()
        for sequence, start, chunk in taken:
            llama_cpp.llama_memory_seq_rm(self.memory, sequence.slot.seq_id, start, -1)
            del sequence.slot.held[start:]
            sequence.pending[:0] = chunk
            sequence.read_at = done
        log.debug("a step reading %d prompts gave way to a waiting request", len(taken))

    def _waits(self, fresh: Generation) -> bool:
        """Whether `fresh` waits this step for an older generation that is computing the
        head they share (then takes it from that one's slot, computed once); False when it
        has its head, or when none is computing a longer one."""
        if not fresh.fresh:
            return False
        fresh.fresh = False
        have = len(fresh.slot.held)
        for donor in self.generations:
            if donor is fresh or donor.order > fresh.order:
                continue
            shared = min(head_length(donor.prompt, fresh.prompt), len(fresh.prompt) - 1)
            if shared < have + MIN_SHARED:
                continue
            if len(donor.slot.held) < shared:
                fresh.fresh = True  # not computed yet: ask again next step
                return True
            self._remove(fresh.slot, 0)
            self._copy(donor.slot, fresh.slot, shared)
            skipped = shared - have
            fresh.pending = list(fresh.prompt[shared:])
            if self.processed is not None:
                self.processed.prompt_tokens -= skipped
            return False
        return False

    def _remove(self, slot: Slot, keep: int) -> None:
        import llama_cpp

        if keep >= len(slot.held):
            return
        if not llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, keep, -1):
            llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, 0, -1)
            keep = 0
        del slot.held[keep:]

    def _copy(self, source: Slot, target: Slot, count: int) -> None:
        import llama_cpp

        llama_cpp.llama_memory_seq_cp(self.memory, source.seq_id, target.seq_id, 0, count)
        target.held = source.held[:count]

    def _free_batch(self) -> None:
        import llama_cpp

        if self.batch is not None:
            llama_cpp.llama_batch_free(self.batch)
            self.batch = None
