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

from farmhand.errors import RequestError

_ACTION = re.compile(r"\{\{(-\s)?\s*(.*?)\s*(\s-)?\}\}", re.DOTALL)
_FIELD = re.compile(r"\.(System|Prompt|Response|First)")
SUPPORTED = "{{ .System }}, {{ .Prompt }}, {{ .Response }}, {{ if .X }}/{{ else }}/{{ end }}"


def render_go_template(template: str, values: Mapping[str, str | bool]) -> str:
    """`template` with `values` (keys System, Prompt, Response, First) filled in;
    RequestError (param `template`) naming the first construct it cannot render."""
    tokens = _tokens(template)
    out, _ = _render(tokens, 0, values, top=True)
    return out


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


def _render(
    tokens: list[tuple[str, str]], i: int, values: Mapping[str, str | bool], *, top: bool
) -> tuple[str, int]:
    """Render from tokens[i] to the `else`/`end` that closes the current block (or the
    end); returns the text and the index of that closing token."""
    out: list[str] = []
    while i < len(tokens):
        kind, body = tokens[i]
        if kind == "text":
            out.append(body)
            i += 1
            continue
        if body in ("else", "end"):
            if top:
                raise _unsupported(f"{{{{ {body} }}}} without an {{{{ if }}}}")
            return "".join(out), i
        if body.startswith("if "):
            truth = bool(values.get(_field(body[3:].strip()), ""))
            then, i = _render(tokens, i + 1, values, top=False)
            other = ""
            if tokens[i][1] == "else":
                other, i = _render(tokens, i + 1, values, top=False)
            if i >= len(tokens) or tokens[i][1] != "end":
                raise _unsupported("an {{ if }} without its {{ end }}")
            out.append(then if truth else other)
            i += 1
            continue
        value = values.get(_field(body), "")
        out.append(value if isinstance(value, str) else "")
        i += 1
    if not top:
        raise _unsupported("an {{ if }} without its {{ end }}")
    return "".join(out), i


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
