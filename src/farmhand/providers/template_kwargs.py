"""Moved to `farmhand.generation.template_kwargs` (dialects check a request's
`chat_template_kwargs` without importing providers); re-exported here."""

from farmhand.generation.template_kwargs import (
    FIELD,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_KEYS,
    RESERVED,
    TEMPLATE_REFUSED,
    render_variables,
    request_template_kwargs,
    template_kwargs,
)

__all__ = [
    "FIELD",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_KEYS",
    "RESERVED",
    "TEMPLATE_REFUSED",
    "render_variables",
    "request_template_kwargs",
    "template_kwargs",
]
