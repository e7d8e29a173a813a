"""A model served by several backends: its `deployments`, each a base_url (and its own
api_key and weight), among which `providers/deployment_pool.py` routes the turns."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, field_validator

from farmhand.config.strict import Strict
from farmhand.config.urls import http_url

POOLED_PROVIDERS = ("openai", "ollama", "anthropic", "universal")
"""The providers a model may list deployments for: the ones behind an HTTP API."""


class DeploymentConfig(Strict):
    """One backend serving a model: a llama-server, vLLM or Ollama instance, or an API
    account."""

    base_url: str
    """Its endpoint, as a model's own base_url, e.g. http://gpu-1:8080/v1."""
    api_key: str | None = None
    """Its credential; the model's api_key when omitted (write it as ${env:VAR})."""
    weight: float = Field(default=1.0, gt=0, le=1000)
    """Its share of the traffic: a deployment of weight 2 is given twice the requests in
    flight of one of weight 1 before it counts as busier."""

    @field_validator("base_url")
    @classmethod
    def _backend_url(cls, value: str) -> str:
        return http_url(value)


def deployments_problem(
    provider: str, base_url: str | None, deployments: Sequence[DeploymentConfig] | None
) -> str | None:
    """What is wrong with a model's deployments, said so the user can fix it; None when
    nothing is."""
    if deployments is None:
        return None
    if provider not in POOLED_PROVIDERS:
        return (
            f"deployments are for providers {', '.join(POOLED_PROVIDERS)}; provider"
            f" {provider!r} runs one model here, so drop `deployments`"
        )
    if base_url is not None:
        return (
            "give either base_url or deployments, not both: move base_url into the list as"
            f" `deployments: [{{base_url: {base_url}}}, ...]`"
        )
    if not deployments:
        return (
            "deployments is empty: list at least one `{base_url: http://host:port/v1}`, or"
            " drop the key and set base_url"
        )
    seen: set[str] = set()
    for deployment in deployments:
        url = deployment.base_url.rstrip("/")
        if url in seen:
            return (
                f"deployment {deployment.base_url!r} is listed twice; list it once and give"
                " it a larger weight instead"
            )
        seen.add(url)
    return None
