"""Pick the tool-call parser for a model: by name, from its chat template, or its model name.

Detection from the template follows llama.cpp's: each family's template has a marker only
it uses (its tool-call tokens), checked in an order where no earlier marker can be found
in a later family's template.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection

from farmhand.errors import ConfigError
from farmhand.parsing.base import FamilyParser, ParserOptions

# Slugs are llama.cpp's format names, so its test cases and docs map one to one.
FAMILIES: dict[str, str] = {
    "hermes_2_pro": "farmhand.parsing.hermes:HermesParser",
    "llama3_x": "farmhand.parsing.llama3:Llama3Parser",
    "llama3_x_builtin_tools": "farmhand.parsing.llama3:Llama3BuiltinToolsParser",
    "mistral_nemo": "farmhand.parsing.mistral:MistralNemoParser",
    "functionary_v3_1_llama3_1": "farmhand.parsing.functionary:FunctionaryV31Parser",
    "functionary_v3_2": "farmhand.parsing.functionary:FunctionaryV32Parser",
    "firefunction_v2": "farmhand.parsing.firefunction:FirefunctionV2Parser",
    "command_r7b": "farmhand.parsing.command_r:CommandR7BParser",
    "deepseek_r1": "farmhand.parsing.deepseek_r1:DeepSeekR1Parser",
    "generic": "farmhand.parsing.generic:GenericParser",
    "lfm2": "farmhand.parsing.lfm2:Lfm2Parser",
    "gemma4": "farmhand.parsing.gemma4:Gemma4Parser",
    "reka": "farmhand.parsing.reka:RekaParser",
    "magistral": "farmhand.parsing.mistral:MagistralParser",
    "command_r_plus": "farmhand.parsing.command_r:CommandRPlusParser",
    "minicpm": "farmhand.parsing.minicpm:MiniCpmParser",
    "granite": "farmhand.parsing.granite:Granite3Parser",
    "granite4": "farmhand.parsing.granite:Granite4Parser",
    "gigachat": "farmhand.parsing.gigachat:GigaChatParser",
    "apriel": "farmhand.parsing.apriel:AprielParser",
    "apertus": "farmhand.parsing.apertus:ApertusParser",
    "gemma": "farmhand.parsing.gemma:GemmaParser",
    "function_gemma": "farmhand.parsing.function_gemma:FunctionGemmaParser",
    "llama4_pythonic": "farmhand.parsing.llama4:Llama4Parser",
    "phi4_mini": "farmhand.parsing.phi4:Phi4MiniParser",
    "internlm": "farmhand.parsing.internlm:InternLmParser",
    "jamba": "farmhand.parsing.jamba:JambaParser",
    "ernie4_5": "farmhand.parsing.ernie:ErnieParser",
}

ALIASES: dict[str, str] = {
    "hermes": "hermes_2_pro",
    "hermes_3": "hermes_2_pro",
    "qwen": "hermes_2_pro",
    "qwen2.5": "hermes_2_pro",
    "llama3": "llama3_x",
    "llama3_builtin": "llama3_x_builtin_tools",
    "mistral": "mistral_nemo",
    "functionary_v3_1": "functionary_v3_1_llama3_1",
    "firefunction": "firefunction_v2",
    "command_r": "command_r7b",
    "deepseek": "deepseek_r1",
    "json": "generic",
    "ministral": "magistral",
    "devstral": "magistral",
    "mistral_small": "magistral",
    "llama4": "llama4_pythonic",
    "pythonic": "llama4_pythonic",
    "ernie": "ernie4_5",
    "phi4": "phi4_mini",
}

# (marker in the template, family), in the order they are checked.
_TEMPLATE_MARKERS: tuple[tuple[tuple[str, ...], str], ...] = (
    # Families whose tokens no earlier or later family's template has (issue 14, B's); first,
    # so that a `<tool_call>` or `[TOOL_CALLS]` they share does not decide for them.
    (("<|tool_call_start|>",), "lfm2"),
    (("<|tool_list_start|>",), "lfm2"),
    (("<|im_start|>", "List of tools: ["), "lfm2"),
    (("<|tool_call>call:",), "gemma4"),
    (("<start_function_call>",), "function_gemma"),
    (("<|header_start|>",), "llama4_pythonic"),
    (("<|tool|>", "<|/tool|>"), "phi4_mini"),
    (("<|action_start|>", "<|plugin|>"), "internlm"),
    (("<|bom|>", "<tool_calls>"), "jamba"),
    (("<|begin_of_sentence|>", "<tool_call>"), "ernie4_5"),
    (("<REKA_IMG_TOKEN>",), "reka"),
    (("[TOOL_CALLS]", "[ARGS]"), "magistral"),
    (("<|CHATBOT_TOKEN|>", "Action:\\n```json"), "command_r_plus"),
    (("<|CHATBOT_TOKEN|>", "Action:\n```json"), "command_r_plus"),
    (("<function name=", "<param name="), "minicpm"),
    (("<|start_of_role|>", "<|tool_call|>"), "granite"),
    (("<|start_of_role|>", "<tool_call>"), "granite4"),
    (("<|role_sep|>", "<|message_sep|>"), "gigachat"),
    (("[BEGIN FINAL RESPONSE]", "<tool_calls>"), "apriel"),
    (("<|tools_prefix|>",), "apertus"),
    (("<｜tool▁calls▁begin｜>",), "deepseek_r1"),
    (("<|END_THINKING|><|START_ACTION|>",), "command_r7b"),
    (("<|START_ACTION|>",), "command_r7b"),
    ((">>>all",), "functionary_v3_2"),
    ((" functools[",), "firefunction_v2"),
    (("<|start_header_id|>", "<function="), "functionary_v3_1_llama3_1"),
    (("<tool_call>",), "hermes_2_pro"),
    (("<|start_header_id|>ipython<|end_header_id|>", "<|python_tag|>"), "llama3_x_builtin_tools"),
    (("<|start_header_id|>ipython<|end_header_id|>",), "llama3_x"),
    (("[TOOL_CALLS]",), "mistral_nemo"),
    # Gemma 2 / 3 have no tool tokens: their turn header, once no family's tokens are there.
    (("<start_of_turn>model",), "gemma"),
)

# (substring of a lower-cased model name, family): for backends that give no template.
_NAME_HINTS: tuple[tuple[str, str], ...] = (
    # Issue 14 (B's families), before the older hints that would also match ("mistral").
    ("lfm2", "lfm2"),
    ("functiongemma", "function_gemma"),
    ("llama-4", "llama4_pythonic"),
    ("llama 4", "llama4_pythonic"),
    ("phi-4", "phi4_mini"),
    ("internlm", "internlm"),
    ("intern-s1", "internlm"),
    ("jamba", "jamba"),
    ("ernie", "ernie4_5"),
    ("phi4", "phi4_mini"),
    ("llama4", "llama4_pythonic"),
    ("function-gemma", "function_gemma"),
    ("gemma-4", "gemma4"),
    ("gemma 4", "gemma4"),
    ("gemma4", "gemma4"),
    ("reka", "reka"),
    ("magistral", "magistral"),
    ("ministral", "magistral"),
    ("devstral", "magistral"),
    ("mistral-small-3", "magistral"),
    ("mistral-small3", "magistral"),
    ("mistral small 3", "magistral"),
    ("mistral-medium-3", "magistral"),
    ("minicpm", "minicpm"),
    ("granite-4", "granite4"),
    ("granite 4", "granite4"),
    ("granite4", "granite4"),
    ("granite", "granite"),
    ("gigachat", "gigachat"),
    ("apriel", "apriel"),
    ("apertus", "apertus"),
    ("command-r-plus", "command_r_plus"),
    ("command-r+", "command_r_plus"),
    ("command-r-v01", "command_r_plus"),
    ("command-r-08-2024", "command_r_plus"),
    ("command-a", "command_r7b"),
    ("functionary", "functionary_v3_2"),
    ("firefunction", "firefunction_v2"),
    ("command-r", "command_r7b"),
    ("deepseek-r1", "deepseek_r1"),
    ("r1-distill", "deepseek_r1"),
    ("hermes", "hermes_2_pro"),
    ("qwen", "hermes_2_pro"),
    ("llama-3", "llama3_x"),
    ("llama3", "llama3_x"),
    ("mistral", "mistral_nemo"),
    ("nemo", "mistral_nemo"),
    ("gemma", "gemma"),
)


def family_names() -> list[str]:
    return list(FAMILIES)


def resolve_family(name: str) -> str:
    """The canonical slug for a family name or alias; ConfigError for an unknown one."""
    slug = name.strip().lower().replace("-", "_")
    slug = ALIASES.get(slug, slug)
    if slug not in FAMILIES:
        raise ConfigError(
            f"unknown tool parser {name!r}; use one of: {', '.join(FAMILIES)}"
            f" (or an alias: {', '.join(ALIASES)})"
        )
    return slug


def family_class(name: str) -> type[FamilyParser]:
    module_name, _, class_name = FAMILIES[resolve_family(name)].partition(":")
    cls: type[FamilyParser] = getattr(importlib.import_module(module_name), class_name)
    return cls


def detect_family(chat_template: str | None, model_name: str | None = None) -> str:
    """The family a chat template (else a model name) writes its tool calls in."""
    if chat_template:
        for markers, family in _TEMPLATE_MARKERS:
            if all(m in chat_template for m in markers):
                return family
    if model_name:
        lowered = model_name.lower()
        for hint, family in _NAME_HINTS:
            if hint in lowered:
                return family
    return "generic"


def prefill_of(family: str, prompt: str) -> str:
    """What the prompt already wrote of the reply: the text after the last assistant header
    (e.g. `<think>\\n` that opens reasoning, or `>>>` before a Functionary call). A parser
    is fed this first, so it reads the reply as the model continues it."""
    cls = family_class(family)
    best = -1
    for start in cls.assistant_start:
        index = prompt.rfind(start)
        if index >= 0:
            best = max(best, index + len(start))
    return prompt[best:] if best >= 0 else ""


def parser_for(
    chat_template: str | None,
    model_name: str | None,
    tool_names: Collection[str] | None,
    *,
    family: str | None = None,
    options: ParserOptions | None = None,
) -> FamilyParser:
    """A parser for one model turn. `family` (config `tool_parser:`) wins over detection."""
    slug = resolve_family(family) if family else detect_family(chat_template, model_name)
    return family_class(slug)(tool_names, options=options)
