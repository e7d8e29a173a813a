"""llama.cpp's own tool-call parser cases (tests/corpora/llamacpp, see its NOTICE)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from farmhand.messages import StreamEvent
from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.registry import FAMILIES, detect_family, parser_for

CORPORA = Path(__file__).parents[1] / "corpora"
CORPUS = CORPORA / "llamacpp"


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    raw: str
    partial: bool
    options: ParserOptions
    expected: dict[str, Any]
    generation_prompt: str = ""
    template: str = ""


def _options(raw: dict[str, Any]) -> ParserOptions:
    return ParserOptions(
        parse_tool_calls=raw.get("parse_tool_calls", True),
        reasoning_format=raw.get("reasoning_format", "none"),
        reasoning_in_content=raw.get("reasoning_in_content", False),
        thinking_forced_open=raw.get("thinking_forced_open", False),
        parallel_tool_calls=raw.get("parallel_tool_calls", True),
    )


@cache
def old_cases() -> list[Case]:
    """cases.jsonl rows whose format is one of farmhand's families."""
    cases = []
    for n, line in enumerate((CORPUS / "cases.jsonl").read_text().splitlines()):
        row = json.loads(line)
        if row["format"] not in FAMILIES:
            continue
        cases.append(
            Case(
                f"{n + 1}-{row['format']}",
                row["format"],
                row["raw"],
                row["is_partial"],
                _options(row["options"]),
                row["expected"],
            )
        )
    return cases


@cache
def autoparser_cases() -> list[Case]:
    """All autoparser_cases.jsonl rows, each with the family farmhand detects from the row's
    own template text (no per-row hints, so detection is tested too) and the row's tools."""
    cases = []
    for n, line in enumerate((CORPUS / "autoparser_cases.jsonl").read_text().splitlines()):
        row = json.loads(line)
        schemas = {t["name"]: t.get("parameters") or {} for t in row["tools"]}
        options = replace(
            _options(row["options"]),
            known_names=frozenset(schemas) if schemas else None,
            tool_schemas=schemas or None,
        )
        cases.append(
            Case(
                f"{n + 1}-{row['template'].removesuffix('.jinja')}",
                template_family(row["template"]),
                row["raw"],
                row["is_partial"],
                options,
                row["expected"],
                generation_prompt=row["generation_prompt"],
                template=row["template"],
            )
        )
    return cases


@cache
def template_family(template: str) -> str:
    """The family farmhand's detection picks from the template's text."""
    return detect_family(template_text(template))


def template_text(template: str) -> str:
    for folder in (CORPUS / "templates" / "autoparser", CORPUS / "templates"):
        if (folder / template).is_file():
            return (folder / template).read_text()
    raise FileNotFoundError(template)


def _prefill(family: str, generation_prompt: str, template: str | None = None) -> str:
    """What the parser is fed before the reply (see FamilyParser.prefill_of). A generation
    prompt without the family's header (Mistral, Firefunction, Command R here) is all reply."""
    cls = type(parser_for(template, None, None, family=family))
    if cls.reply_start(generation_prompt) is None:
        return cls.trimmed_prefill(generation_prompt)
    return cls.prefill_of(generation_prompt)


def parse(
    case: Case, *, chunk_size: int | None = None, derived_only: bool = False
) -> ParsedMessage:
    """Parse the row with its detected family; with `derived_only`, with the parser derived
    from its template whatever the family (the family modules switched off)."""
    family = "auto" if derived_only else case.family
    template = template_text(case.template) if case.template else None
    parser = parser_for(template, None, None, family=family, options=case.options)
    text = _prefill(family, case.generation_prompt, template) + case.raw
    events: list[StreamEvent] = []
    size = chunk_size or max(1, len(text))
    for start in range(0, len(text), size):
        events += parser.feed(text[start : start + size])
    if not case.partial:
        events += parser.finish()
    return ParsedMessage.from_events(events, partial=case.partial)


__all__ = ["Case", "autoparser_cases", "detect_family", "old_cases", "parse", "template_text"]
