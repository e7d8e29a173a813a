"""llama.cpp's own tool-call parser cases (../shared/corpora/llamacpp), read in place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from farmhand.messages import StreamEvent
from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.registry import FAMILIES, detect_family, family_class, parser_for

CORPUS = Path(__file__).parents[3] / "shared" / "corpora" / "llamacpp"


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    raw: str
    partial: bool
    options: ParserOptions
    expected: dict[str, Any]
    generation_prompt: str = ""


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
    """autoparser_cases.jsonl rows whose template is one of farmhand's families (detected
    from the template text itself, so detection is tested too)."""
    cases = []
    for n, line in enumerate((CORPUS / "autoparser_cases.jsonl").read_text().splitlines()):
        row = json.loads(line)
        family = template_family(row["template"])
        if family is None:
            continue
        cases.append(
            Case(
                f"{n + 1}-{row['template'].removesuffix('.jinja')}",
                family,
                row["raw"],
                row["is_partial"],
                _options(row["options"]),
                row["expected"],
                generation_prompt=row["generation_prompt"],
            )
        )
    return cases


# The templates of the families farmhand implements (the others in the corpus belong to
# formats outside issue 3's list: GLM, Kimi, MiniMax, gpt-oss, Granite, ...).
FAMILY_TEMPLATES = {
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "command_r7b",
    "llama-cpp-deepseek-r1.jinja": "deepseek_r1",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": "deepseek_r1",
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja": "deepseek_r1",
    "Qwen-QwQ-32B.jinja": "hermes_2_pro",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": "hermes_2_pro",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes_2_pro",
    "Qwen-Qwen2.5-7B-Instruct.jinja": "hermes_2_pro",
    "meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3_x_builtin_tools",
    "meta-llama-Llama-3.2-3B-Instruct.jinja": "llama3_x",
    "meta-llama-Llama-3.3-70B-Instruct.jinja": "llama3_x_builtin_tools",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": "mistral_nemo",
    "meetkai-functionary-medium-v3.1.jinja": "functionary_v3_1_llama3_1",
    "meetkai-functionary-medium-v3.2.jinja": "functionary_v3_2",
    "fireworks-ai-llama-3-firefunction-v2.jinja": "firefunction_v2",
}


def template_family(template: str) -> str | None:
    return FAMILY_TEMPLATES.get(template)


def template_text(template: str) -> str:
    for folder in (CORPUS / "templates" / "autoparser", CORPUS / "templates"):
        if (folder / template).is_file():
            return (folder / template).read_text()
    raise FileNotFoundError(template)


def _prefill(family: str, generation_prompt: str) -> str:
    """The part of the generation prompt after the assistant header; a prompt without one
    (Mistral, Firefunction, Command R here) is all reply."""
    starts = family_class(family).assistant_start
    found = [generation_prompt.rfind(s) + len(s) for s in starts if s in generation_prompt]
    return generation_prompt[max(found) :] if found else generation_prompt


def parse(case: Case, *, chunk_size: int | None = None) -> ParsedMessage:
    parser = parser_for(None, None, None, family=case.family, options=case.options)
    text = _prefill(case.family, case.generation_prompt) + case.raw
    events: list[StreamEvent] = []
    size = chunk_size or max(1, len(text))
    for start in range(0, len(text), size):
        events += parser.feed(text[start : start + size])
    if not case.partial:
        events += parser.finish()
    return ParsedMessage.from_events(events, partial=case.partial)


__all__ = ["Case", "autoparser_cases", "detect_family", "old_cases", "parse", "template_text"]
