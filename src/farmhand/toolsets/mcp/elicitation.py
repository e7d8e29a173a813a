"""Questions for the user: what an MCP server asks mid-call (elicitation), and the approval
farmhand asks before a tool runs that a server's `require_approval` covers.

One shape for both, so every face answers them the same way: the terminal in `farmhand chat`
and `farmhand run` asks the person at it, the HTTP API pauses the loop and hands the question
to its client (runtime/questions.py), and where no one can answer, `refusing` says so.

An `Asker` gets a `Question` and returns an `Answer`: accept (with the form's content), decline
or cancel, the three actions of the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import jsonschema
from mcp import types

from farmhand.version import farmhand_version

QuestionKind = Literal["form", "url", "approval"]
"""form: fill in fields of a flat JSON schema; url: open a URL (the server's own page, e.g. a
sign-in); approval: may this tool call run."""
Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Question:
    """What is asked, by which server, during which tool call (when farmhand can tell)."""

    server: str
    message: str
    kind: QuestionKind = "form"
    schema: dict[str, Any] = field(default_factory=dict)
    """The requested schema of a form: an object whose properties are flat fields."""
    url: str | None = None
    """The page to open (kind "url")."""
    tool: str | None = None
    """The tool whose call asks, or whose approval is asked."""
    arguments: dict[str, Any] | None = None
    """The arguments of the call to approve (kind "approval")."""


@dataclass(frozen=True)
class Answer:
    """The user's answer. `reason` says why there was none from a person (shown, logged);
    `refused` marks the answer of `refusing`: there is no one who could answer."""

    action: Action
    content: dict[str, Any] | None = None
    reason: str = ""
    refused: bool = False

    @classmethod
    def accept(cls, content: dict[str, Any] | None = None) -> Answer:
        return cls("accept", content)

    @classmethod
    def decline(cls, reason: str = "") -> Answer:
        return cls("decline", reason=reason)

    @classmethod
    def cancel(cls, reason: str = "") -> Answer:
        return cls("cancel", reason=reason)


class Asker(Protocol):
    """Whoever answers questions: a terminal, an API client through a pause, or no one."""

    async def __call__(self, question: Question) -> Answer: ...


@dataclass(frozen=True)
class Refusal:
    """The asker where no one can answer: every question is refused, saying why."""

    why: str

    async def __call__(self, question: Question) -> Answer:
        return Answer("decline", reason=f"no one can answer: {self.why}", refused=True)


NO_ONE = Refusal(
    "this farmhand has no user to ask (no terminal, and no API client waiting for questions)"
)


def client_info() -> types.Implementation:
    """How farmhand introduces itself to MCP servers."""
    return types.Implementation(name="farmhand", title="farmhand", version=farmhand_version())


def question_for(server: str, params: types.ElicitRequestParams, tool: str | None) -> Question:
    """The question an `elicitation/create` request asks."""
    if isinstance(params, types.ElicitRequestURLParams):
        return Question(server, params.message, "url", url=params.url, tool=tool)
    schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
    return Question(server, params.message, "form", schema=dict(schema), tool=tool)


def with_defaults(schema: dict[str, Any], content: dict[str, Any] | None) -> dict[str, Any]:
    """The content with every field the schema gives a default for and the answer left out
    filled in (a form shows the defaults prefilled, SEP-1034)."""
    filled = dict(content or {})
    properties = schema.get("properties")
    for name, spec in (properties if isinstance(properties, dict) else {}).items():
        if name not in filled and isinstance(spec, dict) and "default" in spec:
            filled[name] = spec["default"]
    return filled


def answer_problem(question: Question, answer: Answer) -> str | None:
    """What is wrong with an accepted answer to a form (a missing or ill-typed field), or
    None when it fits the requested schema."""
    if answer.action != "accept" or question.kind != "form":
        return None
    content = with_defaults(question.schema, answer.content)
    try:
        validator = jsonschema.validators.validator_for(question.schema)(
            question.schema, format_checker=jsonschema.FormatChecker()
        )
        error = jsonschema.exceptions.best_match(validator.iter_errors(content))
    except (jsonschema.SchemaError, TypeError, ValueError) as exc:
        return f"the server's requested schema is not valid JSON Schema ({exc})"
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def elicit_result(question: Question, answer: Answer) -> types.ElicitResult | types.ErrorData:
    """The protocol's reply to a question: a refusal is an error naming why no one could
    answer; an accepted form carries its content with the defaults filled in."""
    if answer.refused:
        return types.ErrorData(code=types.INVALID_REQUEST, message=answer.reason)
    if answer.action != "accept" or question.kind != "form":
        return types.ElicitResult(action=answer.action)
    return types.ElicitResult(
        action="accept", content=with_defaults(question.schema, answer.content)
    )
