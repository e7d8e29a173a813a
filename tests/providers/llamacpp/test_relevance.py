"""Whether a question and a tool share a topic word (providers/llamacpp/relevance.py)."""

from __future__ import annotations

import pytest

from farmhand.providers.llamacpp.relevance import question_words, tool_words
from farmhand.tools.definition import ToolDefinition

LIST_DIRECTORY = ToolDefinition(
    "list_directory",
    "Get a detailed listing of all files and directories in a specified path.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CURRENT_TIME = ToolDefinition(
    "getCurrentTime",
    "Current time in a timezone.",
    {"type": "object", "properties": {"timezone": {"description": "IANA name"}}},
)
QUADRATIC = ToolDefinition(
    "solve_quadratic_equation",
    "Solve a quadratic equation given its coefficients.",
    {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}},
)


def shares(question: str, tool: ToolDefinition) -> bool | None:
    topic = question_words(question)
    return None if topic is None else bool(topic & tool_words(tool))


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("List the files in the examples folder.", LIST_DIRECTORY),  # listing/list, files/file
        ("What time is it in Tokyo?", CURRENT_TIME),  # camelCase names are split
        ("Which timezone is Lima in?", CURRENT_TIME),
        ("What are the roots of the equation x^2 - 4 = 0?", QUADRATIC),
    ],
)
def test_a_question_on_the_tools_topic_shares_a_word(question: str, tool: ToolDefinition) -> None:
    assert shares(question, tool) is True


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("What is the perimeter of a rectangle with length 5 and width 4?", QUADRATIC),
        ("How many sides does a hexagon have?", LIST_DIRECTORY),
        # Words every tool uses ("find", "number") make no topic: only "planets" is one.
        ("Find the number of planets, please.", CURRENT_TIME),
    ],
)
def test_a_question_on_another_topic_shares_none(question: str, tool: ToolDefinition) -> None:
    assert shares(question, tool) is False


@pytest.mark.parametrize(
    "question",
    [
        "Quelle heure est-il à Tokyo ?",  # not English: never judged against English tools
        "Liste die Dateien im Ordner auf.",
        "List files.",  # no English marker word: not judged either
        "What is it?",  # English, but no topic word to judge by
        "Find and calculate the number I need, please.",
        "",
    ],
)
def test_questions_not_judged(question: str) -> None:
    assert question_words(question) is None


def test_odd_schemas_do_not_raise() -> None:
    odd = ToolDefinition("x", "", {"properties": ["not", "a", "mapping"]})
    assert tool_words(odd) == frozenset()
    odd = ToolDefinition("lookup_city", "", {"properties": {"name": "not a mapping"}})
    assert tool_words(odd) == {"lookup", "city", "name"}
