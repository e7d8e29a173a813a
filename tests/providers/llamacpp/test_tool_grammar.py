"""The tool-call grammar, as text: which tools, which choice, parallel or not, fallbacks.

Whether llama.cpp parses these grammars and accepts or rejects given outputs under them is
checked against the real model in tests/e2e/test_constrained_calls.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.errors import ConfigError, ProviderError
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp.grammar import (
    GrammarCache,
    GrammarSpec,
    build_tool_grammar,
    grammar_spec,
    normalize_arguments_schema,
)
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import OpenAIToolChoice, tool_choice_from_openai

WEATHER = ToolDefinition(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ADD = ToolDefinition(
    "add_numbers",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
SEARCH = ToolDefinition(
    "files:search_files",
    "Find files by glob pattern.",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "max_results": {"type": "integer"}},
        "required": ["pattern", "max_results"],
    },
)
THREE = [WEATHER, ADD, SEARCH]


def rules(text: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in text.splitlines())


def spec(
    tools: list[ToolDefinition],
    choice: OpenAIToolChoice = "required",
    *,
    parallel: bool = True,
    constrain_auto: bool = False,
) -> GrammarSpec | None:
    settings = GenerationSettings(
        tool_choice=tool_choice_from_openai(choice), parallel_tool_calls=parallel
    )
    return grammar_spec(tools, settings, constrain_auto=constrain_auto)


def grammar(tools: list[ToolDefinition], choice: OpenAIToolChoice = "required", **kw: Any) -> str:
    wanted = spec(tools, choice, **kw)
    assert wanted is not None
    return build_tool_grammar(wanted).text


def test_one_tool_exactly_one_call_in_the_hermes_format() -> None:
    assert grammar([WEATHER], parallel=False) == (
        "root ::= fh-calls\n"
        r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F]'
        r" [0-9a-fA-F] [0-9a-fA-F])" + "\n"
        'fh-args-0 ::= "{" space fh-args-0-city-kv "}" space\n'
        r'fh-args-0-city-kv ::= "\"city\"" space ":" space string' + "\n"
        r'fh-call ::= "<tool_call>\n" ( fh-call-0 ) "\n</tool_call>"' + "\n"
        r'fh-call-0 ::= "{\"name\": \"get_weather\", \"arguments\": " fh-args-0 "}"' + "\n"
        "fh-calls ::= fh-call\n"
        'space ::= " "?\n'
        r'string ::= "\"" char* "\"" space' + "\n"
    )


def test_three_tools_one_alternative_each_with_its_own_arguments() -> None:
    got = rules(grammar(THREE))
    assert got["fh-call"] == (
        r'"<tool_call>\n" ( fh-call-0 | fh-call-1 | fh-call-2 ) "\n</tool_call>"'
    )
    for index, tool in enumerate(THREE):
        head = rf'"{{\"name\": \"{tool.name}\", \"arguments\": " fh-args-{index} "}}"'
        assert got[f"fh-call-{index}"] == head
    assert got["fh-args-1"] == '"{" space fh-args-1-a-kv "," space fh-args-1-b-kv "}" space'
    assert got["fh-args-1-b-kv"] == r'"\"b\"" space ":" space integer'
    assert got["fh-args-2-max-results-kv"] == r'"\"max_results\"" space ":" space integer'
    assert "fh-text" not in got  # required: calls only


def test_parallel_calls_are_one_or_more_separated_by_newlines() -> None:
    assert rules(grammar(THREE, parallel=True))["fh-calls"] == r'fh-call ( "\n" fh-call )*'
    assert rules(grammar(THREE, parallel=False))["fh-calls"] == "fh-call"


def test_named_choice_allows_only_that_tool() -> None:
    named = {"type": "function", "function": {"name": "add_numbers"}}
    got = rules(grammar(THREE, named))
    assert got["root"] == "fh-calls"
    assert got["fh-call"] == r'"<tool_call>\n" ( fh-call-0 ) "\n</tool_call>"'
    assert "add_numbers" in got["fh-call-0"]
    assert not any("get_weather" in body or "search_files" in body for body in got.values())


def test_named_choice_may_leave_out_the_server_prefix() -> None:
    wanted = spec(THREE, {"type": "function", "function": {"name": "search_files"}})
    assert wanted is not None and wanted.tools == (SEARCH,)


def test_named_choice_of_an_unknown_tool_says_which_tools_there_are() -> None:
    with pytest.raises(ProviderError, match="get_weather, add_numbers, files:search_files"):
        spec(THREE, {"type": "function", "function": {"name": "nope"}})
    with pytest.raises(ConfigError, match="is not an OpenAI tool_choice"):
        spec(THREE, {"type": "function"})  # names no function: refused before any grammar
    with pytest.raises(ValueError, match="names a tool exactly when"):
        ToolChoice("tool")


def test_auto_is_constrained_only_when_asked() -> None:
    assert spec(THREE, "auto") is None
    got = rules(grammar(THREE, "auto", constrain_auto=True))
    assert got["root"] == "fh-text fh-calls?"
    # Free text: anything that does not contain <tool_call> and does not open with "{".
    assert got["fh-text"] == r'[ \t\n]* ( [^{< \t\n] fh-text-0 | "<" fh-text-1 )?'
    assert got["fh-text-0"] == '( "<" fh-text-1 | [^<] fh-text-0 )?'
    assert got["fh-text-1"] == '( "t" fh-text-2 | "<" fh-text-1 | [^t<] fh-text-0 )?'
    assert got["fh-text-10"] == '( "<" fh-text-1 | [^><] fh-text-0 )?'  # never the ">"


def test_no_grammar_for_choice_none_or_no_tools() -> None:
    assert spec(THREE, "none") is None
    assert spec([], "required") is None


def test_a_schema_the_converter_cannot_express_falls_back_to_any_object() -> None:
    broken = ToolDefinition(
        "broken", "", {"type": "object", "properties": {"x": {"type": "banana"}}}
    )
    built = build_tool_grammar(GrammarSpec((WEATHER, broken), True, True))
    got = rules(built.text)
    assert built.fallbacks == ("broken",)
    assert got["fh-call-1"] == r'"{\"name\": \"broken\", \"arguments\": " fh-args-1 "}"'
    assert got["fh-args-1"] == "object"  # any JSON object, the name still fixed
    assert got["fh-args-0"] == '"{" space fh-args-0-city-kv "}" space'  # others untouched


def test_a_schema_llama_cpp_rejects_falls_back_too() -> None:
    def check(text: str) -> bool:
        return "fh-args-0-city" not in text  # pretend llama.cpp cannot parse these rules

    built = build_tool_grammar(GrammarSpec((WEATHER, ADD), True, True), check)
    assert built.fallbacks == ("get_weather",)
    assert rules(built.text)["fh-args-0"] == "object"


def test_cache_builds_once_per_tools_and_choice() -> None:
    checked: list[str] = []

    def check(text: str) -> bool:
        checked.append(text)
        return True

    cache = GrammarCache(check)
    required = spec(THREE, "required")
    named = spec(THREE, {"type": "function", "function": {"name": "get_weather"}})
    assert required is not None and named is not None
    first = cache.get(required)
    after_first = len(checked)
    assert cache.get(required) is first
    assert len(checked) == after_first
    assert cache.get(named) != first


def test_cache_falls_back_to_plain_objects_when_the_whole_grammar_is_rejected() -> None:
    def check(text: str) -> bool:  # each tool's rules pass alone, not all of them together
        return not ("fh-call" in text and "fh-args-0-city" in text)

    wanted = spec([WEATHER, ADD])
    assert wanted is not None
    built = GrammarCache(check).get(wanted)
    assert built is not None
    assert built.fallbacks == ("get_weather", "add_numbers")
    got = rules(built.text)
    assert got["fh-args-0"] == got["fh-args-1"] == "object"
    assert "get_weather" in got["fh-call-0"]  # names still constrained


def test_cache_never_raises_and_gives_none_when_nothing_parses() -> None:
    cache = GrammarCache(lambda text: False)
    wanted = spec(THREE)
    assert wanted is not None
    assert cache.get(wanted) is None  # the turn then runs unconstrained


def test_normalizing_for_the_converter() -> None:
    schema = {
        "type": "object",
        "properties": {
            "anything": {},
            "described": {"description": "no type given"},
            "meta": {"type": "object", "properties": {}},
            "maybe": {"type": "string", "nullable": True, "description": None},
            "glob": {"type": "string", "pattern": "\\.py"},
            "item": {"$ref": "#/$defs/Item"},
        },
        "$defs": {"Item": {"type": "dict", "properties": {"n": {"type": "int"}}}},
    }
    fixed = normalize_arguments_schema(schema)
    anything = ["string", "number", "integer", "boolean", "object", "array", "null"]
    assert fixed["properties"] == {
        "anything": {"type": anything},
        "described": {"description": "no type given", "type": anything},
        "meta": {"type": "object"},  # any object, not only {}
        "maybe": {"type": ["string", "null"]},
        "glob": {"type": "string"},  # a search pattern cannot be a whole-string grammar
        "item": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    assert normalize_arguments_schema({}) == {"type": "object"}
    assert normalize_arguments_schema({"type": "object"}) == {"type": "object", "properties": {}}
    with pytest.raises(ValueError, match="not object"):
        normalize_arguments_schema({"type": "string"})
