"""MkDocs hooks: docs/configuration.md gets the configuration reference written from the
config models' field docstrings (`farmhand.config.reference`), so it cannot drift."""

from __future__ import annotations

from typing import Any

from farmhand.config.reference import config_reference

MARKER = "<!-- config-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, config_reference())
    return markdown
