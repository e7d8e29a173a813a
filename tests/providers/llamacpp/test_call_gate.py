"""The call gate on made-up first-token odds: which way it decides and what it bans."""

from __future__ import annotations

import numpy as np
import pytest

from farmhand.providers.llamacpp.call_gate import FORCE_TOKENS, GateThresholds, TurnGate, turn_gate

PIECES = ["Hello", '{"', "```", "<tool_call>", " The", "[", "Sure"] + [f"w{i}" for i in range(93)]
PIECES += ["\n", ""]  # whitespace, and a token that prints nothing
PIECES += ["</", "tool_call>"]  # the close tag, as the grammar has the model write it


class Vocabulary:
    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return "".join(PIECES[t] for t in tokens).encode()


def logits(**probabilities: float) -> np.ndarray:
    """Logits whose softmax gives these pieces these probabilities (the rest share what is left)."""
    p = np.full(len(PIECES), 1e-6)
    names = {"brace": '{"', "fence": "```", "tag": "<tool_call>", "newline": "\n", "nothing": ""}
    for piece, value in probabilities.items():
        p[PIECES.index(names.get(piece, piece))] = value
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
    # Unless the gate is told the model wants a call it must not make: then the fence too.
    values = logits(Sure=0.5, brace=0.3, fence=0.15, tag=0.05)
    TurnGate(Vocabulary(), 0.5, answer_fence=False)([], values)
    assert np.isneginf(values[PIECES.index("```")])
    assert PIECES[int(np.argmax(values))] == "Sure"


def test_an_answer_the_gate_decided_on_may_not_end_before_it_starts() -> None:
    gate = TurnGate(Vocabulary(), 0.5)
    gate.end_tokens = [PIECES.index("w0")]
    values = logits(w0=0.6, brace=0.3, Sure=0.1)
    gate([], values)
    assert gate.answering
    assert PIECES[int(np.argmax(values))] == "Sure"  # not the end, nor a call


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


def test_after_a_call_the_end_is_banned_when_the_model_leans_on() -> None:
    thresholds = GateThresholds(call=None, after_result=None, another=0.2, push_tokens=2)
    gate = turn_gate(Vocabulary(), thresholds, after_result=False)
    gate.end_tokens = [PIECES.index("w0")]  # stands in for <|im_end|>
    first = logits(brace=0.9)
    untouched = first.copy()
    gate([], first)
    assert np.array_equal(first, untouched)  # no first-token decision with call=None
    gate.call_written()
    leaning = logits(w0=0.7, Hello=0.3)
    gate([10, 11], leaning)
    assert np.isneginf(leaning[PIECES.index("w0")])
    again = logits(w0=0.9)
    gate([10, 11, 12], again)
    assert np.isneginf(again[PIECES.index("w0")])  # two tokens
    free = logits(w0=0.9)
    gate([10, 11, 12, 13], free)
    assert np.isfinite(free[PIECES.index("w0")])


def test_after_a_call_a_sure_end_is_left_alone() -> None:
    gate = turn_gate(Vocabulary(), GateThresholds(another=0.2), after_result=False)
    gate.end_tokens = [PIECES.index("w0")]
    gate.call_written()
    sure = logits(w0=0.95)
    gate([10], sure)
    assert np.isfinite(sure[PIECES.index("w0")])


def test_first_question_only_leaves_a_later_question_to_the_model() -> None:
    thresholds = GateThresholds(call=0.8, after_result=None, first_question_only=True)
    first = turn_gate(Vocabulary(), thresholds, after_result=False)
    first([], logits(Hello=0.3, brace=0.7))
    assert first.answering  # P(call) 0.7 < 0.8 on a conversation's first question
    later = turn_gate(Vocabulary(), thresholds, after_result=False, later_question=True)
    values = logits(Hello=0.3, brace=0.7)
    untouched = values.copy()
    later([], values)
    assert not later.answering and np.array_equal(values, untouched)
    # Without first_question_only, `call` applies to every question, as before.
    every = GateThresholds(call=0.8, after_result=None)
    again = turn_gate(Vocabulary(), every, after_result=False, later_question=True)
    again([], logits(Hello=0.3, brace=0.7))
    assert again.answering


def allowed(values: np.ndarray) -> set[str]:
    return {PIECES[i] for i in np.flatnonzero(np.isfinite(values))}


def test_when_another_call_is_wanted_the_next_word_must_start_one() -> None:
    gate = turn_gate(Vocabulary(), GateThresholds(call=None, after_result=None), after_result=False)
    gate.end_tokens = [PIECES.index("w0")]
    gate.call_written(more_wanted=True)
    ending = logits(w0=0.8, Hello=0.1, newline=0.05, nothing=0.02, brace=0.02, fence=0.01)
    gate([7, 8], ending)
    # The end, prose and a token that prints nothing are banned; whitespace may come first.
    assert allowed(ending) == {'{"', "```", "<tool_call>", "[", "\n"}
    after_newline = logits(w0=0.9, fence=0.05)
    gate([7, 8, PIECES.index("\n")], after_newline)
    assert "w0" not in allowed(after_newline)
    # Once a call has started, the model is free again.
    started = logits(w0=0.9, fence=0.05)
    gate([7, 8, PIECES.index("\n"), PIECES.index("```")], started)
    assert np.isfinite(started).all()


def test_forcing_gives_up_after_a_few_tokens_or_with_no_call_in_view() -> None:
    gate = TurnGate(Vocabulary(), None)
    gate.call_written(more_wanted=True)
    newline = PIECES.index("\n")
    sampled = [10]
    for _ in range(FORCE_TOKENS):
        values = logits(w0=0.9, brace=0.05)
        gate(sampled, values)
        assert not np.isfinite(values[PIECES.index("w0")])
        sampled.append(newline)
    values = logits(w0=0.9, brace=0.05)
    gate(sampled, values)
    assert np.isfinite(values).all()

    gate.call_written(more_wanted=True)
    # No call start among the likely tokens (only the w* pieces carry weight): left alone.
    unlikely = np.log(np.array([1e-30] * 7 + [1.0] * 93 + [1e-30] * 4)).astype(np.float32)
    before = unlikely.copy()
    gate([10, 11], unlikely)
    assert np.array_equal(unlikely, before)
    # Nor does a call written without more wanted force anything.
    plain = TurnGate(Vocabulary(), None)
    plain.call_written()
    values = logits(w0=0.9, brace=0.05)
    plain([10], values)
    assert np.isfinite(values).all()


def softmax(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values.astype(np.float64) - np.max(values))
    return shifted / shifted.sum()


def test_retag_writes_a_call_started_another_way_as_the_tag_with_the_same_weight() -> None:
    tag = PIECES.index("<tool_call>")
    gate = TurnGate(Vocabulary(), None, grammar_tag=tag, retag=True)
    values = logits(Hello=0.4, brace=0.3, fence=0.25, tag=0.05)
    gate([], values)
    assert allowed(values) == set(PIECES) - {'{"', "```", "["}
    p = softmax(values)
    assert p[tag] == pytest.approx(0.6, abs=0.01)  # brace, fence, [ and the tag's own
    assert p[PIECES.index("Hello")] == pytest.approx(0.4, abs=0.01)
    later = logits(brace=0.9)
    untouched = later.copy()
    gate([tag], later)  # only the first token is retagged
    assert np.array_equal(later, untouched)
    # Without `retag` (a grammar tag alone), the first token is left to the model.
    plain = logits(brace=0.9)
    untouched = plain.copy()
    TurnGate(Vocabulary(), None, grammar_tag=tag)([], plain)
    assert np.array_equal(plain, untouched)


def test_under_the_grammar_a_wanted_call_waits_for_the_close_tag_then_bans_the_end() -> None:
    tag = PIECES.index("<tool_call>")
    gate = TurnGate(Vocabulary(), None, grammar_tag=tag)
    gate.end_tokens = [PIECES.index("w0")]
    gate.call_written(more_wanted=True)  # the parser read the call before its close tag
    sampled = [tag, PIECES.index('{"'), PIECES.index("\n")]
    inside = logits(w0=0.2, Hello=0.8)
    untouched = inside.copy()
    gate(sampled, inside)
    assert np.array_equal(inside, untouched)  # the grammar is still closing the call
    sampled += [PIECES.index("</"), PIECES.index("tool_call>")]
    closed = logits(w0=0.9, newline=0.1)
    gate(sampled, closed)
    # The grammar admits only the end or a newline and another call: the end is banned,
    # and nothing else (banning all but call starts would leave the grammar nothing).
    assert allowed(closed) == set(PIECES) - {"w0"}
    after = logits(w0=0.9)
    gate([*sampled, PIECES.index("\n")], after)
    assert np.isfinite(after).all()


def test_after_a_fenced_call_the_gate_waits_for_the_closing_fence() -> None:
    """The parser reads a fenced call at its last brace; the closing fence is not the
    start of another call, and the end is weighed only after it."""
    gate = TurnGate(Vocabulary(), None)
    gate.end_tokens = [PIECES.index("w0")]
    gate.call_written(more_wanted=True)
    fence, brace, newline = PIECES.index("```"), PIECES.index('{"'), PIECES.index("\n")
    sampled = [fence, PIECES.index("w5"), newline, brace]
    inside = logits(w0=0.5, fence=0.5)
    untouched = inside.copy()
    gate(sampled, inside)
    assert np.array_equal(inside, untouched)
    sampled += [newline, fence]  # closed: now the next word must start a call
    closed = logits(w0=0.8, Hello=0.1, brace=0.04, fence=0.04, newline=0.02)
    gate(sampled, closed)
    assert allowed(closed) == {'{"', "```", "<tool_call>", "[", "\n"}


@pytest.mark.parametrize(("p_call", "goes_on"), [(0.9, True), (0.3, False)])
def test_go_on_after_the_push_bans_a_new_message_then_weighs_another_call(
    p_call: float, goes_on: bool
) -> None:
    """With `go_on`, the push bans the tokens that open a new message too (a model spends
    it on `<|im_start|>` and ends); after a blank written in the push, another call goes
    on only if it is likely enough, else only the end may follow."""
    thresholds = GateThresholds(call=None, after_result=None, another=0.05, go_on=0.8)
    gate = TurnGate(Vocabulary(), None, thresholds)
    gate.end_tokens = [PIECES.index("w0")]  # stands in for <|im_end|>
    gate.opener_tokens = [PIECES.index("w1")]  # and for <|im_start|>
    gate.call_written()
    fence, newline = PIECES.index("```"), PIECES.index("\n")
    sampled = [fence, PIECES.index("w5"), fence]  # the call's fence, closed
    push = logits(w0=0.6, w1=0.3, newline=0.1)
    gate(sampled, push)
    assert np.isneginf(push[PIECES.index("w0")]) and np.isneginf(push[PIECES.index("w1")])
    assert PIECES[int(np.argmax(push))] == "\n"
    after = logits(fence=p_call, w0=(1 - p_call) / 2, Hello=(1 - p_call) / 2)
    gate([*sampled, newline], after)
    if goes_on:
        assert np.isfinite(after[PIECES.index("```")])
        assert np.isfinite(after[PIECES.index("Hello")])
    else:
        assert allowed(after) == {"w0"}


def test_without_go_on_the_push_leaves_a_new_message_and_what_follows_alone() -> None:
    gate = TurnGate(Vocabulary(), None, GateThresholds(call=None, another=0.05))
    gate.end_tokens, gate.opener_tokens = [PIECES.index("w0")], [PIECES.index("w1")]
    gate.call_written()
    fence = PIECES.index("```")
    push = logits(w0=0.6, w1=0.3, newline=0.1)
    gate([fence, fence], push)
    assert np.isfinite(push[PIECES.index("w1")])
    after = logits(fence=0.3, w0=0.7)
    untouched = after.copy()
    gate([fence, fence, PIECES.index("\n")], after)
    assert np.array_equal(after, untouched)
