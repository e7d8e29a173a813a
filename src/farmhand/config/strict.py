"""How every config section reads its keys: unknown keys are errors, not silently ignored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# Attribute docstrings become field descriptions; numbers written where text is expected
# (args: [8080], env: {PORT: 8080}) are taken as the text the user meant.
STRICT_CONFIG = ConfigDict(
    extra="forbid",
    use_attribute_docstrings=True,
    coerce_numbers_to_str=True,
    protected_namespaces=(),
)


class Strict(BaseModel):
    """The base of every config section."""

    model_config = STRICT_CONFIG
