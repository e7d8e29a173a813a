"""A model's config entry becomes its `EmbeddedProfile` in one place (`profile_for`); the
defaults are the profile's own (tests/e2e/test_grounding_switch.py checks the same through
`provider_for` with the real model)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from farmhand.config.models import ModelConfig
from farmhand.models.catalog import lookup
from farmhand.providers.llamacpp import (
    DEFAULT_GATE,
    DEFAULT_GROUND_FIRST,
    DEFAULT_TEMPERATURE,
    EmbeddedProfile,
    profile_for,
)

BARE_GGUF = "/models/own.gguf"


def test_an_entry_that_sets_nothing_gets_the_defaults() -> None:
    assert profile_for(ModelConfig(name="m"), BARE_GGUF) == EmbeddedProfile()


def test_the_defaults_are_the_measured_levers() -> None:
    profile = EmbeddedProfile()
    assert profile.temperature == DEFAULT_TEMPERATURE
    assert profile.call_gate == DEFAULT_GATE
    assert profile.ground_first == DEFAULT_GROUND_FIRST
    levers = (profile.ground_extra, profile.ground_optional, profile.ground_topic)
    assert levers == (True, True, True)
    assert (profile.ground_siblings, profile.repair_calls) == (True, True)
    assert (profile.constrained, profile.retag_calls, profile.tool_rules) == (False, False, None)
    assert profile.answer_after_results is True


@pytest.mark.parametrize("grounding", [True, False])
def test_grounding_switches_every_grounding_lever_and_leaves_repair_on(grounding: bool) -> None:
    profile = profile_for(ModelConfig(name="m", grounding=grounding), BARE_GGUF)
    assert profile.ground_extra is grounding
    assert profile.ground_optional is grounding
    assert profile.ground_topic is grounding
    assert profile.ground_siblings is grounding
    assert profile.ground_first == (DEFAULT_GROUND_FIRST if grounding else None)
    assert profile.repair_calls is True


def test_the_entrys_sampling_and_format_settings_are_carried() -> None:
    entry = ModelConfig(name="m", temperature=0.0, constrained=True, tool_parser="llama3_x")
    profile = profile_for(entry, BARE_GGUF)
    assert (profile.temperature, profile.constrained, profile.tool_parser) == (
        0.0,
        True,
        "llama3_x",
    )


def test_a_catalog_model_brings_its_measured_go_on_and_a_bare_gguf_does_not() -> None:
    by_name = profile_for(ModelConfig(name="m"), "qwen2.5-coder:1.5b")
    by_path = profile_for(ModelConfig(name="m"), BARE_GGUF)
    assert by_name.call_gate is not None and by_path.call_gate is not None
    assert by_name.call_gate.go_on == lookup("qwen2.5-coder:1.5b").gate_go_on == 0.8
    assert by_path.call_gate == DEFAULT_GATE
    assert replace(by_name.call_gate, go_on=None) == DEFAULT_GATE


def test_a_profile_is_one_frozen_value() -> None:
    profile = EmbeddedProfile()
    with pytest.raises(AttributeError):
        profile.constrained = True  # type: ignore[misc]
    assert replace(profile, constrained=True).constrained is True
