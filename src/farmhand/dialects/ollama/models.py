"""Ollama's model endpoints in its own shapes: `/api/tags`, `/api/show`, `/api/ps`,
`/api/embed` and `/api/embeddings`, `/api/pull`. The facts come from `service/models.py`;
this module only reads bodies and writes Ollama's fields.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from pydantic import Field

from farmhand.dialects.ollama.common import OllamaBody, Options, keep_alive_seconds
from farmhand.errors import RequestError
from farmhand.service.models import ModelFacts, RunningModel
from farmhand.service.pull import PullStep
from farmhand.service.tasks import iso_time

if TYPE_CHECKING:
    from farmhand.service.models import DeploymentState

# How Ollama writes "kept loaded for ever" (its largest duration from now): far future.
FOREVER = "2318-01-01T00:00:00Z"


class _Named(OllamaBody):
    model: str = ""
    name: str = ""  # the field's name before Ollama 0.2; clients still send it

    def model_name(self) -> str:
        name = self.model or self.name
        if not name:
            raise RequestError("model is required; GET /api/tags lists the models", param="model")
        return name


class ShowBody(_Named):
    verbose: bool = False


class PullBody(_Named):
    stream: bool = True
    insecure: bool = False


class EmbedBody(_Named):
    input: str | list[str] = Field(default_factory=list)
    truncate: bool = True
    dimensions: int | None = Field(default=None, ge=1)
    options: Options | None = None
    keep_alive: Any = None

    def texts(self) -> list[str]:
        texts = [self.input] if isinstance(self.input, str) else list(self.input)
        if not texts:
            raise RequestError("input must be a string or a list of strings", param="input")
        keep_alive_seconds(self.keep_alive)
        return texts


class EmbeddingsBody(_Named):
    """The legacy `/api/embeddings`: one `prompt`, one vector, not normalised."""

    prompt: str = ""
    options: Options | None = None
    keep_alive: Any = None


def details(facts: ModelFacts) -> dict[str, Any]:
    return {
        "parent_model": facts.config.model or "",
        "format": facts.format,
        "family": facts.family,
        "families": [facts.family] if facts.family else None,
        "parameter_size": facts.parameter_size,
        "quantization_level": facts.quantization,
    }


def tag(facts: ModelFacts) -> dict[str, Any]:
    """One model of `/api/tags`."""
    return {
        "name": facts.name,
        "model": facts.name,
        "modified_at": iso_time(facts.modified),
        "size": facts.size,
        "digest": facts.digest,
        "details": details(facts),
    }


def show(facts: ModelFacts, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """`/api/show` of a model; `metadata` the GGUF's key/values to report (all arrays with
    `verbose`), else the cached header's."""
    return {
        "license": _license(facts),
        "modelfile": _modelfile(facts),
        "parameters": parameters_text(facts.parameters),
        "template": facts.template,
        "details": details(facts),
        "model_info": model_info(facts, metadata),
        "capabilities": list(facts.capabilities),
        "modified_at": iso_time(facts.modified),
    }


def model_info(facts: ModelFacts, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    if facts.gguf is None:
        info: dict[str, Any] = {"general.architecture": facts.family}
        if facts.config.model:
            info["general.basename"] = facts.config.model
        return info
    info = dict(metadata if metadata is not None else facts.gguf.metadata)
    info.pop("tokenizer.chat_template", None)  # it is `template`
    info["general.parameter_count"] = facts.gguf.parameter_count
    return {key: _json_safe(value) for key, value in info.items()}


def parameters_text(parameters: dict[str, Any]) -> str:
    """Ollama's `parameters`: one `name value` line each, strings quoted."""
    lines = []
    for key, value in parameters.items():
        for item in value if isinstance(value, list) else [value]:
            shown = f'"{item}"' if isinstance(item, str) else item
            lines.append(f"{key:<30} {shown}")
    return "\n".join(lines)


def running(model: RunningModel) -> dict[str, Any]:
    """One model of `/api/ps`: farmhand runs on the CPU, so nothing is in VRAM. `size` is
    the memory it was estimated to take loaded (weights, KV cache, buffers), as Ollama's
    is; `farmhand` says what its engine is doing (slots, requests answered and waiting)."""
    expires = model.loaded.expires_at
    entry = {
        **{k: v for k, v in tag(model.facts).items() if k != "modified_at"},
        "expires_at": FOREVER if expires is None else iso_time(expires),
        "size_vram": 0,
        "context_length": model.facts.context_length,
    }
    if model.loaded.memory:
        entry["size"] = model.loaded.memory
    if model.engine is not None:
        entry["farmhand"] = {
            "slots": model.engine.slots,
            "active": model.engine.active,
            "queued": model.engine.queued,
            "max_queue": model.engine.max_queue,
            "memory_bytes": model.loaded.memory,
            "prompt_tokens_processed": model.engine.prompt_tokens_processed,
        }
    if model.deployments:
        entry.setdefault("farmhand", {})["deployments"] = [
            deployment_entry(d) for d in model.deployments
        ]
    return entry


def deployment_entry(deployment: DeploymentState) -> dict[str, Any]:
    """One deployment of a model served by several, as `/api/ps` shows it: its URL
    without credentials, whether it takes turns now, and its counts."""
    left = deployment.retry_in
    return {
        "url": deployment.url,
        "weight": deployment.weight,
        "state": deployment.health,
        "in_flight": deployment.in_flight,
        "sent": deployment.sent,
        "served": deployment.served,
        "failures_in_a_row": deployment.failures,
        "failures": deployment.total_failures,
        "cooling_until": None if left is None else iso_time(time.time() + left),
        "last_error": deployment.last_error,
    }


def pull_line(step: PullStep) -> dict[str, Any]:
    line: dict[str, Any] = {"status": step.status}
    for key in ("digest", "total", "completed"):
        if (value := getattr(step, key)) is not None:
            line[key] = value
    return line


def shortened(vector: list[float], dimensions: int | None) -> list[float]:
    """`vector` cut to `dimensions` and normalised again (Ollama's `dimensions`)."""
    if dimensions is None:
        return vector
    if dimensions > len(vector):
        raise RequestError(
            f"dimensions {dimensions} is more than the model's {len(vector)}",
            param="dimensions",
        )
    cut = vector[:dimensions]
    norm = math.sqrt(sum(x * x for x in cut)) or 1.0
    return [x / norm for x in cut]


def _modelfile(facts: ModelFacts) -> str:
    source = str(facts.file) if facts.file else (facts.config.model or facts.name)
    lines = ["# Modelfile of a farmhand model (farmhand.yaml holds its settings)"]
    lines.append(f"FROM {source}")
    if facts.template:
        lines.append(f'TEMPLATE """{facts.template}"""')
    lines.extend(f"PARAMETER {line}" for line in parameters_text(facts.parameters).splitlines())
    return "\n".join(lines) + "\n"


def _license(facts: ModelFacts) -> str:
    if facts.gguf is None:
        return ""
    value = facts.gguf.metadata.get("general.license")
    return value if isinstance(value, str) else ""


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value
