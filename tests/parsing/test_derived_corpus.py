"""llama.cpp's autoparser corpus read by the derived parser alone (family modules off).

Every row is parsed with the parser derived from its own template (`tool_parser: auto`),
whole and one character at a time, as `test_llamacpp_corpus` does with the detected family.
The target is every row of a template whose shape is one of the three the derived parser
reads; templates of other shapes are listed in OUT_OF_SCOPE with the reason, and asserted to
be analysed as that shape, so none is skipped silently. `-s` prints the pass counts.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from tests.parsing.test_llamacpp_corpus import _check, _expected, _normalized, _squeeze
from tests.support.corpus import Case, autoparser_cases, parse, template_text

from farmhand.parsing.derived.analysis import Shape, analyze

# Template -> (the shape the analysis finds, why the derived parser does not read it).
OUT_OF_SCOPE: dict[str, tuple[Shape, str]] = {
    "openai-gpt-oss-120b.jinja": (
        "other",
        "Harmony: calls, reasoning and content are channels of one message format"
        " (`<|channel|>`), the call's name is in the message header",
    ),
    "google-gemma-4-31B-it.jinja": (
        "other",
        'Gemma 4 writes arguments in its own object syntax with `<|"|>` string quotes:'
        " neither JSON nor a tag per argument",
    ),
    "meetkai-functionary-medium-v3.2.jinja": (
        "other",
        "the prompt ends with `>>>` and the reply's first word routes it (`all` = text, else"
        " a tool name): no marker of the reply's own opens a call",
    ),
    "LFM2-8B-A1B.jinja": (
        "no_calls",
        "pythonic calls the model writes in its content; the template renders no tool_calls",
    ),
    "LFM2.5-Instruct.jinja": (
        "no_calls",
        "pythonic calls the model writes in its content; the template renders no tool_calls",
    ),
    "LFM2.5-8B-A1B.jinja": (
        "no_calls",
        "the template uses a `{% generation %}` tag jinja2 does not know: it cannot render",
    ),
    "google-gemma-2-2b-it.jinja": ("no_calls", "the template has no tool calls at all"),
    "ibm-granite-granite-3.3-2B-Instruct.jinja": (
        "no_calls",
        "the template renders no assistant tool_calls (the model writes `<|tool_call|>` JSON"
        " in its content)",
    ),
    "Kimi-K2-Instruct.jinja": (
        "no_calls",
        "the template appends to a list (`.append`), which the immutable jinja sandbox"
        " refuses: it cannot render a turn with calls",
    ),
    "Kimi-K2-Thinking.jinja": (
        "no_calls",
        "the template appends to a list (`.append`), which the immutable jinja sandbox"
        " refuses: it cannot render a turn with calls",
    ),
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja": (
        "no_calls",
        "the template reads tools in Cohere's own format (`tool.description`,"
        " `parameter_definitions`), not OpenAI's: it cannot render the probes",
    ),
    "fireworks-ai-llama-3-firefunction-v2.jinja": (
        "no_calls",
        "the template needs a `functions` variable the caller renders: it cannot render",
    ),
}

# Rows where the derived parser differs from llama.cpp on purpose (as DIFFERENCES in
# test_llamacpp_corpus, for the family modules). Still asserted.
_JSON_SCHEMA_FENCE = (
    "the request set a json_schema response format, under which llama.cpp strips a ```json"
    " fence from the reply; farmhand's parsers read tool calls, not response formats"
)
DERIVED_DIFFERENCES: dict[str, tuple[str, dict[str, Any]]] = {
    "320-meta-llama-Llama-3.1-8B-Instruct": (_JSON_SCHEMA_FENCE, {"content": '```json\n"42"\n```'}),
    "32-mistralai-Ministral-3-14B-Reasoning-2512": (
        _JSON_SCHEMA_FENCE,
        {"content": '```json\n{"amount": 123.45, "date": "2025-12-03"}\n```'},
    ),
    "244-Reka-Edge": (
        "a call cut off inside its arguments shows them compact (whitespace outside strings"
        " dropped), as every farmhand parser streams them; llama.cpp shows them as written",
        {
            "tool_calls": [
                {"name": "special_function", "arguments": '{"arg1":', "id": ""},
            ]
        },
    ),
}


def _in_scope(case: Case) -> bool:
    return case.template not in OUT_OF_SCOPE


IN_SCOPE_CASES = [c for c in autoparser_cases() if _in_scope(c)]


@pytest.mark.parametrize("case", IN_SCOPE_CASES, ids=lambda c: c.id)
def test_derived_parser_reads_corpus_row(case: Case) -> None:
    _check(
        case,
        whitespace_insensitive=True,
        derived_only=True,
        differences=DERIVED_DIFFERENCES,
    )


@pytest.mark.parametrize("template", sorted({c.template for c in autoparser_cases()}))
def test_every_template_is_in_scope_or_listed_with_its_shape(template: str) -> None:
    derived = analyze(template_text(template))
    if template in OUT_OF_SCOPE:
        shape, why = OUT_OF_SCOPE[template]
        assert (derived.shape, derived.in_scope) == (shape, False), why
        assert derived.note  # what the analysis saw, for `farmhand parse --template`
    else:
        assert derived.in_scope, derived.note


def test_pass_counts_per_template(capsys: pytest.CaptureFixture[str]) -> None:
    """The report the issue asks for: rows the derived parser passes, per template."""
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for case in IN_SCOPE_CASES:
        total[case.template] += 1
        expected = {**_expected(case), **DERIVED_DIFFERENCES.get(case.id, ("", {}))[1]}
        whole = _squeeze(_normalized(parse(case, derived_only=True)))
        streamed = _squeeze(_normalized(parse(case, chunk_size=1, derived_only=True)))
        if whole == _squeeze(expected) and streamed == whole:
            passed[case.template] += 1
    with capsys.disabled():
        report = {t: f"{passed[t]}/{n}" for t, n in sorted(total.items())}
        print("\nderived parser, in-scope templates:", json.dumps(report, indent=1))
        print(f"in scope: {sum(passed.values())}/{sum(total.values())} rows;", end=" ")
        print(f"out of scope: {len(autoparser_cases()) - len(IN_SCOPE_CASES)} rows")
    assert passed == total
    assert sum(total.values()) == 240  # rows do not drop out of scope unnoticed
