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
from farmhand.parsing.derived.parser import derived_class

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
    # A model no family knows, without a template: generic's envelope, then the shapes
    # models write most (see parsing/known_shapes).
    "known_shapes": "farmhand.parsing.known_shapes:KnownShapesParser",
    "qwen3_coder": "farmhand.parsing.qwen3_coder:Qwen3CoderParser",
    "seed_oss": "farmhand.parsing.seed_oss:SeedOssParser",
    "gpt_oss": "farmhand.parsing.harmony:HarmonyParser",
    "glm_4_5": "farmhand.parsing.glm:Glm45Parser",
    "minimax_m2": "farmhand.parsing.minimax_m2:MiniMaxM2Parser",
    "deepseek_v3_2": "farmhand.parsing.dsml:DeepSeekV32Parser",
    "kimi_k2": "farmhand.parsing.kimi_k2:KimiK2Parser",
    "deepseek_v3_1": "farmhand.parsing.deepseek_r1:DeepSeekV31Parser",
    "nemotron_v2": "farmhand.parsing.nemotron_v2:NemotronV2Parser",
    "olmo3": "farmhand.parsing.olmo3:Olmo3Parser",
    "xlam": "farmhand.parsing.xlam:XlamParser",
    "hunyuan": "farmhand.parsing.hunyuan:HunyuanParser",
    "longcat": "farmhand.parsing.longcat:LongCatParser",
    # Derived from the model's own chat template (see parsing/derived); without a template,
    # or for a template whose shape it does not read, the generic parser.
    "auto": "farmhand.parsing.derived.parser:DerivedParser",
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
    # Issue 28: the families released in 2026, and older ones that fell to generic.
    "deepseek_v4": "farmhand.parsing.deepseek_v4:DeepSeekV4Parser",
    "qwen3_8": "farmhand.parsing.qwen3_coder:Qwen38Parser",
    "kimi_k3": "farmhand.parsing.kimi_k3:KimiK3Parser",
    "hy3": "farmhand.parsing.hy3:Hy3Parser",
    "step3": "farmhand.parsing.step3:Step3Parser",
    "minimax_m1": "farmhand.parsing.minimax_m1:MiniMaxM1Parser",
    "toolace": "farmhand.parsing.toolace:ToolAceParser",
    "granite_20b_fc": "farmhand.parsing.granite_fc:Granite20bFcParser",
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
    "any": "known_shapes",
    "unknown": "known_shapes",
    "qwen3_xml": "qwen3_coder",
    "qwen3.5": "qwen3_coder",
    "nemotron_3": "qwen3_coder",
    "step_3.5": "qwen3_coder",
    "seed": "seed_oss",
    "harmony": "gpt_oss",
    "glm": "glm_4_5",
    "glm_4.5": "glm_4_5",
    "glm_4.6": "glm_4_5",
    "glm_4.7": "glm_4_5",
    "minimax": "minimax_m2",
    "dsml": "deepseek_v3_2",
    "deepseek_v3.2": "deepseek_v3_2",
    "kimi": "kimi_k2",
    "kimi_k2_thinking": "kimi_k2",
    "deepseek_v3": "deepseek_v3_1",
    "deepseek_v3.1": "deepseek_v3_1",
    "nemotron": "nemotron_v2",
    "olmo": "olmo3",
    "olmo_3": "olmo3",
    "hunyuan_a13b": "hunyuan",
    "longcat_flash": "longcat",
    "ministral": "magistral",
    "devstral": "magistral",
    "mistral_small": "magistral",
    "llama4": "llama4_pythonic",
    "pythonic": "llama4_pythonic",
    "ernie": "ernie4_5",
    "phi4": "phi4_mini",
    "deepseek_v4.1": "deepseek_v4",
    "deepseek_v4_1": "deepseek_v4",
    "kimi_k3_thinking": "kimi_k3",
    "hy_v3": "hy3",
    "hunyuan_v3": "hy3",
    "step_3": "step3",
    "qwen3.8": "qwen3_8",
    "granite_20b_functioncalling": "granite_20b_fc",
}

# (marker in the template, family), in the order they are checked.
_TEMPLATE_MARKERS: tuple[tuple[tuple[str, ...], str], ...] = (
    # Families whose tokens no earlier or later family's template has (issue 14, B's); first,
    # so that a `<tool_call>` or `[TOOL_CALLS]` they share does not decide for them.
    (("<|tool_call_start|>",), "lfm2"),
    # Issue 28's families, whose tokens no other template has.
    (("<|open|>", "<|sep|>"), "kimi_k3"),
    (("<steptml:invoke",), "step3"),
    (("<tool_sep>", "<arg_key>"), "hy3"),
    (("<beginning_of_sentence>", "<tool_calls>"), "minimax_m1"),
    (("｜DSML｜tool_calls",), "deepseek_v4"),
    # granite-20b-functioncalling's tool list and call/result tags (vLLM's example template,
    # after the model card); ToolACE's and xLAM's system prompts, which tell the model the
    # shape to write (their templates are Llama 3.1's or Qwen's, whose markers follow).
    (("<|function_call_library|>",), "granite_20b_fc"),
    (("<function_call>", "<function_response>"), "granite_20b_fc"),
    (("[func_name1(params_name1=params_value1",), "toolace"),
    (("make calls in a single JSON array",), "xlam"),
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
    (("<seed:tool_call>",), "seed_oss"),
    (("<tool_call>", "<function=", "<parameter="), "qwen3_coder"),
    (("<|channel|>", "<|message|>"), "gpt_oss"),
    (("｜DSML｜",), "deepseek_v3_2"),
    (("<minimax:tool_call>",), "minimax_m2"),
    (("<arg_key>", "<arg_value>"), "glm_4_5"),
    (("<|tool_calls_section_begin|>",), "kimi_k2"),
    (("<TOOLCALL>",), "nemotron_v2"),
    (("<function_calls>", "<|im_start|>"), "olmo3"),
    (("<tool_calls>", "<|extra_0|>"), "hunyuan"),
    (("<longcat_tool_call>",), "longcat"),
    # V3.1 writes the name before the separator (R1: `function<｜tool▁sep｜>` + name).
    (("<｜tool▁calls▁begin｜>", "['name'] + '<｜tool▁sep｜>'"), "deepseek_v3_1"),
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
    # Issue 28's families, before the older hints that would also match ("qwen", "granite").
    ("deepseek-v4", "deepseek_v4"),
    ("kimi-k3", "kimi_k3"),
    ("qwen3.8", "qwen3_8"),
    ("hy3", "hy3"),
    ("minimax-m1", "minimax_m1"),
    ("toolace", "toolace"),
    ("granite-20b-functioncalling", "granite_20b_fc"),
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
    ("seed-oss", "seed_oss"),
    ("qwen3-coder", "qwen3_coder"),
    ("qwen3.5", "qwen3_coder"),
    ("nemotron-3", "qwen3_coder"),
    ("nemotron-nano-9b-v2", "nemotron_v2"),
    ("nemotron-nano-12b-v2", "nemotron_v2"),
    ("step-3.5", "qwen3_coder"),
    ("step3.5", "qwen3_coder"),
    ("step3", "step3"),
    ("step-3", "step3"),
    ("gpt-oss", "gpt_oss"),
    ("deepseek-v3.2", "deepseek_v3_2"),
    ("deepseek-v3", "deepseek_v3_1"),
    ("glm-4", "glm_4_5"),
    ("minimax-m2", "minimax_m2"),
    ("kimi-k2", "kimi_k2"),
    ("qwq", "hermes_2_pro"),
    ("olmo-3", "olmo3"),
    ("olmo3", "olmo3"),
    ("xlam", "xlam"),
    ("hunyuan", "hunyuan"),
    ("longcat", "longcat"),
    ("hermes", "hermes_2_pro"),
    ("qwen", "hermes_2_pro"),
    ("llama-3", "llama3_x"),
    ("llama3", "llama3_x"),
    ("mistral", "mistral_nemo"),
    ("nemo", "mistral_nemo"),
    ("gemma", "gemma"),
)


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


# (family of a template, family of a model name) where the name's is the same format read
# further: Qwen3.8's template is Qwen3.5's, but the model also writes its calls in <think>.
_REFINED_BY_NAME = {("qwen3_coder", "qwen3_8")}


def detect_family(chat_template: str | None, model_name: str | None = None) -> str:
    """The family a chat template (else a model name) writes its tool calls in."""
    named = _family_of_name(model_name) if model_name else None
    if chat_template:
        for markers, family in _TEMPLATE_MARKERS:
            if all(m in chat_template for m in markers):
                return named if (family, named) in _REFINED_BY_NAME and named else family
    if chat_template and derived_class(chat_template) is not None:
        return "auto"  # no family module knows the template: read what it writes
    return named or "generic"


def _family_of_name(model_name: str) -> str | None:
    lowered = model_name.lower()
    return next((family for hint, family in _NAME_HINTS if hint in lowered), None)


def prefill_of(family: str, prompt: str, chat_template: str | None = None) -> str:
    """What the prompt already wrote of the reply (see FamilyParser.prefill_of): a parser
    is fed this first, so it reads the reply as the model continues it."""
    return _parser_class(family, chat_template).prefill_of(prompt)


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
    return _parser_class(slug, chat_template)(tool_names, options=options)


def _parser_class(family: str, chat_template: str | None) -> type[FamilyParser]:
    """The family's class; for `auto`, the one derived from the template."""
    if resolve_family(family) == "auto":
        derived = derived_class(chat_template) if chat_template else None
        return derived or family_class("generic")
    return family_class(family)
