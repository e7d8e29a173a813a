"""Pick the tool-call parser for a model, from its chat template or its name."""

from __future__ import annotations

from collections.abc import Collection

from farmhand.parsing.base import ToolCallParser
from farmhand.parsing.hermes import HermesParser


def parser_for(
    chat_template: str | None, model_name: str | None, tool_names: Collection[str]
) -> ToolCallParser:
    """Hermes is the family the default model uses; more families join in later issues.

    Until then every template gets the Hermes parser, whose bare-JSON fallback also covers
    models that write plain `{"name": ..., "arguments": ...}`.
    """
    del chat_template, model_name
    return HermesParser(known_names=set(tool_names))
