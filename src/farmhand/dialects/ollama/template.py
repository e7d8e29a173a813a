"""Ollama's prompt templates: the small part of Go's text/template a `/api/generate`
`template` uses for one prompt.

Ollama renders a generate request's `template` with the fields `.System`, `.Prompt` and
`.Response` (empty: the model writes it); templates of single prompts use just these, with
`{{ if .X }} ... {{ else }} ... {{ end }}` around optional parts and `{{-` / `-}}` to trim
whitespace. That subset is rendered here; anything else (`range`, `.Messages`, `.Tools`,
functions) is refused with a message that says what is supported, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from farmhand.errors import RequestError

_ACTION = re.compile(r"\{\{(-\s)?\s*(.*?)\s*(\s-)?\}\}", re.DOTALL)
_FIELD = re.compile(r"\.(System|Prompt|Response|First)")
SUPPORTED = "{{ .System }}, {{ .Prompt }}, {{ .Response }}, {{ if .X }}/{{ else }}/{{ end }}"


@dataclass(frozen=True)
class TemplateLimits:
    """How far a request's template may go (`server.max_template_depth` and
    `server.max_template_chars`), checked before and while it renders, so a template of
    deep `{{ if }}`s or of a field repeated a million times is refused, not built."""

    depth: int = 32
    chars: int = 16 * 1024 * 1024


DEFAULT_LIMITS = TemplateLimits()


def render_go_template(
    template: str, values: Mapping[str, str | bool], limits: TemplateLimits = DEFAULT_LIMITS
) -> str:
    """`template` with `values` (keys System, Prompt, Response, First) filled in;
    RequestError (param `template`) naming the first construct it cannot render, or the
    limit it passes."""
    tokens = _tokens(template)
    _check_depth(tokens, limits.depth)
    out: list[str] = []
    _render(tokens, 0, values, _Output(out, limits.chars), top=True)
    return "".join(out)


def _tokens(template: str) -> list[tuple[str, str]]:
    """("text", text) and ("action", body) pieces, with the trim markers applied."""
    pieces: list[tuple[str, str]] = []
    at = 0
    trim_next = False
    for match in _ACTION.finditer(template):
        text = template[at : match.start()]
        if trim_next:
            text = text.lstrip()
        if match.group(1):
            text = text.rstrip()
        pieces.append(("text", text))
        pieces.append(("action", match.group(2)))
        trim_next = bool(match.group(3))
        at = match.end()
    tail = template[at:]
    pieces.append(("text", tail.lstrip() if trim_next else tail))
    return pieces


def _check_depth(tokens: list[tuple[str, str]], limit: int) -> None:
    depth = 0
    for kind, body in tokens:
        if kind != "action":
            continue
        if body.startswith("if "):
            depth += 1
            if depth > limit:
                raise RequestError(
                    f"template: {{{{ if }}}} blocks are nested more than {limit} deep"
                    " (server.max_template_depth); flatten the template",
                    param="template",
                )
        elif body == "end":
            depth -= 1


@dataclass
class _Output:
    """The rendered pieces, stopped at `limit` characters before they are joined."""

    pieces: list[str] | None
    limit: int
    size: int = 0

    def add(self, text: str) -> None:
        if self.pieces is None:
            return  # a branch not taken: read for its structure only
        self.size += len(text)
        if self.size > self.limit:
            raise RequestError(
                f"template: the prompt it renders would pass {self.limit} characters"
                " (server.max_template_chars); use each field once, or send raw: true with"
                " a prompt formatted yourself",
                param="template",
            )
        self.pieces.append(text)


def _render(
    tokens: list[tuple[str, str]],
    i: int,
    values: Mapping[str, str | bool],
    out: _Output,
    *,
    top: bool,
) -> int:
    """Render from tokens[i] to the `else`/`end` that closes the current block (or the
    end) into `out`; returns the index of that closing token."""
    while i < len(tokens):
        kind, body = tokens[i]
        if kind == "text":
            out.add(body)
            i += 1
            continue
        if body in ("else", "end"):
            if top:
                raise _unsupported(f"{{{{ {body} }}}} without an {{{{ if }}}}")
            return i
        if body.startswith("if "):
            truth = bool(values.get(_field(body[3:].strip()), ""))
            skip = _Output(None, out.limit)
            i = _render(tokens, i + 1, values, out if truth else skip, top=False)
            if tokens[i][1] == "else":
                i = _render(tokens, i + 1, values, skip if truth else out, top=False)
            if i >= len(tokens) or tokens[i][1] != "end":
                raise _unsupported("an {{ if }} without its {{ end }}")
            i += 1
            continue
        value = values.get(_field(body), "")
        out.add(value if isinstance(value, str) else "")
        i += 1
    if not top:
        raise _unsupported("an {{ if }} without its {{ end }}")
    return i


def _field(expression: str) -> str:
    match = _FIELD.fullmatch(expression)
    if match is None:
        raise _unsupported(f"{{{{ {expression} }}}}")
    return match.group(1)


def _unsupported(what: str) -> RequestError:
    return RequestError(
        f"template: {what} is not supported; farmhand renders {SUPPORTED}"
        " (send raw: true with a prompt you formatted yourself for anything else)",
        param="template",
    )
