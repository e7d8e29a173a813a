"""Accuracy levers for the embedded default model, measured one at a time with farmhand eval.

Claim: each lever kept in the embedded provider's defaults raises tool-calling accuracy
where the baseline fails (parallel calls, no-call questions, answering after a result)
without costing the categories it already passes.

Baseline: the provider as it was before the levers: native strategy (the chat template
renders the tools), no rules in the system prompt, no call gate, unconstrained auto turns.
Every variant runs on the same loaded model, the same suite and greedy decoding, one turn per
case (`farmhand.eval`); the table has one column per variant, and the deltas against the
baseline follow it.

Variants, each one lever on the baseline (the grounding levers off in all but groundextra,
groundfirst*, grounded and default, as the provider was before them): rules
(`prompting/guidance.py` in the system prompt); gate (`providers/llamacpp/call_gate.py`:
call only if the first tokens that start a call weigh >= 0.5 in all, >= 0.9 after a tool
result); lazy (the tool grammar, triggered at the call tag); prompt (the prompt-based
strategy); answer (after successful results, the question and results as one plain message:
`guidance.answer_turn`); another (after a call, push on to another when P(not ending) >=
0.05); firstgate (another, plus the gate at P(call) >= 0.8 on a conversation's first
question only); longpush (another, with the end banned for six tokens instead of two);
ungrounded (what the provider ships, the grounding levers off); groundextra (ungrounded,
plus: a further call of a turn kept only if a value it changes is in the user's text, else
dropped and the turn stopped: `providers/llamacpp/grounding.py`); groundfirst, groundfirsthalf,
groundfirstall (ungrounded, plus: a first question's first call answered in text instead
when none, under half, or not all of its required values are in the user's text);
grounded (groundextra and groundfirsthalf); groundoptional (ungrounded, plus: optional
arguments whose values are not in the user's text left out); groundtopic (ungrounded, plus:
a first question's first call of a tool that shares no word with the question answered in
text unless all its required values are in the user's text: `providers/llamacpp/relevance.py`);
groundsiblings (ungrounded, plus: while the question lists values the calls have not used,
"Berlin and Madrid", the model is pushed into another call: `providers/llamacpp/siblings.py`);
repair (ungrounded, plus: calls that miss their schema repaired, a number for a string or
several values packed into one call: `tools/repair.py`); default (what the provider ships:
grounded, groundoptional, groundtopic, groundsiblings and repair); retag (default, plus the
lazy tool grammar, with a first token that starts a call as a fence or bare JSON written
as the call tag, so that every call is written under the grammar); goon (default, plus:
the tokens that open a new message banned with the end in the push after a call, and a
blank the model writes there goes on into another call only if P(call start) >= 0.8: what
`farmhand chat` and `farmhand eval -t default` run, since both catalog models carry it).

Run: .venv/bin/python bench/accuracy_levers.py [SUITE] [--variants a,b] [--limit N]
     [--category C] [--json FILE] [--model NAME]
     SUITE: builtin (default), bfcl:slice, a JSONL file; NAME: a catalog model
Accuracy is printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from farmhand.eval.report import as_json, table
from farmhand.eval.runner import RunOptions, run_suite
from farmhand.eval.scoring import TargetSummary
from farmhand.eval.suite import Suite, load_suite
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.prompting.guidance import TOOL_RULES
from farmhand.providers.base import Provider
from farmhand.providers.llamacpp import DEFAULT_GATE, EmbeddedProfile, LlamaCppProvider
from farmhand.providers.llamacpp.call_gate import GateThresholds
from farmhand.providers.llamacpp.load import load_llama
from farmhand.providers.llamacpp.turn_calls import ANY_GROUNDED
from farmhand.providers.prompt_based import PromptBasedProvider

GATE = GateThresholds(call=0.5, after_result=0.9)
ANOTHER = GateThresholds(call=None, after_result=None, another=0.05)
# The shipped push-on, plus a first-token gate for a conversation's first question only,
# its threshold read off P(call) per BFCL item (bench/README.md, issue 16).
FIRST_GATE = GateThresholds(call=0.8, after_result=None, another=0.05, first_question_only=True)
# The shipped push-on, the end of the turn banned for six tokens instead of two.
LONG_PUSH = GateThresholds(call=None, after_result=None, another=0.05, push_tokens=6)
# The shipped push-on, and after it: `<|im_start|>` banned with the end, and a blank the
# model wrote in the push goes on into another call only if P(call start) >= 0.8 (what
# `provider_for` ships for both catalog models: `CatalogModel.gate_go_on`).
GO_ON = replace(DEFAULT_GATE, go_on=0.8)
# The provider before the grounding levers (all on by default since they were measured).
OFF = EmbeddedProfile(
    ground_extra=False,
    ground_first=None,
    ground_optional=False,
    ground_topic=False,
    ground_siblings=False,
    repair_calls=False,
)
# And before the call gate and the answer turn after results.
BARE = replace(OFF, call_gate=None, answer_after_results=False)
Builder = Callable[[Any], Provider]


def embedded(profile: EmbeddedProfile) -> Builder:
    return lambda llama: LlamaCppProvider(llama, profile)


VARIANTS: dict[str, Builder] = {
    "baseline": embedded(BARE),
    "rules": embedded(replace(BARE, tool_rules=TOOL_RULES)),
    "gate": embedded(replace(BARE, call_gate=GATE)),
    "lazy": embedded(replace(BARE, constrained=True)),
    "prompt": lambda llama: PromptBasedProvider(LlamaCppProvider(llama, BARE)),
    "answer": embedded(replace(BARE, answer_after_results=True)),
    "another": embedded(replace(BARE, call_gate=ANOTHER)),
    "firstgate": embedded(replace(OFF, call_gate=FIRST_GATE)),
    "longpush": embedded(replace(OFF, call_gate=LONG_PUSH)),
    "ungrounded": embedded(OFF),
    "groundextra": embedded(replace(OFF, ground_extra=True)),
    "groundfirst": embedded(replace(OFF, ground_first=ANY_GROUNDED)),
    "groundfirsthalf": embedded(replace(OFF, ground_first=0.5)),
    "groundfirstall": embedded(replace(OFF, ground_first=1.0)),
    "grounded": embedded(replace(OFF, ground_extra=True, ground_first=0.5)),
    "groundoptional": embedded(replace(OFF, ground_optional=True)),
    "groundtopic": embedded(replace(OFF, ground_topic=True)),
    "groundsiblings": embedded(replace(OFF, ground_siblings=True)),
    "repair": embedded(replace(OFF, repair_calls=True)),
    # What the provider ships by itself (a catalog model adds its `gate_go_on`: goon).
    "default": embedded(EmbeddedProfile()),
    "retag": embedded(EmbeddedProfile(constrained=True, retag_calls=True)),
    "goon": embedded(EmbeddedProfile(call_gate=GO_ON)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite", nargs="?", default="builtin")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--limit", type=int, default=None, help="cases per category")
    parser.add_argument("--category", action="append", default=[])
    parser.add_argument("--json", type=Path, help="also write the eval JSON here")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="a catalog model")
    args = parser.parse_args()
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    suite = load_suite(args.suite).select(args.category, args.limit)
    llama = load_llama(ensure_model(args.model))
    summaries = [_measure(name, VARIANTS[name](llama), llama, suite) for name in names]
    console = Console()
    console.print(table(suite.name, summaries))
    _deltas(console, summaries)
    if args.json:
        args.json.write_text(json.dumps(as_json(suite.name, summaries), indent=1))


def _measure(name: str, provider: Provider, llama: Any, suite: Suite) -> TargetSummary:
    llama.reset()  # every variant starts from an empty context
    results = anyio.run(run_suite, provider, suite, RunOptions())
    return TargetSummary(name, tuple(results))


def _deltas(console: Console, summaries: list[TargetSummary]) -> None:
    if len(summaries) < 2:
        return
    base = summaries[0]
    for summary in summaries[1:]:
        changes = [
            f"{name} {score.accuracy - base.categories[name].accuracy:+.0%}"
            for name, score in summary.categories.items()
            if name in base.categories
        ]
        mean = summary.mean_accuracy - base.mean_accuracy
        console.print(f"{summary.target} vs {base.target}: mean {mean:+.1%}; {', '.join(changes)}")


if __name__ == "__main__":
    main()
