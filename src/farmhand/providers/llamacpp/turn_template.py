"""How the embedded model's prompt is rendered from its chat template.

The template is the GGUF's own or the model's `chat_template` override; every render of a
turn (the prompt, its head for the prefix cache, a token count) goes through `render`, so
they agree. Besides the conversation and the tools, the template gets the request's
`chat_template_kwargs` and reasoning switch (`template_kwargs.render_variables`), and
`builtin_tools` where Llama 3.1's built-in tools are offered
(`prompting.template_tools.builtin_tools_of`). A template that renders no tools gets them
in the generic format instead (`generic_tools.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from farmhand.generation.template_kwargs import render_variables
from farmhand.messages import Message
from farmhand.parsing.registry import detect_family, resolve_family
from farmhand.prompting.template_tools import builtin_tools_of
from farmhand.prompting.templates import render_chat_template
from farmhand.providers.llamacpp.generic_tools import generic_family, generic_history, tools_block
from farmhand.providers.prompt_based import with_tools_block
from farmhand.tools.definition import ToolDefinition

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnTemplate:
    """A model's chat template, its special tokens, the family its calls are read in, and
    whether the tools go through the generic format (the template renders none)."""

    source: str
    bos: str
    eos: str
    family: str
    generic: bool = False

    @classmethod
    def of(
        cls, source: str, tokens: Mapping[str, str], *, model_name: str, tool_parser: str | None
    ) -> TurnTemplate:
        """The family from `tool_parser` (config) or detected from `source` (the override,
        when there is one); the generic format when `source` renders no tools, said once in
        the log as llama.cpp does."""
        detected = resolve_family(tool_parser) if tool_parser else detect_family(source, model_name)
        generic = generic_family(source, tool_parser)
        if generic is not None:
            log.info(
                "%s: its chat template renders no tools, so the generic format is in use:"
                " tools are described in the system prompt and calls read back as JSON"
                " (family %s)",
                model_name,
                generic,
            )
        return cls(
            source,
            tokens["bos"],
            tokens["eos"],
            family=generic or detected,
            generic=generic is not None,
        )

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        *,
        think: bool | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> str:
        variables = render_variables(kwargs, think=think)
        builtin = builtin_tools_of(self.source, tools)
        if builtin:
            variables["builtin_tools"] = builtin
        if self.generic:
            messages = generic_history(messages)
            if tools:
                messages = with_tools_block(messages, tools_block(tools))
        return render_chat_template(
            self.source, messages, tools, bos_token=self.bos, eos_token=self.eos, **variables
        )
