"""`grounding:` in a model's config reaches the embedded provider it builds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from farmhand.config.models import ModelConfig
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL, lookup
from farmhand.providers.factory import provider_for
from farmhand.providers.llamacpp import DEFAULT_GATE, DEFAULT_GROUND_FIRST, LlamaCppProvider
from farmhand.providers.llamacpp.load import load_llama

pytestmark = [pytest.mark.e2e]


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    model = load_llama(ensure_model(DEFAULT_MODEL))
    yield model
    model.close()


@pytest.mark.parametrize("grounding", [True, False])
def test_the_config_switches_both_grounding_checks(llama: Any, grounding: bool) -> None:
    config = ModelConfig.model_validate(
        {"name": "m", "provider": "embedded", "grounding": grounding, "prefix_cache": False}
    )

    def loaded(path: Path, n_ctx: int) -> Any:
        return llama

    provider = provider_for(config, load=loaded)
    assert isinstance(provider, LlamaCppProvider)
    assert provider.profile.ground_extra is grounding
    assert provider.profile.ground_first == (DEFAULT_GROUND_FIRST if grounding else None)


def test_a_catalog_model_brings_its_measured_go_on_and_a_bare_gguf_does_not(llama: Any) -> None:
    def loaded(path: Path, n_ctx: int) -> Any:
        return llama

    by_name = provider_for(ModelConfig(name="m", model="qwen2.5-coder:1.5b"), load=loaded)
    by_path = provider_for(ModelConfig(name="m", model_path=llama.model_path), load=loaded)
    assert isinstance(by_name, LlamaCppProvider) and isinstance(by_path, LlamaCppProvider)
    assert by_name.profile.call_gate is not None and by_path.profile.call_gate is not None
    assert by_name.profile.call_gate.go_on == lookup("qwen2.5-coder:1.5b").gate_go_on == 0.8
    assert by_path.profile.call_gate.go_on is None
    # Everything else of the gate is the provider's default.
    assert (
        replace(by_name.profile.call_gate, go_on=None) == by_path.profile.call_gate == DEFAULT_GATE
    )
