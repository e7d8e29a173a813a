"""What Ollama's bodies share: strict parsing with messages that name the wrong field, and
for generate and chat `options`, `format`, `think`, `keep_alive`, and the refusal of
`images`.

`options` farmhand honours: temperature, top_p, top_k, seed, num_predict, stop, and
num_ctx when it is the context the model is loaded with (it cannot change per request).
The other Ollama options (repeat_penalty, num_gpu, mirostat, ...) are accepted and have no
effect, as Ollama itself ignores options a runner does not use.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from farmhand.config.models import format_path
from farmhand.dialects.fields import LARGEST_INTEGER, json_schema
from farmhand.errors import RequestError
from farmhand.generation.settings import GenerationSettings, ResponseFormat

FOREVER = math.inf
A_CENTURY = 100 * 365 * 24 * 3600.0
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


class OllamaBody(BaseModel):
    # strict: `"stream": "yes"` is a mistake to report, not a value to guess at.
    model_config = ConfigDict(extra="ignore", strict=True)


def parse_body(data: object, model_cls: type[OllamaBody]) -> Any:
    """`data` validated as `model_cls`; RequestError (400) naming each wrong field."""
    if not isinstance(data, dict):
        raise RequestError("the request body must be a JSON object")
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{format_path(tuple(error['loc'])) or 'body'}: {error['msg']}"
            for error in exc.errors()
        ]
        first = exc.errors()[0]["loc"]
        raise RequestError("; ".join(problems), param=str(first[0]) if first else None) from None


class Options(OllamaBody):
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0, le=LARGEST_INTEGER)
    num_predict: int | None = Field(default=None, ge=-LARGEST_INTEGER, le=LARGEST_INTEGER)
    seed: int | None = Field(default=None, ge=-LARGEST_INTEGER, le=LARGEST_INTEGER)
    stop: list[str] | None = None
    num_ctx: int | None = Field(default=None, ge=1, le=LARGEST_INTEGER)

    def settings(self, **fields: Any) -> GenerationSettings:
        """GenerationSettings for these options, plus `fields` (format, think, ...)."""
        num_predict = self.num_predict
        return GenerationSettings(
            temperature=self.temperature,
            # Ollama: -1 is "no limit", -2 "fill the context".
            max_tokens=num_predict if num_predict is not None and num_predict > 0 else None,
            seed=self.seed,
            stop=tuple(self.stop or ()),
            top_p=self.top_p,
            top_k=self.top_k or None,  # 0: Ollama's "no top-k"; the sampler's default then
            **fields,
        )


def response_format(value: object) -> ResponseFormat | None:
    """Ollama's `format`: "" or absent (free text), "json", or a JSON Schema object."""
    if value is None or value == "":
        return None
    if value == "json":
        return "json"
    if isinstance(value, dict):
        return json_schema(value, "format")
    raise RequestError(
        f'format must be "json" or a JSON Schema object, got {value!r:.80}', param="format"
    )


def think_flag(value: object) -> bool | None:
    """Ollama's `think`: true/false, or a level ("low", "medium", "high": reasoning on)."""
    if value is None or isinstance(value, bool):
        return value
    if value in ("low", "medium", "high"):
        return True
    raise RequestError(
        f'think must be true, false, "low", "medium" or "high", got {value!r:.80}',
        param="think",
    )


def keep_alive_seconds(value: object) -> float | None:
    """Ollama's `keep_alive` in seconds (None: not given; FOREVER for a negative one): a
    number of seconds, or a duration such as "5m", "1h30m", "300ms"."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise _bad_keep_alive(value)
    if isinstance(value, int | float):
        if isinstance(value, int) and abs(value) > LARGEST_INTEGER:
            raise _bad_keep_alive(value)  # float() of it would overflow
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _duration(value.strip())
    else:
        raise _bad_keep_alive(value)
    # Past a century is for good: a later time than that has no date to show (/api/ps).
    return FOREVER if seconds < 0 or seconds > A_CENTURY else seconds


def _duration(text: str) -> float:
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    try:
        return sign * float(body)  # a bare number: seconds
    except ValueError:
        pass
    parts = _DURATION_PART.findall(body)
    if not body or "".join(n + u for n, u in parts) != body:
        raise _bad_keep_alive(text)
    return sign * sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _shown(value: object) -> str:
    if isinstance(value, int) and abs(value) > LARGEST_INTEGER:
        return "a number too large to be one"  # repr() of 5,000 digits refuses
    return f"{value!r:.80}"


def _bad_keep_alive(value: object) -> RequestError:
    return RequestError(
        f'keep_alive must be seconds or a duration like "5m" or "1h" (a negative number:'
        f" for good), got {_shown(value)}",
        param="keep_alive",
    )


def refuse_images(images: object, model: str, where: str = "images") -> None:
    """farmhand's models read text only; images are a client's mistake to say plainly."""
    if images:
        raise RequestError(
            f"{where}: model {model!r} has no vision (farmhand's models take text only);"
            " send the request without images",
            param="images",
        )
