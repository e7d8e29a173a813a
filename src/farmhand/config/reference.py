"""The configuration reference, written from the config models themselves: every section,
every key, its type, its default and its field docstring. The docs build (docs/hooks.py)
puts it into docs/configuration.md, so the page cannot drift from the code.

    python -m farmhand.config.reference      # the same text, on stdout
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from farmhand.config.models import FarmhandConfig


def config_reference(root: type[BaseModel] = FarmhandConfig) -> str:
    """Markdown: one section per model reachable from `root`, in the order met."""
    sections: list[str] = []
    seen: set[type[BaseModel]] = set()
    queue: list[tuple[str, type[BaseModel]]] = [("farmhand.yaml", root)]
    while queue:
        path, model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        sections.append(_section(path, model))
        for name, info in model.model_fields.items():
            for nested in _models_in(info.annotation):
                suffix = "[]" if _is_list(info.annotation) else ""
                where = name if path == "farmhand.yaml" else f"{path}.{name}"
                queue.append((where + suffix, nested))
    return "\n\n".join(sections) + "\n"


def _section(path: str, model: type[BaseModel]) -> str:
    doc = inspect.cleandoc(model.__doc__ or "")
    rows = ["| key | type | default | what it does |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        text = " ".join((info.description or "").split())
        rows.append(f"| `{name}` | {_type(info.annotation)} | {_default(info)} | {_cell(text)} |")
    return f"## `{path}`\n\n{doc}\n\n" + "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
        if isinstance(value, BaseModel):
            return "(section)"
    else:
        value = info.default
    if value is None or value is PydanticUndefined:
        return "none"
    return _cell(f"`{value!r}`" if not isinstance(value, str) else f"`{value}`")


def _type(annotation: Any) -> str:
    return _cell(_type_text(annotation))


def _type_text(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return ", ".join(f"`{a}`" if isinstance(a, str) else str(a).lower() for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in args if a is not type(None))
    if origin is list:
        if args and _models_in(args[0]):
            return "list of entries"
        return f"list of {_type_text(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    if annotation is Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


if __name__ == "__main__":
    print(config_reference(), end="")
