"""What an eval runs against: a model and its settings, written `MODEL[,key=value...]`.

    default                                   the config's default model (embedded if none)
    qwen2.5-coder:1.5b                        a catalog model, or ./any.gguf
    default,strategy=prompt_based             tools described in the system prompt
    default,strategy=constrained              every tool turn sampled under the tool grammar
    default,strategy=jit                      the model starts with mcp_discover only
    default,strategy=prompt_based+constrained,label=pc
    ollama-qwen,temperature=0.2               any model of the config, any ModelConfig field

`strategy` is native (the default), prompt_based, constrained and jit, joined with `+`;
`label` names the column; `seed`, `temperature` and `max_tokens` set sampling (greedy, seed 0
unless given); any other key is a field of the model's config entry, its value read as JSON
when it parses (`constrained=true`, `n_ctx=8192`) and as text otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError, ModelError
from farmhand.eval.runner import RunOptions
from farmhand.models.catalog import lookup

STRATEGIES = ("native", "prompt_based", "constrained", "jit")
_SAMPLING = ("temperature", "seed", "max_tokens")


@dataclass(frozen=True)
class Target:
    label: str
    model: ModelConfig
    options: RunOptions = field(default_factory=RunOptions)

    def describe(self) -> str:
        model = self.model.model_path or self.model.model or self.model.name
        parts = [f"{self.model.provider} {model}", self.model.tool_call_strategy]
        if self.model.constrained:
            parts.append("constrained")
        if self.options.jit:
            parts.append("jit")
        return ", ".join(parts)


def parse_target(spec: str, config: FarmhandConfig) -> Target:
    head, *pairs = [p.strip() for p in spec.split(",")]
    model = _model(head, config)
    fields: dict[str, Any] = {}
    options = RunOptions()
    label = spec
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"target {spec!r}: {pair!r} is not key=value")
        value = _value(raw.strip())
        if key == "label":
            label = str(value)
        elif key == "strategy":
            fields, options = _strategy(str(value), fields, options, spec)
        elif key in _SAMPLING:
            options = replace(options, **{key: value})
        else:
            fields[key] = value
    try:
        model = ModelConfig.model_validate({**model.model_dump(exclude_unset=True), **fields})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'model'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"target {spec!r}: {problems}") from None
    return Target(label, model, options)


def _model(ref: str, config: FarmhandConfig) -> ModelConfig:
    if not ref:
        raise ConfigError("a target needs a model: a config model name, catalog name or .gguf")
    if any(m.name == ref for m in config.runtime.models) or ref == "default":
        return config.model(None if ref == "default" else ref)
    if ref.lower().endswith(".gguf"):
        path = Path(ref).expanduser()
        return ModelConfig(name=path.stem, provider="llamacpp", model_path=str(path.resolve()))
    try:
        catalog = lookup(ref)
    except ModelError:
        names = ", ".join(m.name for m in config.runtime.models) or "default"
        raise ConfigError(
            f"target model {ref!r} is not a model of the config ({names}), a catalog model"
            " (`farmhand models`) or a .gguf file"
        ) from None
    return ModelConfig(name=catalog.name, provider="llamacpp", model=catalog.name)


def _strategy(
    value: str, fields: dict[str, Any], options: RunOptions, spec: str
) -> tuple[dict[str, Any], RunOptions]:
    fields = dict(fields)
    for part in value.split("+"):
        part = part.strip().replace("-", "_")
        if part == "native":
            fields["tool_call_strategy"] = "native_api"
        elif part in ("prompt_based", "prompt"):
            fields["tool_call_strategy"] = "prompt_based"
        elif part == "constrained":
            fields["constrained"] = True
        elif part == "jit":
            options = replace(options, jit=True)
        else:
            raise ConfigError(
                f"target {spec!r}: unknown strategy {part!r}; use {', '.join(STRATEGIES)}"
                " (several joined with +)"
            )
    return fields, options


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
