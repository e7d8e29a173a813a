"""The Hermes parser on the shapes the default model writes: tagged, bare and fenced calls."""

from __future__ import annotations

import pytest
from tests.parsing.helpers import calls_of, events_of, message_of, splits, text_of

from farmhand.messages import StreamEvent, ToolCallDelta
from farmhand.parsing.hermes import HermesParser

TOOLS = {"filesystem:list_directory", "filesystem:read_file"}
CALL = '{"name": "filesystem:list_directory", "arguments": {"path": "/tmp/x"}}'


def parse(text: str, *, step: int = 1) -> list[StreamEvent]:
    return events_of(HermesParser, text, step=step, known=TOOLS)


@pytest.mark.parametrize("step", [1, 3, 1000])
def test_tagged_call_with_text_before(step: int) -> None:
    events = parse(f"Let me look.\n<tool_call>\n{CALL}\n</tool_call>", step=step)
    assert text_of(events) == "Let me look.\n"
    [call] = calls_of(events)
    assert (call.name, call.arguments, call.parse_error) == (
        "filesystem:list_directory",
        {"path": "/tmp/x"},
        None,
    )


def test_several_tagged_calls_in_one_turn() -> None:
    other = '{"name": "filesystem:read_file", "arguments": {"path": "/tmp/x/a"}}'
    events = parse(f"<tool_call>{CALL}</tool_call>\n<tool_call>{other}</tool_call>")
    assert [c.name for c in calls_of(events)] == [
        "filesystem:list_directory",
        "filesystem:read_file",
    ]
    assert text_of(events).strip() == ""


def test_unclosed_tag_at_end_of_output_is_still_a_call() -> None:
    [call] = calls_of(parse(f"<tool_call>\n{CALL}\n"))
    assert call.arguments == {"path": "/tmp/x"}


def test_broken_json_inside_tags_is_a_call_with_a_parse_error() -> None:
    events = parse('<tool_call>{"name": "filesystem:read_file", "arguments": {"path": </tool_call>')
    [call] = calls_of(events)
    assert call.name == "filesystem:read_file"
    assert call.parse_error is not None and "could not read the tool call" in call.parse_error
    assert text_of(events) == ""


@pytest.mark.parametrize("step", [1, 1000])
def test_a_fenced_call_of_an_offered_tool_with_an_expression_for_a_value_is_a_broken_call(
    step: int,
) -> None:
    # The default model wrote this for "a sine wave from 0 to 2 pi": its call was announced
    # by deltas, then turned into text, and the turn's answer came out empty.
    written = (
        '```json\n{"name": "filesystem:read_file", "arguments": {"path": "a", "size": 2 * Math.PI}}'
        "\n```"
    )
    events = parse(written, step=step)
    [call] = calls_of(events)
    assert call.name == "filesystem:read_file"
    assert call.parse_error is not None and "expected valid JSON" in call.parse_error
    assert "2 * Math.PI" in call.parse_error  # the model is shown what it wrote
    assert text_of(events) == ""


def test_arguments_given_as_a_json_string_are_decoded() -> None:
    body = '{"name": "filesystem:read_file", "arguments": "{\\"path\\": \\"a\\"}"}'
    [call] = calls_of(parse(f"<tool_call>{body}</tool_call>"))
    assert call.arguments == {"path": "a"}


@pytest.mark.parametrize("step", [1, 7])
def test_bare_json_reply_is_a_call(step: int) -> None:
    [call] = calls_of(parse(f"  {CALL}\n", step=step))
    assert call.name == "filesystem:list_directory"


def test_bare_json_naming_a_tool_without_its_server_prefix_is_a_call() -> None:
    [call] = calls_of(parse('{"name": "list_directory", "arguments": {"path": "."}}'))
    assert call.name == "list_directory"  # the loop resolves it to filesystem:list_directory


def test_fenced_json_reply_is_a_call() -> None:
    events = parse(f"```json\n{CALL}\n```")
    assert [c.name for c in calls_of(events)] == ["filesystem:list_directory"]
    assert text_of(events) == ""


@pytest.mark.parametrize("step", [1, 2, 7, 1000])
def test_one_fence_around_several_calls_closes_after_the_last(step: int) -> None:
    # What the default model writes for "the weather in Oslo and in Rome" at temperature 0.
    other = '{"name": "filesystem:read_file", "arguments": {"path": "/tmp/x/a"}}'
    for opener in ("```json\n", "```\n"):
        events = parse(f"{opener}{CALL}\n{other}\n```\n", step=step)
        assert [c.name for c in calls_of(events)] == [
            "filesystem:list_directory",
            "filesystem:read_file",
        ]
        assert text_of(events).strip() == ""
    tagged = f"```\n<tool_call>{CALL}</tool_call>\n<tool_call>{other}</tool_call>\n```"
    assert len(calls_of(parse(tagged, step=step))) == 2
    assert text_of(parse(tagged, step=step)).strip() == ""


def test_text_after_a_fence_of_calls_is_text() -> None:
    events = parse(f"```json\n{CALL}\n```\nListing now.")
    assert len(calls_of(events)) == 1
    assert text_of(events).strip() == "Listing now."
    events = parse(f"```json\n{CALL}\nListing now.")  # the fence never closed
    assert len(calls_of(events)) == 1
    assert text_of(events).strip() == "Listing now."


def test_fenced_call_after_prose_keeps_the_prose() -> None:
    events = parse(f"I will list it:\n```json\n{CALL}\n```\n")
    assert text_of(events) == "I will list it:\n"
    assert len(calls_of(events)) == 1


def test_a_known_call_inside_prose_is_a_call_and_the_prose_stays_text() -> None:
    # As llama.cpp reads Hermes output: `{"name": <a tool>, "arguments": ...}` is a call
    # wherever it stands; whitespace before it goes with it.
    events = parse(f"I will look: {CALL} and report.")
    assert [c.name for c in calls_of(events)] == ["filesystem:list_directory"]
    assert text_of(events) == "I will look:and report."


def test_json_inside_prose_that_is_not_a_call_stays_text() -> None:
    text = 'The file holds {"name": "Alice", "age": 30} and that is all.'
    events = parse(text)
    assert calls_of(events) == []
    assert text_of(events) == text


def test_bare_json_that_is_data_not_a_call_stays_text() -> None:
    data = '{"name": "Alice", "age": 30}'
    assert calls_of(parse(data)) == []
    assert text_of(parse(data)) == data


def test_bare_json_naming_an_unknown_tool_stays_text() -> None:
    text = '{"name": "delete_everything", "arguments": {}}'
    assert calls_of(parse(text)) == []
    assert text_of(parse(text)) == text


@pytest.mark.parametrize("step", [1, 5])
def test_a_tool_name_written_with_other_separators_is_read_as_the_offered_one(step: int) -> None:
    # Small models write math.roots.quadratic for math_roots.quadratic.
    parser = HermesParser(known_names=["math_roots.quadratic", "math.roots.cubic"])
    text = '```json\n{"name": "Math.Roots.Quadratic", "arguments": {"a": 5}}\n```'
    events = [e for i in range(0, len(text), step) for e in parser.feed(text[i : i + step])]
    events += parser.finish()
    [call] = calls_of(events)
    assert (call.name, call.arguments) == ("math_roots.quadratic", {"a": 5})
    # The streamed name is the offered one too.
    assert [e.name for e in events if isinstance(e, ToolCallDelta) and e.name] == [call.name]


def test_a_name_that_squashes_to_two_offered_tools_stays_text() -> None:
    parser = HermesParser(known_names=["get_user", "getUser"])
    text = '{"name": "get-user", "arguments": {}}'
    events = [*parser.feed(text), *parser.finish()]
    assert calls_of(events) == [] and text_of(events) == text


def test_fenced_code_that_is_not_a_call_stays_text_verbatim() -> None:
    text = "Example:\n```python\nprint({'name': 'x'})\n```\nDone."
    events = parse(text)
    assert calls_of(events) == []
    assert text_of(events) == text


def test_plain_text_streams_without_waiting_for_the_end() -> None:
    parser = HermesParser(TOOLS)
    # Trailing whitespace waits for the next piece: a bare call would take it.
    assert text_of(parser.feed("Hello there, ")) == "Hello there,"
    # "<tool" could still become <tool_call>: held back until it cannot.
    assert text_of(parser.feed("a <tool")) == " a"
    assert text_of(parser.feed("s> are fine")) == " <tools> are fine"
    assert parser.finish() == []


def test_text_that_looks_like_an_unfinished_tag_is_released_at_the_end() -> None:
    assert text_of(parse("compare a <tool_c")) == "compare a <tool_c"


def test_a_bare_call_is_emitted_as_soon_as_it_closes() -> None:
    parser = HermesParser(TOOLS)
    events = parser.feed(CALL + "\n" + CALL[:20])
    assert [c.name for c in calls_of(events)] == ["filesystem:list_directory"]
    # The second call was cut off by the token limit: dropped, not turned into text.
    assert parser.finish() == []


def test_text_after_a_run_of_bare_calls_is_text() -> None:
    events = parse(CALL + "\nDone listing.")
    assert len(calls_of(events)) == 1
    assert text_of(events).strip() == "Done listing."


def test_a_closing_tag_inside_a_json_string_is_part_of_the_value() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"a": "x</tool_call>y"}}</tool_call>Done'
    for pieces in splits(text, every=5):
        assert message_of(HermesParser, "", pieces) == {
            "content": "Done",
            "reasoning_content": "",
            "tool_calls": [{"name": "f", "arguments": {"a": "x</tool_call>y"}}],
        }
