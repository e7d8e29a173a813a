"""A model's `deployments`: what loads, what is refused (and how the message says to fix
it), and the pool the factory builds from them (each deployment's key, else the model's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from farmhand.config.deployments import DeploymentConfig
from farmhand.config.loader import load_config
from farmhand.config.models import ModelConfig
from farmhand.errors import ConfigError
from farmhand.providers.deployment_pool import CountingDeploymentPool, DeploymentPool
from farmhand.providers.factory import backend_urls, provider_for
from farmhand.providers.openai_compat import OpenAICompatProvider
from farmhand.providers.token_count import TokenCounter

A = "http://gpu-a:8080/v1"
B = "http://gpu-b:8080/v1"


def model(**fields: Any) -> ModelConfig:
    return ModelConfig.model_validate({"name": "m", "provider": "openai", "model": "q", **fields})


def test_a_deployment_forbids_unknown_keys_and_documents_every_field() -> None:
    assert DeploymentConfig.model_config.get("extra") == "forbid"
    assert all(field.description for field in DeploymentConfig.model_fields.values())


def test_deployments_load_with_weights_and_keys() -> None:
    m = model(
        api_key="model-key",
        deployments=[{"base_url": A}, {"base_url": B, "api_key": "own-key", "weight": 3}],
    )
    assert m.deployments == [
        DeploymentConfig(base_url=A),
        DeploymentConfig(base_url=B, api_key="own-key", weight=3),
    ]
    assert backend_urls(m) == [A, B]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"base_url": A, "deployments": [{"base_url": B}]},
            "give either base_url or deployments, not both: move base_url into the list",
        ),
        ({"deployments": []}, "deployments is empty: list at least one `{base_url:"),
        (
            {"deployments": [{"base_url": "gpu-a:8080"}]},
            "base_url 'gpu-a:8080' must start with http:// or https://",
        ),
        (
            {"deployments": [{"base_url": "http://[::1"}]},
            "base_url 'http://[::1' is not a valid URL",
        ),
        ({"deployments": [{"base_url": A, "weight": 0}]}, "greater than 0"),
        ({"deployments": [{"url": A}]}, "Extra inputs are not permitted"),
        (
            {"deployments": [{"base_url": A}, {"base_url": A + "/"}]},
            f"deployment '{A}/' is listed twice; list it once and give it a larger weight",
        ),
        (
            {"provider": "llamacpp", "model": None, "deployments": [{"base_url": A}]},
            "deployments are for providers openai, ollama, anthropic, universal; provider"
            " 'llamacpp' runs one model here",
        ),
    ],
)
def test_mistakes_say_what_to_fix(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        model(**fields)
    assert message in str(info.value)


def test_the_loader_points_at_the_deployment(tmp_path: Path) -> None:
    path = tmp_path / "farmhand.yaml"
    path.write_text(
        "runtime:\n  models:\n    - name: m\n      provider: openai\n      model: q\n"
        "      deployments:\n        - base_url: http://gpu-a:8080/v1\n"
        "        - base_url: ftp://gpu-b/v1\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "runtime.models[0].deployments[1].base_url" in message
    assert "must start with http:// or https://" in message
    assert "farmhand.yaml:8" in message


def test_the_factory_builds_a_pool_with_each_deployments_key_or_the_models() -> None:
    m = model(
        api_key="model-key",
        deployments=[{"base_url": A}, {"base_url": B, "api_key": "own-key", "weight": 2}],
    )
    pool = provider_for(m)
    assert isinstance(pool, DeploymentPool) and not isinstance(pool, TokenCounter)
    members = [d.provider for d in pool.deployments]
    assert all(isinstance(p, OpenAICompatProvider) for p in members)
    assert [p.base_url for p in members] == [A, B]
    assert [p.headers()["Authorization"] for p in members] == [
        "Bearer model-key",
        "Bearer own-key",
    ]
    assert [d.weight for d in pool.deployments] == [1, 2]


def test_an_anthropic_pool_counts_tokens_and_a_single_base_url_builds_no_pool() -> None:
    claude = ModelConfig(
        name="c",
        provider="anthropic",
        model="claude",
        deployments=[DeploymentConfig(base_url=A), DeploymentConfig(base_url=B)],
    )
    assert isinstance(provider_for(claude), CountingDeploymentPool)
    assert isinstance(provider_for(claude), TokenCounter)
    assert isinstance(provider_for(model(base_url=A)), OpenAICompatProvider)
