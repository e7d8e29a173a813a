"""The terminal answers what MCP servers ask in `farmhand chat` and `farmhand run`.

A server's form is asked field by field (Enter keeps a default; `/decline` or `/cancel` at
any field refuses), a URL is shown to open, and an approval is a y/N question. Everything
goes to stderr, so `chat --json` keeps stdout to its JSON. When stdin is not a terminal, no
one is there to answer: the question is declined and the user told why.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio
from rich.console import Console
from rich.markup import escape

from farmhand.cli.form_fields import describe, field_problem, parse_field
from farmhand.toolsets.mcp.elicitation import Answer, Question, answer_problem

DECLINE, CANCEL = "/decline", "/cancel"


class _Refused(Exception):
    def __init__(self, answer: Answer) -> None:
        self.answer = answer


class TerminalAsker:
    """Asks the person at the terminal; one question at a time."""

    def __init__(
        self,
        console: Console,
        *,
        read_line: Callable[[], str] | None = None,
        interactive: bool | None = None,
    ) -> None:
        self.console = console
        self.read_line = read_line or (lambda: sys.stdin.readline())
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._one_at_a_time = anyio.Lock()

    async def __call__(self, question: Question) -> Answer:
        async with self._one_at_a_time:
            who = f"{question.server}" + (f" ({question.tool})" if question.tool else "")
            self.console.print(f"\n[bold yellow]?[/] [bold]{escape(who)}[/] asks:", end=" ")
            self.console.print(question.message, markup=False, highlight=False, soft_wrap=True)
            if not self.interactive:
                reason = "stdin is not a terminal, so no one can answer"
                self.console.print(f"[yellow]declined:[/] {reason}")
                return Answer.decline(reason)
            try:
                if question.kind == "approval":
                    return await self._approve()
                if question.kind == "url":
                    return await self._open_url(question)
                return await self._form(question)
            except _Refused as refused:
                return refused.answer

    async def _line(self, prompt: str) -> str:
        self.console.print(prompt, end="", markup=False, highlight=False, soft_wrap=True)
        # Abandoned if the question is withdrawn: the read must not hold the cancel up.
        line = await anyio.to_thread.run_sync(self.read_line, abandon_on_cancel=True)
        if not line:
            raise _Refused(Answer.cancel("the input ended"))
        text = line.strip()
        if text == DECLINE:
            raise _Refused(Answer.decline())
        if text == CANCEL:
            raise _Refused(Answer.cancel())
        return text

    async def _approve(self) -> Answer:
        reply = (await self._line("  Allow it? [y/N] ")).lower()
        return Answer.accept() if reply in ("y", "yes") else Answer.decline()

    async def _open_url(self, question: Question) -> Answer:
        self.console.print(f"  Open: {question.url}", markup=False, highlight=False, soft_wrap=True)
        reply = (await self._line("  Opened it and done? [y/N] ")).lower()
        return Answer.accept() if reply in ("y", "yes") else Answer.decline()

    async def _form(self, question: Question) -> Answer:
        schema = question.schema
        properties = schema.get("properties")
        fields: dict[str, Any] = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) else set()
        self.console.print(f"  [dim](Enter keeps a default; {DECLINE} or {CANCEL} refuses)[/]")
        while True:
            content: dict[str, Any] = {}
            for name, spec in fields.items():
                if isinstance(spec, dict):
                    value = await self._field(name, spec, name in needed)
                    if value is not None:
                        content[name] = value
            answer = Answer.accept(content)
            problem = answer_problem(question, answer)
            if problem is None:
                return answer
            self.console.print(f"  [red]{escape(problem)}[/]; once more:")

    async def _field(self, name: str, spec: dict[str, Any], required: bool) -> Any:
        """The field's value; None for an optional field left empty."""
        while True:
            text = await self._line(f"  {describe(name, spec, required)}: ")
            if not text:
                if "default" in spec:
                    return spec["default"]
                if not required:
                    return None
                self.console.print("  [red]this field is required[/]")
                continue
            try:
                value = parse_field(text, spec)
            except ValueError as exc:
                self.console.print(f"  [red]{escape(str(exc))}[/]")
                continue
            problem = field_problem(value, spec)
            if problem is None:
                return value
            self.console.print(f"  [red]{escape(problem)}[/]")
