"""Peer conformance: llama.cpp's own parser test cases, for every family farmhand has.

Each row's `raw` is parsed whole and compared with its `expected` message; partial rows
(streaming prefixes) are fed without finishing, and compared with the partial message.
Every row is parsed a second time one character at a time, which must give the same
result: what llama.cpp checks with its streaming-consistency cases, applied to all rows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.support.corpus import Case, autoparser_cases, old_cases, parse

# Rows where farmhand differs from llama.cpp on purpose: row id -> (why, what farmhand
# gives instead, as fields that replace the row's expected ones). Still asserted.
DIFFERENCES: dict[str, tuple[str, dict[str, Any]]] = {
    "320-meta-llama-Llama-3.1-8B-Instruct": (
        "the request set a json_schema response format, under which llama.cpp strips a"
        " ```json fence from the reply; farmhand's parsers read tool calls, and stripping"
        " fences from every Llama reply would change ordinary content",
        {"content": '```json\n"42"\n```'},
    ),
    "159-minimax_m2": (
        "with reasoning left in the text, the whitespace before a call block goes with the"
        " call in farmhand, wherever the text before it came from; llama.cpp keeps it when"
        " that text is a reasoning block",
        {"content": "<think>I'm\nthinking</think>"},
    ),
    "172-glm_4_5": (
        "the same whitespace before the call (see 159-minimax_m2); farmhand also keeps the"
        " reply's leading newline, as written, when reasoning is not split out",
        {"content": "\n<think>I'm\nthinking</think>"},
    ),
    "188-kimi_k2": (
        "the same whitespace before the call (see 159-minimax_m2)",
        {"content": "<think>I'm\nthinking</think>"},
    ),
    "200-kimi_k2": (
        "reasoning ends where Kimi K2 starts its calls inside it; what follows the calls is"
        " the reply (llama.cpp goes back to reasoning until a </think>)",
        {"content": "I'm still thinking</think>Hello", "reasoning_content": "I'm thinking"},
    ),
    "170-Kimi-K2-Thinking": (
        "a partial call's arguments are shown as the compact JSON written so far",
        {
            "tool_calls": [
                {
                    "name": "special_function",
                    "arguments": '{"arg1":',
                    "id": "functions.special_function:0",
                }
            ]
        },
    ),
    "134-deepseek_v3_1": (
        "reasoning the prompt opened and the output never closed stays reasoning, the call"
        " markup inside it included (a streamed reply cannot take back what it showed as"
        " reasoning); llama.cpp re-reads the whole output as the reply at its end",
        {
            "content": "",
            "reasoning_content": "REASONING<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time"
            '<｜tool▁sep｜>{"city": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            "tool_calls": [],
        },
    ),
    "257-NVIDIA-Nemotron-Nano-v2": (
        "with reasoning left in the text, the <think> the prompt opened is part of the reply's"
        " text, as in the rows where the model goes on to close it (37-NVIDIA-Nemotron-3-...);"
        " llama.cpp drops it when no reasoning follows",
        {"content": "<think>\n"},
    ),
    "176-glm_4_5": (
        "reasoning is split off at the start of the reply only: a <think> block in the middle"
        " of the reply is the model writing about tags, and stays text",
        {
            "content": "Hello, world!\n<think>Thinking2</think>What's up?",
            "reasoning_content": "I'm\nthinking",
        },
    ),
    "88-granite": (
        "an unfinished reply, reasoning not split out (reasoning_format none): llama.cpp holds"
        " back `<think` as if it might open reasoning; farmhand shows the text as written",
        {"content": "<think"},
    ),
    "90-granite": (
        "an unfinished reply, reasoning not split out: llama.cpp's partial parse shows nothing;"
        " farmhand shows the text as written so far (`<response` may still grow into a tag)",
        {"content": "<think>I'm\nthinking</think><response"},
    ),
    "95-granite": (
        "a call object not closed yet (`..., {` follows its arguments): farmhand shows it as"
        " a partial call, its arguments compact as written; llama.cpp re-serializes them",
        {"tool_calls": [{"name": "special_function", "arguments": '{"arg1":1}', "id": ""}]},
    ),
    "32-mistralai-Ministral-3-14B-Reasoning-2512": (
        "as row 320: under a json_schema response format llama.cpp strips the ```json fence;"
        " farmhand keeps the reply as written",
        {"content": '```json\n{"amount": 123.45, "date": "2025-12-03"}\n```'},
    ),
    "244-Reka-Edge": (
        'a call cut off after `"arg1":`: farmhand shows the partial arguments compact, as'
        " written so far; llama.cpp re-serializes them with a space after the colon",
        {"tool_calls": [{"name": "special_function", "arguments": '{"arg1":', "id": ""}]},
    ),
}


def _normalized(message: Any) -> dict[str, Any]:
    calls = []
    for call in message.tool_calls:
        if call.partial:
            arguments: Any = call.arguments_text
        else:
            arguments = json.dumps(call.arguments, sort_keys=True)
        calls.append({"name": call.name, "arguments": arguments, "id": call.id})
    return {
        "content": message.content,
        "reasoning_content": message.reasoning_content,
        "tool_calls": calls,
    }


def _expected(case: Case) -> dict[str, Any]:
    calls = []
    for call in case.expected["tool_calls"]:
        if call.get("arguments") is None:
            arguments: Any = call["arguments_str"]
        else:
            arguments = json.dumps(call["arguments"], sort_keys=True)
        calls.append({"name": call["name"], "arguments": arguments, "id": call.get("id") or ""})
    return {
        "content": case.expected["content"],
        "reasoning_content": case.expected["reasoning_content"],
        "tool_calls": calls,
    }


def _squeeze(message: dict[str, Any]) -> dict[str, Any]:
    """Whitespace-insensitive view, as the autoparser cases are compared upstream."""
    return {
        **message,
        "content": "".join(message["content"].split()),
        "reasoning_content": "".join(message["reasoning_content"].split()),
    }


def _with_kimi_ids() -> None:
    """cases.jsonl comes from a llama.cpp that dropped Kimi K2's call ids; its autoparser
    cases, and farmhand, keep them (`functions.NAME:0`, which the tool's result quotes back)."""
    for case in old_cases():
        if case.family != "kimi_k2" or not case.expected["tool_calls"]:
            continue
        ids = re.findall(
            r"<\|tool_call_begin\|>\s*(.+?)\s*<\|tool_call_argument_begin\|>", case.raw
        )
        why, fields = DIFFERENCES.get(case.id, ("", {}))
        calls = fields.get("tool_calls", _expected(case)["tool_calls"])
        calls = [{**call, "id": id_} for call, id_ in zip(calls, ids, strict=False)]
        reason = "; ".join(r for r in (why, "the call ids are kept") if r)
        DIFFERENCES[case.id] = (reason, {**fields, "tool_calls": calls})


_with_kimi_ids()


def _check(
    case: Case,
    *,
    whitespace_insensitive: bool,
    derived_only: bool = False,
    differences: dict[str, tuple[str, dict[str, Any]]] = DIFFERENCES,
) -> None:
    """The row parsed whole equals its expected message (less `differences`), and parsed
    a character at a time equals the whole parse; `derived_only`: see `corpus.parse`."""
    got = _normalized(parse(case, derived_only=derived_only))
    expected = {**_expected(case), **differences.get(case.id, ("", {}))[1]}
    if whitespace_insensitive:
        got, expected = _squeeze(got), _squeeze(expected)
    assert got == expected
    streamed = _normalized(parse(case, chunk_size=1, derived_only=derived_only))
    assert (_squeeze(streamed) if whitespace_insensitive else streamed) == got


@pytest.mark.parametrize("case", old_cases(), ids=lambda c: c.id)
def test_llamacpp_case(case: Case) -> None:
    _check(case, whitespace_insensitive=False)


@pytest.mark.parametrize("case", autoparser_cases(), ids=lambda c: c.id)
def test_llamacpp_autoparser_case(case: Case) -> None:
    _check(case, whitespace_insensitive=True)


OLD_ROWS = 197
"""cases.jsonl rows of farmhand's families: the 79 of the original ten, 94 of helper A's
new slugs (seed_oss, gpt_oss, glm_4_5, ...) and 24 of granite, magistral and apertus."""


def test_corpus_is_read_whole() -> None:
    # Rows of the families farmhand has: 79 of the ten original ones, and those of each
    # family added since whose slug is llama.cpp's.
    assert len(old_cases()) == OLD_ROWS
    assert len(autoparser_cases()) == 373
    old_families = {c.family for c in old_cases()}
    assert old_families >= {
        "hermes_2_pro",
        "llama3_x",
        "llama3_x_builtin_tools",
        "mistral_nemo",
        "functionary_v3_1_llama3_1",
        "functionary_v3_2",
        "firefunction_v2",
        "command_r7b",
        "deepseek_r1",
        "generic",
        "granite",
        "magistral",
        "apertus",
    }
