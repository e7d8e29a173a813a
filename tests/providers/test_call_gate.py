"""The call gate on made-up first-token odds: which way it decides and what it bans."""

from __future__ import annotations

import numpy as np
import pytest

from farmhand.providers.call_gate import GateThresholds, TurnGate, turn_gate

PIECES = ["Hello", '{"', "```", "<tool_call>", " The", "[", "Sure"] + [f"w{i}" for i in range(93)]


class Vocabulary:
    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return PIECES[tokens[0]].encode()


def logits(**probabilities: float) -> np.ndarray:
    """Logits whose softmax gives these pieces these probabilities (the rest share what is left)."""
    p = np.full(len(PIECES), 1e-6)
    for piece, value in probabilities.items():
        p[PIECES.index({"brace": '{"', "fence": "```", "tag": "<tool_call>"}.get(piece, piece))] = (
            value
        )
    return np.log(p / p.sum()).astype(np.float32)


def test_likely_call_restricts_the_first_token_to_call_starts() -> None:
    gate = TurnGate(Vocabulary(), 0.5)
    values = logits(Hello=0.35, brace=0.3, fence=0.25, tag=0.1)
    gate([], values)
    assert gate.p_call == pytest.approx(0.65, abs=0.01)
    assert not gate.answering
    allowed = {PIECES[i] for i in np.flatnonzero(np.isfinite(values))}
    assert allowed == {'{"', "```", "<tool_call>", "["}
    assert PIECES[int(np.argmax(values))] == '{"'


def test_unlikely_call_answers_and_bans_call_starts_but_not_the_fence() -> None:
    gate = TurnGate(Vocabulary(), 0.5)
    values = logits(Sure=0.5, brace=0.3, fence=0.15, tag=0.05)
    gate([], values)
    assert gate.answering
    assert np.isneginf(values[PIECES.index('{"')])
    assert np.isneginf(values[PIECES.index("<tool_call>")])
    assert np.isfinite(values[PIECES.index("```")])  # a code answer may still open a fence


def test_after_a_result_the_bar_is_higher_and_later_tokens_are_left_alone() -> None:
    thresholds = GateThresholds(call=0.5, after_result=0.9)
    gate = turn_gate(Vocabulary(), thresholds, after_result=True)
    values = logits(Hello=0.2, brace=0.8)
    gate([], values)
    assert gate.answering
    later = logits(brace=0.9)
    before = later.copy()
    gate([1], later)
    assert np.array_equal(later, before)
    assert not turn_gate(Vocabulary(), thresholds, after_result=False).answering
