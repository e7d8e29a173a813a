"""Answer or call: decided from the model's own probabilities at the first token.

Small models call a tool for questions no tool fits and call again after a result instead of
answering. Greedy decoding follows the single most likely first token; the gate sums the
probability of every first token that starts a call (the call tag, `{`, `[`, a code fence:
small models write calls as bare or fenced JSON as often as in tags) and decides the turn:

- calling needs P(call) >= `call`, or `after_result` when the last message is a tool result
  (answer from the results unless the model is sure it needs more); then the first token
  is one of the call starts (most likely first); with `first_question_only`, `call` is
  used only for a conversation's first question and later ones are left to the model;
- otherwise the turn answers: the call starts (except the fence, which also opens code,
  unless `answer_fence` is off) are banned at the first token, and `TurnGate.answering`
  tells the provider to read the turn as text, not calls (the end of the turn is banned
  there too: an answer is never empty);
- after a complete call (the provider says so with `call_written`), if P(anything but the
  end of the turn) >= `another` where the call was read, the end is banned for
  `push_tokens` tokens once the call's wrapper (its code fence or call tag) is closed, so a
  model that was about to stop after one call of several goes on (a call it repeats, or
  one that brings nothing the user wrote, is dropped by the provider, which then stops the
  turn);
- with `go_on`, the tokens that open a new message are banned with the end in the push
  (a model may spend the push on `<|im_start|>` and end), and when the model wrote a
  blank there it goes on only if P(call start) >= `go_on`, else the turn ends;
- when the provider knows another call is wanted (`call_written(more_wanted=True)`: the
  question lists values the calls have not used yet, `siblings.py`), the next word after
  the wrapper must start a call: everything but whitespace and the call starts is banned
  until one is written (for at most `FORCE_TOKENS` tokens, and only if a call start is
  among the likely tokens at all).

Nothing is banned inside the wrapper: the parser reads a call at its last brace, before the
closing fence (which is no new call's start) or the close tag (which the grammar needs).

Only the most likely `TOP` first tokens are looked at (the rest carry no weight), so the
gate costs one softmax and a few dozen detokenizations per turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from farmhand.providers.llamacpp.grammar import CLOSE_TAG, OPEN_TAG

TOP = 64
FORCE_TOKENS = 4  # whitespace the model may write before the call it is pushed into
FENCE = "```"
CALL_STARTS = (OPEN_TAG, "{", "[", FENCE)
OPENS_TEXT_TOO = (FENCE,)  # a fence also opens a code answer: not banned when answering


@dataclass(frozen=True)
class GateThresholds:
    # None: the first token is left to the model (only `another` applies).
    call: float | None = 0.5
    after_result: float | None = 0.5
    # After a complete call: go on to another if P(not ending the turn) >= this (1: never).
    another: float = 1.0
    push_tokens: int = 1  # how many tokens after the call's wrapper the end stays banned
    # `call` only for a conversation's first question; later ones are left to the model
    # (measured: in a conversation the model's P(call) runs lower, and a gate cost it calls).
    first_question_only: bool = False
    # After the push: the tokens that open a new message (`<|im_start|>`) are banned with
    # the end (a model spends the push on one and ends), and when the model wrote a blank
    # in the push, it goes on only if P(call start) >= this, else the turn ends. None: off.
    go_on: float | None = None


@dataclass
class _Push:
    pending: bool = False  # a call was just written: weigh ending against going on
    left: int = 0  # tokens the end of the turn stays banned for
    force: bool = False  # another call is wanted: the next word must start one
    forced_at: int | None = None  # how many tokens were sampled when forcing began
    closing: bool = False  # a call was read: wait for its tag or fence to close first
    deciding: bool = False  # the push just ended: go on (`go_on`) or end the turn here


class TurnGate:
    """The gate for one turn: a `sampling.Steer`, and what it decided."""

    def __init__(
        self,
        llama: Any,
        limit: float | None,
        thresholds: GateThresholds = GateThresholds(),
        *,
        answer_fence: bool = True,
        grammar_tag: int | None = None,
        retag: bool = False,
    ) -> None:
        self.llama = llama
        self.limit = limit
        # Answering, may the first token open a code fence? Not when the model is known to
        # want a call: it would write the call as a fenced block of text.
        self.answer_fence = answer_fence
        self.thresholds = thresholds
        # The call tag's token, when calls are written in tags under the tool grammar
        # (lazy: it wakes at the tag). Pushing on after a call then waits for the call's
        # close tag (the parser reads the call before the grammar closes it), and after it
        # the grammar admits only the end or another call.
        self.grammar_tag = grammar_tag
        # With a grammar tag: a first token that starts a call another way (a fence, a
        # bare `{`) is written as the tag instead, with their summed weight, so that the
        # call is written under the grammar.
        self.retag = retag
        self.p_call: float | None = None
        self.answering = False
        self.end_tokens: list[int] = []  # set by the provider, for pushing on after a call
        self.opener_tokens: list[int] = []  # and the tokens that open a new message
        self._push = _Push()

    @property
    def pushing(self) -> bool:
        """Another call is wanted and the model has not started it yet."""
        return self._push.force

    def call_written(self, *, more_wanted: bool = False) -> None:
        """The provider read a complete call: before the next token, weigh another, or
        (`more_wanted`) push the model into writing one."""
        self._push.pending = self.thresholds.another < 1 and bool(self.end_tokens)
        self._push.force, self._push.forced_at = more_wanted, None
        self._push.closing = True

    def __call__(self, sampled: Sequence[int], logits: npt.NDArray[np.float32]) -> None:
        if not sampled and self.retag and self.grammar_tag is not None:
            self._retag(logits, self.grammar_tag)
        if sampled or self.limit is None:
            push = self._push
            if push.pending:  # weighed where the call was read, before its wrapper closes
                push.pending = False
                if 1 - _probability(logits, self.end_tokens) >= self.thresholds.another:
                    push.left = self.thresholds.push_tokens
            if push.closing:
                push.closing = _still_open(self._text(sampled))
                if push.closing:
                    return
            if push.deciding:
                push.deciding = False
                self._go_on_or_end(sampled, logits)
            elif not self._forced(sampled, logits) and push.left > 0:
                push.left -= 1
                logits[self.end_tokens] = -np.inf
                if self.thresholds.go_on is not None:
                    logits[self.opener_tokens] = -np.inf
                    push.deciding = push.left == 0
            return
        probabilities = _softmax(logits)
        starts = {t: self._start_of(t) for t in _top(logits)}
        calls = [t for t, start in starts.items() if start is not None]
        self.p_call = float(probabilities[calls].sum()) if calls else 0.0
        if self.p_call >= self.limit:
            others = np.ones(len(logits), dtype=bool)
            others[calls] = False
            logits[others] = -np.inf
            return
        self.answering = True
        banned = [t for t in calls if not (self.answer_fence and starts[t] in OPENS_TEXT_TOO)]
        # Nor may the answer be empty: a model that wanted to call ends at once otherwise.
        banned += self.end_tokens
        if banned:
            logits[banned] = -np.inf

    def _go_on_or_end(self, sampled: Sequence[int], logits: npt.NDArray[np.float32]) -> None:
        """Right after the push: a blank written there leads into another call only if the
        model now likely starts one; otherwise the turn ends here."""
        limit = self.thresholds.go_on
        if limit is None or not sampled or not _blank(self._piece(sampled[-1])):
            return
        likely = self._starts_among(_top(logits))
        if float(_softmax(logits)[likely].sum()) < limit:
            ending = np.zeros(len(logits), dtype=bool)
            ending[self.end_tokens] = True
            logits[~ending] = -np.inf

    def _retag(self, logits: npt.NDArray[np.float32], tag: int) -> None:
        others = [t for t in _top(logits) if self._start_of(t) not in (None, OPEN_TAG)]
        if not others:
            return
        chosen = [*others, tag]
        peak = float(np.max(logits[chosen]))
        mass = peak + float(np.log(np.exp(logits[chosen].astype(np.float64) - peak).sum()))
        logits[others] = -np.inf
        logits[tag] = mass

    def _text(self, sampled: Sequence[int]) -> str:
        text: bytes = self.llama.detokenize(list(sampled), special=True)
        return text.decode("utf-8", "replace")

    def _forced(self, sampled: Sequence[int], logits: npt.NDArray[np.float32]) -> bool:
        """While another call is wanted and not yet started: only whitespace and the call
        starts may be sampled. False once a call started, or forcing gave up."""
        push = self._push
        if not push.force:
            return False
        if self.grammar_tag is not None:
            # After a tagged call the grammar admits only the end or another call.
            push.force = False
            logits[self.end_tokens] = -np.inf
            return True
        if push.forced_at is None:
            push.forced_at = len(sampled)
        since = sampled[push.forced_at :]
        if len(since) >= FORCE_TOKENS or any(self._start_of(t) for t in since):
            push.force = False
            return False
        top = _top(logits)
        starts = self._starts_among(top)
        if not starts:
            push.force = False  # the model has no call in view: leave it be
            return False
        ends = set(self.end_tokens)
        spaces = [t for t in top if t not in ends and _blank(self._piece(t))]
        allowed = np.zeros(len(logits), dtype=bool)
        allowed[starts + spaces] = True
        logits[~allowed] = -np.inf
        return True

    def _starts_among(self, tokens: Sequence[int]) -> list[int]:
        """The tokens that start a call."""
        return [t for t in tokens if self._start_of(t) is not None]

    def _piece(self, token: int) -> str:
        return self._text([token])

    def _start_of(self, token: int) -> str | None:
        stripped = self._piece(token).lstrip()
        return next((s for s in CALL_STARTS if stripped.startswith(s)), None)


def turn_gate(
    llama: Any, thresholds: GateThresholds, *, after_result: bool, later_question: bool = False
) -> TurnGate:
    """The gate for a turn; `later_question`: the question follows earlier assistant turns."""
    limit = thresholds.after_result if after_result else thresholds.call
    if later_question and not after_result and thresholds.first_question_only:
        limit = None
    return TurnGate(llama, limit, thresholds)


def _still_open(text: str) -> bool:
    """Whether the call just read is still inside its wrapper: a call tag or a code fence
    the model has not closed yet. (The parser reads a call at its last brace; weighing the
    end of the turn or pushing for another call before the wrapper closes would take the
    closing fence for a new call's start, or, under the grammar, ban what it needs.)"""
    return text.count(FENCE) % 2 == 1 or text.rfind(OPEN_TAG) > text.rfind(CLOSE_TAG)


def _blank(piece: str) -> bool:
    return bool(piece) and not piece.strip()


def _top(logits: npt.NDArray[np.float32]) -> list[int]:
    """The `TOP` most likely tokens, in no particular order."""
    return [int(t) for t in np.argpartition(-logits, TOP)[:TOP]]


def _softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    shifted: npt.NDArray[np.float64] = np.exp(logits.astype(np.float64) - float(np.max(logits)))
    shifted /= shifted.sum()
    return shifted


def _probability(logits: npt.NDArray[np.float32], tokens: Sequence[int]) -> float:
    return float(_softmax(logits)[list(tokens)].sum())
