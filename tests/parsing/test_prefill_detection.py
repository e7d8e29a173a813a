"""What the prompt already wrote of the reply (the prefill), and detecting a model's family
from its template or its name."""

from __future__ import annotations

import pytest
from tests.support.corpus import template_family, template_text

from farmhand.messages import ReasoningDelta, TextDelta
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.registry import detect_family, parser_for, prefill_of


def reply(family: str, prompt: str, output: str, **options: object) -> tuple[str, str]:
    """(reasoning, text) of `output`, the prompt's prefill fed first."""
    parser = parser_for(None, None, None, family=family, options=ParserOptions(**options))  # type: ignore[arg-type]
    events = parser.feed(prefill_of(family, prompt)) + parser.feed(output) + parser.finish()
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    return reasoning, "".join(e.text for e in events if isinstance(e, TextDelta))


def test_reasoning_opened_by_the_prompt_is_reasoning() -> None:
    prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert reply("qwen3_coder", prompt, "Plan.\n</think>\n\nHello") == ("Plan.", "Hello")


def test_an_unknown_header_keeps_a_prefilled_think() -> None:
    # A template this family does not know (no `<|im_start|>assistant`), ending with <think>.
    prompt = "### User: Hi\n### Assistant:\n<think>\n"
    assert prefill_of("qwen3_coder", prompt) == "<think>\n"
    assert reply("qwen3_coder", prompt, "Plan.</think>Hello") == ("Plan.", "Hello")
    # And nothing of a prompt that does not end by opening reasoning.
    assert prefill_of("qwen3_coder", "### User: <think>x</think> Hi\n### Assistant:") == ""


def test_a_non_thinking_prompt_ending_with_a_closing_tag_does_not_leak_it() -> None:
    for family, prompt in (
        ("deepseek_v3_1", "<｜User｜>Hi<｜Assistant｜></think>"),
        ("glm_4_5", "<|user|>Hi<|assistant|></think>"),
    ):
        assert prefill_of(family, prompt) == ""
        for reasoning_format in ("auto", "none"):
            assert reply(family, prompt, "Hello", reasoning_format=reasoning_format) == (
                "",
                "Hello",
            )


def test_reasoning_left_in_the_text_keeps_the_prompts_think() -> None:
    prompt = "<|im_start|>assistant\n<think>\n"
    assert reply("qwen3_coder", prompt, "Plan.</think>Hi", reasoning_format="none") == (
        "",
        "<think>\nPlan.</think>Hi",
    )


@pytest.mark.parametrize(
    ("template", "family"),
    [
        ("Qwen3.5-4B.jinja", "qwen3_coder"),
        ("Qwen3-Coder.jinja", "qwen3_coder"),
        ("StepFun3.5-Flash.jinja", "qwen3_coder"),
        ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "qwen3_coder"),
        ("ByteDance-Seed-OSS.jinja", "seed_oss"),
        ("GLM-4.6.jinja", "glm_4_5"),
        ("GLM-4.7-Flash.jinja", "glm_4_5"),
        ("MiniMax-M2.jinja", "minimax_m2"),
        ("Kimi-K2-Instruct.jinja", "kimi_k2"),
        ("Kimi-K2-Thinking.jinja", "kimi_k2"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", "deepseek_v3_1"),
        ("deepseek-ai-DeepSeek-V3.2.jinja", "deepseek_v3_2"),
        ("openai-gpt-oss-120b.jinja", "gpt_oss"),
        ("NVIDIA-Nemotron-Nano-v2.jinja", "nemotron_v2"),
        ("Qwen-QwQ-32B.jinja", "hermes_2_pro"),
        ("MiMo-VL.jinja", "hermes_2_pro"),
        ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek_r1"),
    ],
)
def test_detection_from_the_template(template: str, family: str) -> None:
    assert template_family(template) == family


def test_a_tool_call_tag_alone_does_not_make_glm_or_qwen3_coder_hermes() -> None:
    for template in ("GLM-4.7-Flash.jinja", "Qwen3-Coder.jinja"):
        text = template_text(template)
        assert "<tool_call>" in text
        assert detect_family(text) != "hermes_2_pro"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
        ("unsloth/Qwen3.5-4B-GGUF", "qwen3_coder"),
        ("openai/gpt-oss-20b", "gpt_oss"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek_v3_1"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek_v3_2"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek_r1"),
        ("zai-org/GLM-4.6", "glm_4_5"),
        ("moonshotai/Kimi-K2-Thinking", "kimi_k2"),
        ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
        ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed_oss"),
        ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron_v2"),
        ("allenai/Olmo-3-7B-Instruct", "olmo3"),
        ("Salesforce/xLAM-2-8b-fc-r", "xlam"),
        ("tencent/Hunyuan-A13B-Instruct", "hunyuan"),
        ("meituan-longcat/LongCat-Flash-Chat", "longcat"),
        ("Qwen/Qwen2.5-7B-Instruct", "hermes_2_pro"),
    ],
)
def test_detection_from_the_model_name(name: str, family: str) -> None:
    assert detect_family(None, name) == family
