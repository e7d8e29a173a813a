"""Scripted stand-ins for a model under eval: one that answers every case right, built from
the case itself, and helpers to script particular mistakes."""

from __future__ import annotations

from farmhand.eval.suite import EvalCase, Suite
from farmhand.messages import ToolCall, Usage
from farmhand.providers.scripted import ScriptedProvider, Step

USAGE = Usage(prompt_tokens=100, completion_tokens=10)


def right_step(case: EvalCase) -> Step:
    """The turn that passes `case`: its expected calls with their first acceptable values,
    or an answer that mentions what it must."""
    if not case.expected:
        answer = case.answer_contains[0] if case.answer_contains else "Here you go."
        return Step.text(f"The answer: {answer}.", usage=USAGE)
    calls = [
        ToolCall(
            want.name,
            {k: v[0] for k, v in want.arguments.items() if v[0] is not None},
        )
        for want in case.expected
    ]
    return Step.calls(*calls, usage=USAGE)


def perfect_model(suite: Suite) -> ScriptedProvider:
    return ScriptedProvider([right_step(case) for case in suite.cases])
