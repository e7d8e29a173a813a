"""Calls in the wrong wrapper (issue 28): what the default Qwen2.5-Coder-1.5B writes when it
means a call, replayed from the issue, and what it writes when it does not mean one.

Read with the tools' schemas, as the embedded provider and the text-call rescue read them:
a call object naming an offered tool with arguments that fit its schema is a call, in
`<tools>`, a fence or bare; one that names no offered tool, echoes a definition, or stands
in code the model is showing, stays text. Every case gives the same result fed one
character at a time as whole.
"""

from __future__ import annotations

import pytest
from tests.parsing.helpers import message_of

from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.hermes import HermesParser
from farmhand.parsing.registry import parser_for

WEATHER = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["location"],
}
SCHEMAS = {"get_current_weather": WEATHER, "search:web": {"type": "object", "properties": {}}}
TOOLS = set(SCHEMAS)
RIGA = '{"name": "get_current_weather", "arguments": {"location": "Riga, LV", "unit": "celsius"}}'
HYDERABAD = (
    '{"name": "get_current_weather", "arguments": {"location": "Hyderabad, India",'
    ' "unit": "fahrenheit"}}'
)


def read(text: str) -> dict[str, object]:
    """The message, checked to be the same fed whole and one character at a time."""
    whole = message_of(HermesParser, text, known=TOOLS, tool_schemas=SCHEMAS)
    by_char = message_of(HermesParser, text, list(text), known=TOOLS, tool_schemas=SCHEMAS)
    assert by_char == whole
    return whole


def calls(message: dict[str, object]) -> list[tuple[str, object]]:
    return [(c["name"], c["arguments"]) for c in message["tool_calls"]]  # type: ignore[attr-defined, index]


# The issue's own examples.


def test_a_call_in_the_tools_tag_of_qwens_prompt_is_a_call() -> None:
    message = read(f"<tools>\n{RIGA}\n</tools>")
    assert calls(message) == [("get_current_weather", {"location": "Riga, LV", "unit": "celsius"})]
    assert message["content"] == ""


def test_a_fenced_json_call_after_a_sentence_is_a_call_and_the_sentence_text() -> None:
    sentence = (
        "To get the current weather in Hyderabad in Fahrenheit, you can use the following"
        " function call:\n\n"
    )
    message = read(f"{sentence}```json\n{HYDERABAD}\n```")
    assert message["content"] == sentence
    assert calls(message) == [
        ("get_current_weather", {"location": "Hyderabad, India", "unit": "fahrenheit"})
    ]


def test_a_bare_fence_around_the_call_is_a_call() -> None:
    message = read(f"```\n{HYDERABAD}\n```\n")
    assert [name for name, _ in calls(message)] == ["get_current_weather"]
    assert message["content"] == ""


def test_a_tool_definition_echoed_in_the_tools_tag_stays_text() -> None:
    echo = (
        '<tools>\n{"type": "function", "function": {"name": "get_current_weather",'
        ' "description": "Get the weather", "parameters": {"type": "object"}}}\n</tools>'
    )
    message = read(echo)
    assert calls(message) == []
    assert message["content"] == echo


@pytest.mark.parametrize(
    "echo",
    [
        '{"name": "get_current_weather", "description": "Get the weather", "parameters": {}}',
        '{"name": "get_current_weather", "parameters": {"type": "object", "properties":'
        ' {"location": {"type": "string"}}, "required": ["location"]}}',
    ],
)
def test_a_flat_definition_echoed_as_if_a_call_stays_text(echo: str) -> None:
    message = read(f"```json\n{echo}\n```")
    assert calls(message) == []
    assert echo in str(message["content"])


# Shown, not meant.


def test_a_fenced_example_naming_no_offered_tool_stays_text() -> None:
    example = '{"name": "book_flight", "arguments": {"to": "Oslo"}}'
    text = f"Such a call looks like:\n```json\n{example}\n```"
    message = read(text)
    assert calls(message) == []
    assert message["content"] == text


def test_a_call_object_inside_code_the_model_explains_stays_text() -> None:
    code = (
        "Call it from Python like this:\n```python\nclient.run("
        f"{RIGA})\n```\nThat sends the request."
    )
    message = read(code)
    assert calls(message) == []
    assert message["content"] == code


def test_after_the_code_block_closes_a_bare_call_is_a_call_again() -> None:
    text = f"```python\nx = {{}}\n```\n{RIGA}"
    message = read(text)
    assert [name for name, _ in calls(message)] == ["get_current_weather"]


def test_arguments_that_do_not_fit_the_schema_stay_text() -> None:
    # Made-up keys and no required location: an example, not this tool's call.
    text = '```json\n{"name": "get_current_weather", "arguments": {"city_code": 7}}\n```'
    message = read(text)
    assert calls(message) == []
    assert message["content"] == text


def test_an_extra_key_beside_the_schemas_own_still_fits() -> None:
    text = '{"name": "get_current_weather", "arguments": {"location": "Riga", "country": "LV"}}'
    assert calls(read(text)) == [("get_current_weather", {"location": "Riga", "country": "LV"})]


def test_in_a_call_tag_a_misfit_is_still_the_call_the_model_meant() -> None:
    text = (
        '<tool_call>\n{"name": "get_current_weather", "arguments": {"city_code": 7}}\n</tool_call>'
    )
    assert calls(read(text)) == [("get_current_weather", {"city_code": 7})]


# Parallel, cut off, unicode, markup inside strings.


def test_parallel_calls_in_one_tools_tag_each_in_its_own_wrapper() -> None:
    text = f"<tools>\n{RIGA}\n</tools>\n<tools>\n{HYDERABAD}\n</tools>"
    assert [args["location"] for _, args in calls(read(text))] == ["Riga, LV", "Hyderabad, India"]  # type: ignore[index]


@pytest.mark.parametrize("cut", [30, 50, len(RIGA) - 2])
def test_a_wrapped_call_cut_off_after_its_name_is_a_call_with_a_cut_off_error(cut: int) -> None:
    message = read(f"<tools>\n{RIGA[:cut]}")
    [call] = message["tool_calls"]  # type: ignore[misc]
    assert call["name"] == "get_current_weather"
    assert "cut off" in call["error"]


def test_output_cut_off_before_the_name_is_complete_stays_text() -> None:
    message = read('```json\n{"name": "get_cur')
    assert calls(message) == []
    assert message["content"] == '```json\n{"name": "get_cur'


def test_broken_json_after_an_offered_name_is_a_call_with_an_error() -> None:
    text = '```json\n{"name": "get_current_weather", "arguments": {"location": Riga}}\n```'
    [call] = read(text)["tool_calls"]  # type: ignore[misc]
    assert call["name"] == "get_current_weather" and "valid JSON" in call["error"]


def test_unicode_escapes_and_markup_inside_a_string_argument_are_kept() -> None:
    location = 'Zürich \\u00e9 \\"quoted\\" </tools> ```json {\\"name\\": 1}'
    call = f'{{"name": "get_current_weather", "arguments": {{"location": "{location}"}}}}'
    text = f"<tools>\n{call}\n</tools>"
    [(_, args)] = calls(read(text))
    assert args == {"location": 'Zürich é "quoted" </tools> ```json {"name": 1}'}


def test_no_call_is_text_as_written() -> None:
    text = "It is sunny in Riga today; no tool is needed for that."
    assert read(text) == {"content": text, "reasoning_content": "", "tool_calls": []}


def test_a_tool_offered_with_a_server_prefix_is_judged_by_its_own_schema() -> None:
    text = '```json\n{"name": "web", "arguments": {"q": "farmhand"}}\n```'
    assert calls(read(text)) == [("web", {"q": "farmhand"})]


def test_without_schemas_a_named_call_streams_as_before() -> None:
    # The older contract, for a caller that gives no schemas: announced at its name.
    parser = HermesParser({"get_current_weather"})
    first = parser.feed('```json\n{"name": "get_current_weather", "arguments": {"loc')
    assert any(getattr(e, "name", "") == "get_current_weather" for e in first)


def test_with_schemas_the_held_call_still_comes_as_a_name_then_its_arguments() -> None:
    parser = HermesParser(TOOLS, options=ParserOptions(tool_schemas=SCHEMAS))
    events = parser.feed(f"<tools>\n{RIGA}\n</tools>") + parser.finish()
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ToolCallDelta", "ToolCallDelta", "ToolCallEvent"]
    assert parser.shape == "<tools> tag"


# A model no family knows: the known shapes in turn.


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ('{"tool_call": {"name": "get_current_weather", "arguments": {"location": "Riga"}}}',
         "generic JSON envelope"),
        (f"<tool_call>\n{RIGA}\n</tool_call>", "<tool_call> tag"),
        (f"<tools>\n{RIGA}\n</tools>", "<tools> tag"),
        (f"Sure:\n```json\n{RIGA}\n```", "code fence"),
        (RIGA, "bare JSON"),
        ('[get_current_weather(location="Riga, LV", unit="celsius")]', "pythonic list"),
    ],
)  # fmt: skip
def test_known_shapes_reads_each_shape_and_says_which(text: str, shape: str) -> None:
    for pieces in ([text], list(text)):
        parser = parser_for(
            None, None, TOOLS, family="any", options=ParserOptions(tool_schemas=SCHEMAS)
        )
        events = [e for piece in pieces for e in parser.feed(piece)] + parser.finish()
        [call] = ParsedMessage.from_events(events).tool_calls
        assert call.name == "get_current_weather"
        assert parser.shape == shape  # type: ignore[attr-defined]


def test_known_shapes_leaves_text_and_unoffered_names_alone() -> None:
    text = 'I would call {"name": "book_flight", "arguments": {}} if I could.'
    parser = parser_for(None, None, TOOLS, family="known_shapes")
    message = ParsedMessage.from_events(parser.feed(text) + parser.finish())
    assert (message.content, message.tool_calls) == (text, [])


@pytest.mark.parametrize(
    "text",
    [
        '[book_flight(to="Oslo")]',  # names no offered tool
        'Like this: [get_current_weather(location="Riga")]',  # does not open the reply
        "[link](https://example.com)",  # Markdown, not a call
    ],
)
def test_known_shapes_takes_a_pythonic_list_only_opening_the_reply_with_an_offered_tool(
    text: str,
) -> None:
    for pieces in ([text], list(text)):
        parser = parser_for(None, None, TOOLS, family="known_shapes")
        events = [e for piece in pieces for e in parser.feed(piece)] + parser.finish()
        message = ParsedMessage.from_events(events)
        assert (message.content, message.tool_calls) == (text, [])
        assert parser.shape == ""  # type: ignore[attr-defined]
