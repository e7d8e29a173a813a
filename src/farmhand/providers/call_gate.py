"""Answer or call: decided from the model's own probabilities, not only its top token.

Small models call a tool for questions no tool fits, call again after a result instead of
answering, and stop after one call when a question asks for several. Greedy decoding takes
the most likely token at every step; the gate looks at how likely a call is at the two
points where a turn's shape is decided, and steers the logits (`llama_sampling.Steer`):

- the first token: the turn may call only if P(call tag) >= `call`, or `after_result` when
  the conversation's last message is a tool result (answer from results unless the model is
  sure it needs more); otherwise the call tag is banned for the whole turn, which then
  answers in text;
- right after a complete call (the close tag): if P(anything but the end of the turn) >=
  `another`, the next call is opened for it (a newline, then the open tag, as the template
  writes parallel calls); a call it repeats is dropped by the provider, which then stops.

The tags are single tokens in the families that use them (Qwen's `<tool_call>` and
`</tool_call>`); for other vocabularies the gate does nothing (`for_vocabulary` gives None).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from farmhand.providers.grammar import CLOSE_TAG, OPEN_TAG
from farmhand.providers.llama_sampling import Steer


@dataclass(frozen=True)
class GateThresholds:
    call: float = 0.5  # 0.5 and below: what greedy decoding does anyway
    after_result: float = 0.5
    another: float = 1.0  # 1.0: never push for another call


@dataclass(frozen=True)
class CallGate:
    """The gate for one vocabulary: its call tags and end-of-turn tokens."""

    open_token: int
    close_token: int
    newline_token: int
    end_tokens: tuple[int, ...]
    thresholds: GateThresholds = GateThresholds()

    @classmethod
    def for_vocabulary(
        cls, llama: Any, is_end: Callable[[int], bool], thresholds: GateThresholds
    ) -> CallGate | None:
        opening = llama.tokenize(OPEN_TAG.encode(), add_bos=False, special=True)
        closing = llama.tokenize(CLOSE_TAG.encode(), add_bos=False, special=True)
        newline = llama.tokenize(b"\n", add_bos=False, special=True)
        if len(opening) != 1 or len(closing) != 1 or len(newline) != 1:
            return None
        ends = tuple(t for t in (llama.token_eos(), *_named_ends(llama)) if t >= 0 and is_end(t))
        unique = tuple(dict.fromkeys(ends))
        return cls(opening[0], closing[0], newline[0], unique, thresholds)

    def steer(self, *, after_result: bool) -> Steer:
        """A steer for one turn (it remembers the turn's first decision)."""
        limit = self.thresholds.after_result if after_result else self.thresholds.call
        banned = False
        forced: list[int] = []  # tokens the gate writes next

        def steer(sampled: Sequence[int], logits: npt.NDArray[np.float32]) -> None:
            nonlocal banned
            if not sampled:
                banned = limit > 0.5 and _probability(logits, [self.open_token]) < limit
            if banned:
                logits[self.open_token] = -np.inf
                return
            closed = bool(sampled) and sampled[-1] == self.close_token
            if closed and self.wants_another(logits):
                forced[:] = [self.newline_token, self.open_token]
            if forced:
                keep = forced.pop(0)
                chosen = logits[keep]
                logits[:] = -np.inf
                logits[keep] = chosen

        return steer

    def wants_another(self, logits: npt.NDArray[np.float32]) -> bool:
        """After a call: whether the turn should go on to another call."""
        another = self.thresholds.another
        return another < 1 and 1 - _probability(logits, self.end_tokens) >= another


def _probability(logits: npt.NDArray[np.float32], tokens: Sequence[int]) -> float:
    shifted = np.exp(logits.astype(np.float64) - float(np.max(logits)))
    return float(shifted[list(tokens)].sum() / shifted.sum())


def _named_ends(llama: Any) -> list[int]:
    """`<|im_end|>` and `<|endoftext|>` where the vocabulary has them as one token."""
    found = []
    for text in (b"<|im_end|>", b"<|endoftext|>", b"<|eot_id|>"):
        tokens = llama.tokenize(text, add_bos=False, special=True)
        if len(tokens) == 1:
            found.append(tokens[0])
    return found
