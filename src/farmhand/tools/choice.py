"""Which tools the model may or must call in a turn, in no API's wire shape.

Every dialect translates its own spelling into a ToolChoice (OpenAI's "required" and
Anthropic's "any" are the same `REQUIRED`); providers translate it back into what their
backend understands (a grammar, a backend's tool_choice, leaving the tools out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from farmhand.errors import ConfigError

ToolChoiceMode = Literal["auto", "none", "required", "tool"]


@dataclass(frozen=True)
class ToolChoice:
    """`auto`: the model decides; `none`: no calls; `required`: at least one call;
    `tool`: a call of the tool `name`."""

    mode: ToolChoiceMode = "auto"
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.mode == "tool") != bool(self.name):
            raise ValueError("a ToolChoice names a tool exactly when its mode is 'tool'")

    @classmethod
    def tool(cls, name: str) -> ToolChoice:
        return cls("tool", name)

    @classmethod
    def parse(cls, value: str, what: str = "tool_choice") -> ToolChoice:
        """`auto`, `none`, `required`, or a tool's name (which the model must then call), as
        a user writes it (`what`: where, for the error)."""
        value = value.strip()
        if value in ("auto", "none", "required"):
            return cls(cast(ToolChoiceMode, value))
        if not value:
            raise ConfigError(f"{what} needs auto, none, required or a tool name")
        return cls.tool(value)

    def __str__(self) -> str:
        return f"tool {self.name!r}" if self.name else self.mode


AUTO = ToolChoice("auto")
NONE = ToolChoice("none")
REQUIRED = ToolChoice("required")
