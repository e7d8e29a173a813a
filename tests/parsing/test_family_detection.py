"""Family detection (`parsing.registry.detect_family`) of Gemma 4, LFM2, Reka, Magistral,
Mistral Nemo, Command R7B / R+, MiniCPM and Granite 3 / 4: from each one's chat template in the
corpus, from the model's name when no template is given, and the template winning over the
name; a `<tool_call>` tag alone does not mean Hermes. (The issue-28 families' detection is in
`test_families_2026.py`.)"""

from __future__ import annotations

import pytest
from tests.support.corpus import template_family

from farmhand.parsing.registry import detect_family

TEMPLATES = {
    "google-gemma-4-31B-it.jinja": "gemma4",
    "LFM2-8B-A1B.jinja": "lfm2",
    "LFM2.5-8B-A1B.jinja": "lfm2",
    "LFM2.5-Instruct.jinja": "lfm2",
    "Reka-Edge.jinja": "reka",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": "magistral",
    "mistralai-Ministral-3-14B-Reasoning-2512.jinja": "magistral",
    "unsloth-mistral-Devstral-Small-2507.jinja": "magistral",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": "mistral_nemo",
    "Cohere2MoE.jinja": "command_r7b",
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja": "command_r_plus",
    "openbmb-MiniCPM5-1B.jinja": "minicpm",
    "ibm-granite-granite-3.3-2B-Instruct.jinja": "granite",
    "ibm-granite-granite-4.0.jinja": "granite4",
    "ibm-granite-granite-4.1.jinja": "granite4",
}


@pytest.mark.parametrize(("template", "family"), TEMPLATES.items())
def test_family_from_template(template: str, family: str) -> None:
    assert template_family(template) == family


NAMES = {
    "google/gemma-4-31b-it": "gemma4",
    "LiquidAI/LFM2-1.2B-Tool": "lfm2",
    "lfm2.5-8b-a1b": "lfm2",
    "reka-flash-3": "reka",
    "mistralai/Ministral-3-14B-Reasoning-2512": "magistral",
    "unsloth/Devstral-Small-2507-GGUF": "magistral",
    "magistral-small-2509": "magistral",
    "Mistral-Small-3.2-24B-Instruct-2506": "magistral",
    "mistral-small3.2:24b": "magistral",
    "Gemma 4 31B It": "gemma4",
    "Granite 4.0 H Tiny": "granite4",
    "mistral-nemo-instruct-2407": "mistral_nemo",
    "CohereForAI/c4ai-command-r-plus": "command_r_plus",
    "CohereLabs/command-a-reasoning-08-2025": "command_r7b",
    "CohereForAI/c4ai-command-r-v01": "command_r_plus",
    "command-r7b:7b": "command_r7b",
    "openbmb/MiniCPM5-1B": "minicpm",
    "ibm-granite/granite-3.3-2b-instruct": "granite",
    "granite-4.0-h-tiny": "granite4",
}


@pytest.mark.parametrize(("name", "family"), NAMES.items())
def test_family_from_model_name(name: str, family: str) -> None:
    assert detect_family(None, name) == family


def test_the_template_wins_over_the_name() -> None:
    assert detect_family("... <|tool_call>call:{{name}} ...", "granite-4.0") == "gemma4"
