"""A short rendering of someone else's data, for error messages that quote it."""

from __future__ import annotations

import json


def preview(value: object, limit: int = 80) -> str:
    """`value` as JSON (repr for what JSON cannot show), cut to `limit` characters."""
    try:
        text = json.dumps(value, default=repr)
    except ValueError:  # circular structures
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
