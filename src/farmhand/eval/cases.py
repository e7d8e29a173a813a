"""What an eval suite is made of: cases, the calls they expect, and the suite itself
(read by `eval/suite.py` from JSONL, by `eval/bfcl.py` from BFCL's files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from farmhand.errors import ConfigError
from farmhand.messages import Message, ToolCall
from farmhand.tools.choice import AUTO, ToolChoice
from farmhand.tools.definition import ToolDefinition


@dataclass(frozen=True)
class ExpectedCall:
    """One call the turn must make. `arguments`: name -> acceptable values (None: may be
    left out)."""

    name: str
    arguments: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    allow_extra: bool = False


@dataclass(frozen=True)
class EvalCase:
    id: str
    category: str
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]
    expected: tuple[ExpectedCall, ...]  # empty: the turn must answer without calling
    answer_contains: tuple[str, ...] = ()
    tool_choice: ToolChoice = AUTO
    # Decides whether the calls are right, instead of matching `expected` (BFCL's checker);
    # returns None for right, else what is wrong.
    judge: Callable[[Sequence[ToolCall]], str | None] | None = field(default=None, compare=False)

    @property
    def expects_call(self) -> bool:
        return bool(self.expected)


@dataclass(frozen=True)
class Suite:
    name: str
    cases: tuple[EvalCase, ...]

    @property
    def categories(self) -> list[str]:
        return list(dict.fromkeys(case.category for case in self.cases))

    def select(self, categories: Sequence[str] = (), limit: int | None = None) -> Suite:
        """Only the cases of `categories` (all when empty), at most `limit` per category."""
        unknown = [c for c in categories if c not in self.categories]
        if unknown:
            raise ConfigError(
                f"suite {self.name} has no category {', '.join(map(repr, unknown))};"
                f" its categories: {', '.join(self.categories)}"
            )
        kept: list[EvalCase] = []
        counts: dict[str, int] = {}
        for case in self.cases:
            if categories and case.category not in categories:
                continue
            if limit is not None and counts.get(case.category, 0) >= limit:
                continue
            counts[case.category] = counts.get(case.category, 0) + 1
            kept.append(case)
        return Suite(self.name, tuple(kept))
