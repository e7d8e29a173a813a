"""promptfoo's tool-format conversion cases, read in place, asserted row by row.

Rows where farmhand deliberately differs stay here, marked with the reason and asserting
what farmhand does instead.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.corpus import CORPORA

from farmhand.errors import ConfigError
from farmhand.tools.formats import is_openai_tool_array, is_openai_tool_choice
from farmhand.tools.formats.anthropic import tool_choice_to_anthropic, tools_to_anthropic
from farmhand.tools.formats.bedrock import tool_choice_to_bedrock, tools_to_bedrock
from farmhand.tools.formats.detect import convert_tool_choice, convert_tools
from farmhand.tools.formats.google import tool_choice_to_google, tools_to_google

CORPUS = CORPORA / "promptfoo" / "cases.jsonl"
UNDEFINED = "__undefined__"  # the corpus's spelling of JavaScript's undefined

# promptfoo's function name -> ours.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isOpenAIToolChoice": is_openai_tool_choice,
    "isOpenAIToolArray": is_openai_tool_array,
    "openaiToolChoiceToAnthropic": tool_choice_to_anthropic,
    "openaiToolChoiceToBedrock": tool_choice_to_bedrock,
    "openaiToolChoiceToGoogle": tool_choice_to_google,
    "transformToolChoice": convert_tool_choice,
    "openaiToolsToAnthropic": tools_to_anthropic,
    "openaiToolsToBedrock": tools_to_bedrock,
    "openaiToolsToGoogle": tools_to_google,
    "transformTools": convert_tools,
    "transformMCPToolsToOpenAi": lambda tools: convert_tools(tools, "openai"),
    "transformMCPToolsToAnthropic": lambda tools: convert_tools(tools, "anthropic"),
    "transformMCPToolsToGoogle": lambda tools: convert_tools(tools, "google"),
}


@dataclass(frozen=True)
class Difference:
    reason: str
    raises: type[Exception]
    match: str


UNKNOWN_TARGET = Difference(
    reason="promptfoo passes tools and tool_choice through untouched for an unknown target "
    "format; farmhand refuses it, because a misspelt format name would otherwise send "
    "OpenAI-shaped tools to an API that cannot read them and fail far from the cause",
    raises=ConfigError,
    match="unknown tool format 'unknown'",
)


def _difference(row: dict[str, Any]) -> Difference | None:
    if row["function"] in ("transformTools", "transformToolChoice") and row["args"][1] == "unknown":
        return UNKNOWN_TARGET
    return None


def _load_rows() -> list[dict[str, Any]]:
    with CORPUS.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


ROWS = _load_rows()


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    totals = Counter(row["test"] for row in rows)
    seen: Counter[str] = Counter()
    ids = []
    for row in rows:
        seen[row["test"]] += 1
        title = row["test"]
        ids.append(title if totals[title] == 1 else f"{title} [{seen[title]}]")
    return ids


def _args(row: dict[str, Any]) -> list[Any]:
    # Python has no undefined; None is what a caller would pass for "not given".
    return [None if arg == UNDEFINED else arg for arg in row["args"]]


_PATH_TOKEN = re.compile(r"\[(\d+)\]|\.?([A-Za-z_$][\w$]*)")


def _at(value: Any, path: str) -> Any:
    """Follow a promptfoo path like `[0].functionDeclarations.length`."""
    for index, key in _PATH_TOKEN.findall(path):
        if index:
            value = value[int(index)]
        elif key == "length":
            value = len(value)
        else:
            value = value[key]
    return value


def _check(result: Any, assertion: dict[str, Any]) -> None:
    path = assertion["path"]
    if "not_has_property" in assertion:
        assert assertion["not_has_property"] not in _at(result, path), path
    elif "defined" in assertion:
        assert (_at(result, path) is not None) is assertion["defined"], path
    elif "equals" in assertion:
        assert _at(result, path) == assertion["equals"], path
    elif "toEqual" in assertion:
        assert _at(result, path) == assertion["toEqual"], path
    else:
        raise AssertionError(f"unknown assertion {assertion}")


def test_corpus_is_complete_and_every_function_is_mapped() -> None:
    assert len(ROWS) == 87
    assert {row["function"] for row in ROWS} <= set(FUNCTIONS)


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_promptfoo_case(row: dict[str, Any]) -> None:
    function = FUNCTIONS[row["function"]]
    difference = _difference(row)
    if difference is not None:
        with pytest.raises(difference.raises, match=difference.match):
            function(*_args(row))
        return

    result = function(*_args(row))
    kind = row["kind"]
    if kind == "toBe" and isinstance(row["expected"], bool):
        assert result is row["expected"]
    elif kind in ("toBe", "toEqual"):
        assert result == row["expected"]
    elif kind == "toBeUndefined":
        assert result is None
    elif kind == "partial":
        assert row["assertions"], "a partial row asserts something"
        for assertion in row["assertions"]:
            _check(result, assertion)
    else:
        raise AssertionError(f"unknown kind {kind}")


def test_deliberate_differences_are_few_and_named() -> None:
    differing = [row for row in ROWS if _difference(row) is not None]
    assert len(differing) == 2
    assert all(_difference(row) is UNKNOWN_TARGET for row in differing)
