"""Load tool definitions from a list in any format, or from a JSON or YAML file.

    load_tools([{...}, ...])                      # inline, any format detect.py knows
    load_tools("file://tools/weather.yaml", base_dir=config_dir)
    load_tools("tools/weather.json", base_dir=config_dir)

Every error is a ConfigError that names the file and what is wrong with it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats.detect import to_openai_tools
from farmhand.tools.preview import preview

FILE_SCHEME = "file://"
_SUFFIXES = (".json", ".yaml", ".yml")

ToolSpec = str | PathLike[str] | Sequence[Any]


def load_tools(
    spec: ToolSpec, *, base_dir: str | PathLike[str] | None = None
) -> list[ToolDefinition]:
    """Tool definitions from `spec`: a list of tool dicts, or a `file://` URL or path.

    Relative paths are relative to `base_dir` (the config file's folder; the current
    directory when omitted). Tool names must be unique: a model cannot tell two apart.
    """
    if isinstance(spec, (str, PathLike)):
        path = resolve_tool_path(spec, base_dir)
        data = _read(path)
        where = str(path)
    elif isinstance(spec, Sequence):
        data, where = list(spec), "tools"
    else:
        raise ConfigError(
            f"tools must be a list of tool definitions or a file://path, got {preview(spec)}"
        )
    if not isinstance(data, list):
        raise ConfigError(
            f"{where}: expected a list of tools at the top level, got {_kind(data)}; "
            "wrap the tool(s) in a list"
        )
    try:
        tools = to_openai_tools(data)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    _check_unique(tools, where)
    return tools


def resolve_tool_path(spec: str | PathLike[str], base_dir: str | PathLike[str] | None) -> Path:
    """The file a `file://...` URL or plain path names, relative paths against `base_dir`."""
    text = str(spec)
    if text.startswith(FILE_SCHEME):
        text = text[len(FILE_SCHEME) :]
    if not text:
        raise ConfigError(f"tools file {str(spec)!r} names no file")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = Path(base_dir if base_dir is not None else Path.cwd()) / path
    return path


def _read(path: Path) -> object:
    if path.suffix.lower() not in _SUFFIXES:
        raise ConfigError(
            f"{path}: unsupported tools file type {path.suffix or '(none)'!r}; "
            "use .json, .yaml or .yml"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: tools file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read tools file: {exc}") from None
    if path.suffix.lower() == ".json":
        return _parse_json(text, path)
    return _parse_yaml(text, path)


def _parse_json(text: str, path: Path) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


def _parse_yaml(text: str, path: Path) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = exc.problem or exc.context or "malformed"
        raise ConfigError(f"{path}: invalid YAML{where}: {reason}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None


def _kind(data: object) -> str:
    if data is None:
        return "nothing (the file is empty)"
    if isinstance(data, dict):
        return f"an object with keys {', '.join(map(str, list(data)[:5]))}"
    return f"{type(data).__name__} {preview(data)}"


def _check_unique(tools: list[ToolDefinition], where: str) -> None:
    duplicates = [name for name, count in Counter(t.name for t in tools).items() if count > 1]
    if duplicates:
        raise ConfigError(
            f"{where}: tool names must be unique; defined more than once: {', '.join(duplicates)}"
        )
