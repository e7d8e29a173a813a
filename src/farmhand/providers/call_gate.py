"""Answer or call: decided from the model's own probabilities at the first token.

Small models call a tool for questions no tool fits and call again after a result instead of
answering. Greedy decoding follows the single most likely first token; the gate sums the
probability of every first token that starts a call (the call tag, `{`, `[`, a code fence:
small models write calls as bare or fenced JSON as often as in tags) and decides the turn:

- calling needs P(call) >= `call`, or `after_result` when the last message is a tool result
  (answer from the results unless the model is sure it needs more); then the first token
  is one of the call starts (most likely first);
- otherwise the turn answers: the call starts (except the fence, which also opens code) are
  banned at the first token, and `TurnGate.answering` tells the provider to read the turn
  as text, not calls.

Only the most likely `TOP` first tokens are looked at (the rest carry no weight), so the
gate costs one softmax and a few dozen detokenizations per turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from farmhand.providers.grammar import OPEN_TAG

TOP = 64
CALL_STARTS = (OPEN_TAG, "{", "[", "```")
OPENS_TEXT_TOO = ("```",)  # a fence also opens a code answer: not banned when answering


@dataclass(frozen=True)
class GateThresholds:
    call: float = 0.5
    after_result: float = 0.5


class TurnGate:
    """The gate for one turn: a `llama_sampling.Steer`, and what it decided."""

    def __init__(self, llama: Any, limit: float) -> None:
        self.llama = llama
        self.limit = limit
        self.p_call: float | None = None
        self.answering = False

    def __call__(self, sampled: Sequence[int], logits: npt.NDArray[np.float32]) -> None:
        if sampled:
            return
        shifted = np.exp(logits.astype(np.float64) - float(np.max(logits)))
        probabilities = shifted / shifted.sum()
        top = np.argpartition(-probabilities, TOP)[:TOP]
        starts = {int(t): self._start_of(int(t)) for t in top}
        calls = [t for t, start in starts.items() if start is not None]
        self.p_call = float(probabilities[calls].sum()) if calls else 0.0
        if self.p_call >= self.limit:
            others = np.ones(len(logits), dtype=bool)
            others[calls] = False
            logits[others] = -np.inf
            return
        self.answering = True
        banned = [t for t in calls if starts[t] not in OPENS_TEXT_TOO]
        if banned:
            logits[banned] = -np.inf

    def _start_of(self, token: int) -> str | None:
        piece = self.llama.detokenize([token], special=True).decode("utf-8", "replace")
        stripped = piece.lstrip()
        return next((s for s in CALL_STARTS if stripped.startswith(s)), None)


def turn_gate(llama: Any, thresholds: GateThresholds, *, after_result: bool) -> TurnGate:
    return TurnGate(llama, thresholds.after_result if after_result else thresholds.call)
