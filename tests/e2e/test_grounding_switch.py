"""`grounding:` in a model's config reaches the embedded provider it builds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from farmhand.config.models import ModelConfig
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.factory import provider_for
from farmhand.providers.llamacpp import DEFAULT_GROUND_FIRST, LlamaCppProvider, load_llama

pytestmark = [pytest.mark.e2e]


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    model = load_llama(ensure_model(DEFAULT_MODEL, progress=False))
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
    assert provider.ground_extra is grounding
    assert provider.ground_first == (DEFAULT_GROUND_FIRST if grounding else None)
