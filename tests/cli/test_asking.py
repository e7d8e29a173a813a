"""The terminal asker, with typed lines scripted: every kind of question and every way out."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from farmhand.cli.asking import TerminalAsker
from farmhand.cli.form_fields import parse_field
from farmhand.toolsets.mcp.elicitation import Answer, Question

pytestmark = pytest.mark.anyio

FORM = Question(
    "shop",
    "Your order?",
    schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "count": {"type": "integer", "minimum": 1, "default": 1},
            "size": {"type": "string", "enum": ["S", "M", "L"]},
            "extras": {"type": "array", "items": {"enum": ["cheese", "ham", "egg"]}},
            "gift": {"type": "boolean"},
        },
        "required": ["name"],
    },
    tool="order",
)


async def ask(question: Question, *lines: str, interactive: bool = True) -> tuple[Answer, str]:
    typed = iter([*(f"{line}\n" for line in lines), ""])  # then end of input
    out = io.StringIO()
    asker = TerminalAsker(
        Console(file=out, width=300), read_line=lambda: next(typed), interactive=interactive
    )
    return await asker(question), out.getvalue()


async def test_a_form_is_filled_field_by_field_with_mistakes_asked_again() -> None:
    answer, shown = await ask(FORM, "Ada", "zero", "0", "", "2", "1, egg", "maybe", "y")
    assert answer == Answer.accept(
        {"name": "Ada", "count": 1, "size": "M", "extras": ["cheese", "egg"], "gift": True}
    )
    assert "shop (order) asks: Your order?" in shown
    assert "type a whole number" in shown
    assert "0 is less than the minimum of 1" in shown
    assert "answer y or n" in shown


async def test_optional_fields_may_stay_empty() -> None:
    answer, _ = await ask(FORM, "Ada", "", "", "", "")
    assert answer == Answer.accept({"name": "Ada", "count": 1})


@pytest.mark.parametrize(
    ("lines", "action"),
    [(("/decline",), "decline"), (("Ada", "/cancel"), "cancel"), ((), "cancel")],
)
async def test_decline_cancel_and_the_end_of_input(lines: tuple[str, ...], action: str) -> None:
    answer, _ = await ask(FORM, *lines)
    assert answer.action == action and answer.content is None


async def test_an_approval_is_yes_or_no_and_no_by_default() -> None:
    approval = Question("fs", "Run fs:delete with {}?", "approval", tool="delete")
    assert (await ask(approval, "y"))[0] == Answer.accept()
    assert (await ask(approval, ""))[0] == Answer.decline()


async def test_a_url_is_shown_to_open() -> None:
    sign_in = Question("auth", "Sign in", "url", url="https://auth.test/go")
    answer, shown = await ask(sign_in, "yes")
    assert answer == Answer.accept()
    assert "Open: https://auth.test/go" in shown


async def test_without_a_terminal_the_question_is_declined_saying_why() -> None:
    answer, shown = await ask(FORM, "Ada", interactive=False)
    assert answer.action == "decline" and not answer.refused
    assert "declined: stdin is not a terminal, so no one can answer" in shown


@pytest.mark.parametrize(
    ("text", "spec", "value"),
    [
        ("3.5", {"type": "number"}, 3.5),
        ("3", {"type": "number"}, 3),
        ("no", {"type": "boolean"}, False),
        ("Dogs", {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]}, "p2"),
        ("2", {"type": "string", "oneOf": [{"const": "a"}, {"const": "b", "title": "B"}]}, "b"),
        ("B", {"type": "string", "oneOf": [{"const": "a"}, {"const": "b", "title": "B"}]}, "b"),
        ("free text", {"type": "string"}, "free text"),
    ],
)
def test_field_text_becomes_the_schemas_value(text: str, spec: dict[str, Any], value: Any) -> None:
    assert parse_field(text, spec) == value


def test_a_value_that_is_no_choice_says_which_are() -> None:
    with pytest.raises(ValueError, match="'XL' is not one of: S, M, L"):
        parse_field("XL", {"type": "string", "enum": ["S", "M", "L"]})
