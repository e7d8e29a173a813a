"""Reading farmhand.yaml: YAML with line numbers, `${env:VAR}` expansion, validation.

Every problem becomes one line `FILE:LINE: key.path: what is wrong; what to do`, and all
problems of a file are reported together.

A config that came from a client (a project written through the API) is read as
`outside=OutsideRules(...)`: no `${env:...}` at all (however the YAML spells it), no anchors
or aliases, no tags beyond JSON's types, at most MAX_OUTSIDE_BYTES, and files it names
(`file://` tools, `model_path`, an embedded `model` that is not a catalog name) only inside
the operator's allowed folders or the model cache. Any config stops at MAX_VALUES values,
so an alias bomb is an error, not a stalled server, and at `max_depth` levels of nesting,
checked before the YAML is built.
"""

from __future__ import annotations

import difflib
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from farmhand.config.env import expand_env
from farmhand.config.models import (
    FarmhandConfig,
    Issue,
    KeyPath,
    default_config,
    format_path,
    is_inside,
    outside_folders_message,
)
from farmhand.errors import ConfigError, ModelError
from farmhand.models.catalog import lookup
from farmhand.paths import models_dir

CONFIG_FILENAME = "farmhand.yaml"
MAX_VALUES = 50_000
"""Most values (after aliases expand) a config may hold."""
MAX_OUTSIDE_BYTES = 256 * 1024
MAX_DEPTH = 64
"""Deepest nesting of lists and mappings in a config (`server.max_config_depth` for
projects)."""


@dataclass(frozen=True)
class OutsideRules:
    """How to read a config that a client wrote: which folders its files may be in."""

    allowed_dirs: tuple[Path, ...] = ()


LLAMAFARM_FILENAME = "llamafarm.yaml"
CONFIG_CANDIDATES = (CONFIG_FILENAME, LLAMAFARM_FILENAME)
"""The files a folder's config may be in, first found wins: a LlamaFarm project's
llamafarm.yaml is read when there is no farmhand.yaml beside it."""


def find_config(explicit: Path | None = None) -> Path | None:
    """`explicit` (which must exist; a folder: its config file), else ./farmhand.yaml, else
    ./llamafarm.yaml, else None (the built-in default)."""
    if explicit is None:
        return _in_folder(Path())
    if explicit.is_dir():
        found = _in_folder(explicit)
        if found is None:
            raise ConfigError(
                f"{explicit} is a directory without {' or '.join(CONFIG_CANDIDATES)};"
                " pass the config file itself"
            )
        return found
    if not explicit.exists():
        raise ConfigError(
            f"config file {explicit} does not exist; check the path, or leave out --config"
            f" to use ./{CONFIG_FILENAME}, ./{LLAMAFARM_FILENAME} or the built-in default"
        )
    return explicit


def _in_folder(folder: Path) -> Path | None:
    for name in CONFIG_CANDIDATES:
        if (folder / name).is_file():
            return folder / name
    return None


def describe_source(path: Path | None) -> str:
    """Which file a config came from, for the line a command prints when it starts."""
    if path is None:
        return f"no {' or '.join(CONFIG_CANDIDATES)} here, built-in default"
    return str(path)


def load_config(
    path: Path | None = None, *, environ: Mapping[str, str] | None = None
) -> FarmhandConfig:
    """The validated config in `path`; the built-in default when `path` is None. The
    operator's environment may set what the file leaves unset (`TIMEOUT_VARIABLES`)."""
    if path is None:
        return with_environment(default_config(), environ)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist; check the path") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the config as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    config = parse_config(text, str(path), environ=environ, base_dir=path.parent.absolute())
    return with_environment(config, environ).loaded_from(path)


TIMEOUT_VARIABLES = ("FARMHAND_MCP_TIMEOUT", "OLLAMA_MCP_TIMEOUT")
"""Milliseconds a tool call may take when the config sets no `runtime.tool_timeout`:
farmhand's variable, else the Ollama MCP fork's."""


def with_environment(
    config: FarmhandConfig, environ: Mapping[str, str] | None = None
) -> FarmhandConfig:
    """`config` with `runtime.tool_timeout` from TIMEOUT_VARIABLES when the file left it
    unset; ConfigError for a value that is not a positive whole number of milliseconds."""
    env = os.environ if environ is None else environ
    name = next((n for n in TIMEOUT_VARIABLES if env.get(n, "").strip()), None)
    if name is None or "tool_timeout" in config.runtime.model_fields_set:
        return config
    value = env[name].strip()
    if not value.isdigit() or int(value) <= 0:
        raise ConfigError(
            f"{name}={value!r}: give the tool call timeout as a whole number of milliseconds,"
            " e.g. 30000"
        )
    config.runtime.tool_timeout = int(value) / 1000
    return config


def parse_config(
    text: str,
    source: str = "<config>",
    *,
    environ: Mapping[str, str] | None = None,
    base_dir: Path | None = None,
    outside: OutsideRules | None = None,
    max_depth: int = MAX_DEPTH,
) -> FarmhandConfig:
    """Validate config text; `source` names it in errors, `base_dir` anchors relative paths,
    `outside` reads it as a client's (see the module docstring), `max_depth` bounds its
    nesting."""
    if outside is not None:
        _check_outside_size(text, source)
    check_yaml_shape(text, source, max_depth=max_depth, outside=outside is not None)
    reader = _Reader(environ, expand=outside is None)
    data = reader.read_document(text, source)
    issues = list(reader.issues)
    confine = outside.allowed_dirs if outside is not None else None
    try:
        config = FarmhandConfig.model_validate(
            data,
            context={"defer_reference_checks": True, "base_dir": base_dir, "confine": confine},
        )
    except ValidationError as exc:
        issues += _pydantic_issues(exc, {i.path for i in reader.issues})
    else:
        issues += config.reference_issues()
        if not issues:
            _anchor_paths(config, base_dir)
            if confine is not None:
                issues += _unconfined_model_paths(config, confine)
            if not issues:
                return config
    raise _error(source, [_relocate(i, reader.lines) for i in issues], reader.lines)


def check_yaml_shape(text: str, source: str, *, max_depth: int, outside: bool) -> None:
    """Before the YAML is built: nesting at most `max_depth` deep (composing it recurses,
    so deeper is a RecursionError, and slow long before that), and for a client's config
    no anchors or aliases and no tags beyond JSON's types (`!!binary`, `!!set`, ...). Read
    as a stream of events (no recursion), which stops at the first problem, a syntax error
    included."""
    deep = _deep_flow_line(text, max_depth)
    if deep is not None:
        raise _too_deep(source, deep, max_depth)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    raise _too_deep(source, line, max_depth)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if not outside:
                continue
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ConfigError(
                    f"{source}:{line}: YAML anchors and aliases (&name, *name) are not accepted"
                    " in a config written through the API; write the values out"
                )
            tag = getattr(event, "tag", None)
            if tag is not None and tag not in JSON_TAGS and not _implicit(event):
                raise ConfigError(
                    f"{source}:{line}: the YAML tag {tag!r} is not accepted in a config"
                    " written through the API; write plain text, numbers, true/false, lists"
                    " and mappings"
                )
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(_yaml_message(source, exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None


def _too_deep(source: str, line: int, max_depth: int) -> ConfigError:
    return ConfigError(
        f"{source}:{line}: lists and mappings are nested more than {max_depth} deep"
        " (server.max_config_depth); flatten the config"
    )


def _deep_flow_line(text: str, max_depth: int) -> int | None:
    """The line where `[` and `{` open more than `max_depth` deep, read from the text itself
    (outside quotes and comments): YAML's scanner looks ahead across every open flow
    bracket before it yields an event, which takes seconds for a few thousand."""
    depth, line, quote, last = 0, 1, "", "\n"
    escaped = False
    for char in text:
        if quote:
            if char == "\n":
                line += 1
                if quote == "\n":
                    quote, last = "", "\n"
            elif escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char == "\n":
            line, last = line + 1, "\n"
            continue
        if char == "#" and last in " \n":
            quote = "\n"  # a comment: skipped to the line's end
            continue
        if char in "\"'" and (depth or last in ":-\n "):
            quote = char
        elif char in "[{" and (depth or last in ":-\n "):
            depth += 1
            if depth > max_depth:
                return line
        elif char in "]}" and depth:
            depth -= 1
        last = char
    return None


JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")
)


def _implicit(event: Any) -> bool:
    """The tag was resolved from the value, not written (`!tag`)."""
    implicit = getattr(event, "implicit", False)
    return bool(implicit[0] if isinstance(implicit, tuple) else implicit)


def _check_outside_size(text: str, source: str) -> None:
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_OUTSIDE_BYTES:
        raise ConfigError(
            f"{source}: {size} bytes is more than the {MAX_OUTSIDE_BYTES} a config written"
            " through the API may have; send a smaller config"
        )


class _Reader:
    """Turns a YAML node tree into plain data, remembering the line of every key path."""

    def __init__(self, environ: Mapping[str, str] | None, *, expand: bool = True) -> None:
        self.lines: dict[KeyPath, int] = {(): 1}
        self.issues: list[Issue] = []
        self._environ = environ
        self._expand = expand
        self._values = 0
        self._scalars = yaml.constructor.SafeConstructor()
        self._open: set[int] = set()  # nodes being read, to stop on self-referencing aliases
        self._own_keys: dict[int, set[int]] = {}  # per mapping, the keys written in it

    def read_document(self, text: str, source: str) -> Any:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            raise ConfigError(_yaml_message(source, exc)) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: invalid YAML: {exc}") from None
        if root is None or (isinstance(root, yaml.ScalarNode) and root.tag.endswith(":null")):
            return {}  # an empty file, only comments, or a bare `---`
        if not isinstance(root, yaml.MappingNode):
            line = root.start_mark.line + 1
            raise ConfigError(
                f"{source}:{line}: the file must be a mapping of keys (version, mcp, runtime,"
                " prompts, ...), not a single value or a list"
            )
        return self._read(root, ())

    def _read(self, node: Any, path: KeyPath) -> Any:
        self._values += 1
        if self._values > MAX_VALUES:
            raise ConfigError(
                f"line {node.start_mark.line + 1}: the config holds more than {MAX_VALUES}"
                " values once its aliases expand; remove the aliases that multiply it"
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if id(node) in self._open:
            self.issues.append(Issue(path, "this alias refers to itself; remove the loop"))
            return None
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._read_mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                return [self._read(item, (*path, i)) for i, item in enumerate(node.value)]
            return self._read_scalar(node, path)
        finally:
            self._open.discard(id(node))

    def _read_mapping(self, node: Any, path: KeyPath) -> dict[str, Any]:
        # Flattening rewrites node.value, so an aliased mapping must remember its own keys.
        own = self._own_keys.setdefault(id(node), {id(key) for key, _ in node.value})
        try:
            self._scalars.flatten_mapping(node)  # resolves `<<: *anchor` merges
        except yaml.MarkedYAMLError as exc:
            self.issues.append(Issue(path, f"bad merge: {exc.problem}"))
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                line = key_node.start_mark.line + 1
                self.issues.append(
                    Issue(path, "keys must be plain text, not lists or mappings", line)
                )
                continue
            key, line = str(key_node.value), key_node.start_mark.line + 1
            # Keys merged in with `<<` may be overridden; the same key written twice may not.
            if key in first_line and id(key_node) in own and first_line[key] > 0:
                message = f"duplicate key {key!r} (first on line {first_line[key]})"
                self.issues.append(Issue((*path, key), message, line))
                continue
            first_line[key] = line if id(key_node) in own else 0
            self.lines[(*path, key)] = line
            out[key] = self._read(value_node, (*path, key))
        return out

    def _read_scalar(self, node: Any, path: KeyPath) -> Any:
        try:
            value = self._scalars.construct_object(node)
        except yaml.MarkedYAMLError as exc:
            self.issues.append(Issue(path, f"{exc.problem}; remove the tag or quote the value"))
            return None
        if not isinstance(value, str):
            return value
        if not self._expand:
            if "${env:" in value:
                self.issues.append(
                    Issue(
                        path,
                        "${env:...} is not accepted in a config written through the API (it"
                        " would read the server's environment); write the value itself",
                    )
                )
            return value
        try:
            return expand_env(value, self._environ)
        except ConfigError as exc:
            self.issues.append(Issue(path, str(exc)))
            return value


def _yaml_message(source: str, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else 1
    what = exc.problem or exc.context or "invalid YAML"
    if exc.problem and exc.context and exc.context_mark is not None:
        what = f"{exc.context} on line {exc.context_mark.line + 1}, {exc.problem}"
    fix = "indent with spaces, not tabs" if "\\t" in what else "check the indentation and quoting"
    return f"{source}:{line}: invalid YAML: {what}; {fix}"


def _pydantic_issues(exc: ValidationError, reported: set[KeyPath]) -> list[Issue]:
    """Validation errors as issues, leaving out those that follow from a reported value."""
    issues: list[Issue] = []
    for err in exc.errors(include_url=False):
        path = tuple(p for p in err["loc"] if p != "[key]")
        if path in reported or (
            err["type"] == "value_error" and any(r[: len(path)] == path for r in reported)
        ):
            continue  # e.g. an unset ${env:URL} that then fails a check of its server
        if err["type"] == "missing":
            key = path[-1]
            issues.append(Issue(path[:-1], f"missing required key {key!r}; add `{key}: ...`"))
        elif err["type"] == "extra_forbidden":
            issues.append(Issue(path, _unknown_key(path)))
        else:
            issues.append(Issue(path, _describe(err)))
    return issues


_EXPECTED = {
    "model_type": "should be a mapping of keys",
    "model_attributes_type": "should be a mapping of keys",
    "dict_type": "should be a mapping of keys",
    "list_type": "should be a list",
    "string_type": "should be text",
    "bool_type": "should be true or false",
    "bool_parsing": "should be true or false",
    "int_type": "should be a whole number",
    "int_parsing": "should be a whole number",
    "int_from_float": "should be a whole number",
    "float_type": "should be a number",
    "float_parsing": "should be a number",
}


def _describe(err: ErrorDetails) -> str:
    kind, msg = err["type"], err["msg"]
    if kind in ("value_error", "assertion_error"):
        # Our own validators: the message already says what to do.
        return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    expected = _EXPECTED.get(kind)
    if expected is None:
        expected = msg.replace("Input should be", "should be").replace("String should", "should")
    value = err.get("input")
    scalar = not isinstance(value, dict | list)
    hint = "; put it in quotes to make it text" if kind == "string_type" and scalar else ""
    return f"{expected} (got {_brief(value)}){hint}"


def _brief(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _unknown_key(path: KeyPath) -> str:
    key = str(path[-1])
    model = _model_at(path[:-1])
    if model is None:
        return f"unknown key {key!r}"
    allowed = list(model.model_fields)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r}{hint}; allowed keys: {', '.join(allowed)}"


def _model_at(path: KeyPath) -> type[BaseModel] | None:
    """The model class that validates the mapping at `path`, by walking the annotations."""
    current: Any = FarmhandConfig
    for part in path:
        current = _unwrap_optional(current)
        if isinstance(part, int) and get_origin(current) is list:
            current = get_args(current)[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    current = _unwrap_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _anchor_paths(config: FarmhandConfig, base_dir: Path | None) -> None:
    """Relative model paths are relative to the config file, not to the working directory."""
    for model in config.runtime.models:
        if model.model_path:
            path = Path(model.model_path).expanduser()
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            model.model_path = str(path)


def _unconfined_model_paths(config: FarmhandConfig, allowed: tuple[Path, ...]) -> list[Issue]:
    """Model files of a client's config outside the allowed folders and the model cache: a
    `model_path`, or a `model` of the embedded provider that is not a catalog name (it is
    read as a path). The message is the same whether the file exists or not."""
    folders = (*allowed, models_dir().resolve())
    issues = []
    for index, model in enumerate(config.runtime.models):
        here = ("runtime", "models", index)
        if model.model_path and not is_inside(Path(model.model_path), folders):
            issues.append(Issue((*here, "model_path"), outside_folders_message(allowed)))
        if model.provider == "llamacpp" and model.model and not _catalog_name(model.model):
            path = Path(model.model).expanduser()
            if not path.is_absolute() or not is_inside(path, folders):
                message = (
                    f"{model.model!r} is not a catalog model (farmhand models lists them);"
                    f" as a file, {outside_folders_message(allowed)} or the model cache"
                )
                issues.append(Issue((*here, "model"), message))
    return issues


def _catalog_name(name: str) -> bool:
    try:
        lookup(name)
    except ModelError:
        return False
    return True


def _relocate(issue: Issue, lines: dict[KeyPath, int]) -> Issue:
    """Point into `tools[i].function.x` when an inline tool was written in OpenAI's nested form.

    The model flattens that form, so validation reports `tools[i].x`.
    """
    path = issue.path
    for k in range(len(path) - 2):
        if path[k] == "tools" and isinstance(path[k + 1], int) and path[k + 2] != "function":
            nested = (*path[: k + 2], "function", *path[k + 2 :])
            if (*path[: k + 2], "function") in lines and path not in lines:
                return issue._replace(path=nested)
    return issue


def _line(path: KeyPath, lines: dict[KeyPath, int]) -> int:
    while path not in lines:
        path = path[:-1]
    return lines[path]


def _error(source: str, issues: list[Issue], lines: dict[KeyPath, int]) -> ConfigError:
    rows = sorted(
        {(i.line or _line(i.path, lines), format_path(i.path), i.message) for i in issues},
        key=lambda row: (row[0], row[1]),
    )
    text = [
        f"{source}:{line}: {where}: {message}" if where else f"{source}:{line}: {message}"
        for line, where, message in rows
    ]
    if len(text) == 1:
        return ConfigError(text[0])
    return ConfigError(f"{len(text)} problems in {source}:\n" + "\n".join(text))
