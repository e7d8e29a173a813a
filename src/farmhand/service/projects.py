"""Projects: named farmhand.yaml files in namespaces, as LlamaFarm has them.

    $FARMHAND_HOME/projects/{namespace}/{project}/farmhand.yaml

A project is exactly the config file `farmhand --config` reads, so one written through the
API runs the same from the CLI, and one written by hand shows up in the API. Writes are
validated first (parse errors name the file, the line and the key path) and atomic (a
temporary file renamed into place), so a reader never sees half a file. What the API
returns as `config` is the YAML as written, `${env:VAR}` references unexpanded: a project
never echoes the server's secrets back.

A config written through the API (HTTP or MCP) comes from a client, not the operator. It
is stored with API_MARKER as its first line and, whenever it is read, read as a client's
(`config.loader.OutsideRules`): no `${env:VAR}` however the YAML spells it, no aliases, a
size limit, files only inside `server.allowed_dirs` (or the model cache); its MCP servers
are held to the request policy and its models' backends to `server.backend_hosts` when it
is written and again whenever a chat uses them; and a chat on it runs under the
operator's `server:` section, never the project's own. What a backend such a project chose
says when it fails reaches the client only as a status and a fixed reason
(`ProviderError.brief`, applied by `service.chat`). A file the operator writes on
disk (without the marker) is trusted like any config file.

With `server.store: postgresql://...` a project written through the API is a row of that
database (`project_rows.py`), which every replica reads, rather than a file.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from farmhand.config.limits import DEPTH_CEILING
from farmhand.config.loader import (
    CONFIG_FILENAME,
    MAX_DEPTH,
    OutsideRules,
    check_yaml_shape,
    parse_config,
)
from farmhand.config.models import FarmhandConfig, format_path
from farmhand.errors import (
    ConfigError,
    PolicyError,
    ProjectExistsError,
    ProjectNotFoundError,
    RequestError,
)
from farmhand.providers.factory import backend_urls
from farmhand.service.project_rows import ProjectRows
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.policy import RequestPolicy

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Namespace and project names: a letter or digit, then letters, digits, `_`, `.`, `-`
(at most 64 characters). They are directory names, so nothing else gets through."""
API_MARKER = "# written through the farmhand API: read as a client's config, not the operator's"
"""The last line of every config written through the API. Its lines stay the client's own
(errors name them), and only the operator, editing the file, can take the marker out."""


@dataclass(frozen=True)
class Project:
    """One stored project: its file's text and the config validated from it."""

    namespace: str
    name: str
    path: Path
    text: str
    config: FarmhandConfig

    @property
    def from_api(self) -> bool:
        """Written through the API (a client's config), not by the operator on disk."""
        return written_by_api(self.text)

    def to_json(self) -> dict[str, Any]:
        """LlamaFarm's `Project` shape: namespace, name, config (as written, unexpanded)."""
        config = raw_mapping(self.text, DEPTH_CEILING)  # it was read under a lower limit
        return {"namespace": self.namespace, "name": self.name, "config": config}


ConfigInput = Mapping[str, Any] | str | None
"""A config as a client sends it: a mapping (JSON), YAML text, or None for the template."""


class ProjectStore:
    """The projects under one FARMHAND_HOME. Stateless apart from the files: two stores
    over the same home (two server processes, a restart) see the same projects."""

    def __init__(
        self,
        home: Path,
        policy: RequestPolicy | None = None,
        *,
        max_depth: int = MAX_DEPTH,
        store: str | None = None,
    ) -> None:
        self.root = home / "projects"
        self.policy = policy or RequestPolicy()
        self.max_depth = max_depth
        self.rows = ProjectRows.for_store(store)

    # Reading

    def namespaces(self) -> list[str]:
        """The namespaces that hold a folder or a row, by name (each may hold no valid
        project)."""
        rows = self.rows.namespaces() if self.rows is not None else set()
        if not self.root.is_dir():
            return sorted(rows)
        folders = {e.name for e in self.root.iterdir() if _valid(e.name) and e.is_dir()}
        return sorted(folders | rows)

    def list(self, namespace: str) -> list[Project]:
        """The namespace's projects by name; an unknown namespace has none. A project whose
        file no longer validates (edited by hand) raises its ConfigError on `get`, and is
        left out here so one broken file does not hide the others."""
        folder = self.root / check_name(namespace, "namespace")
        names = self.rows.names(namespace) if self.rows is not None else set()
        if folder.is_dir():
            names |= {
                entry.name
                for entry in folder.iterdir()
                if _valid(entry.name) and (entry / CONFIG_FILENAME).is_file()
            }
        projects = []
        for name in sorted(names):
            try:
                projects.append(self.get(namespace, name))
            except (ConfigError, ProjectNotFoundError):
                continue
        return projects

    def get(self, namespace: str, name: str) -> Project:
        path = self.path(namespace, name)
        try:
            text = self._row(namespace, name) or path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProjectNotFoundError(
                f"project {namespace}/{name} does not exist; create it with"
                f' POST /v1/projects/{namespace} and a body of {{"name": "{name}"}}',
                code="project_not_found",
            ) from None
        config = self._parse(text, _source(namespace, name), path.parent)
        return Project(namespace, name, path, text, config)

    def _parse(self, text: str, source: str, base: Path) -> FarmhandConfig:
        outside = OutsideRules(self.policy.allowed_dirs) if written_by_api(text) else None
        return parse_config(text, source, base_dir=base, outside=outside, max_depth=self.max_depth)

    def _row(self, namespace: str, name: str) -> str | None:
        return self.rows.read(namespace, name) if self.rows is not None else None

    def path(self, namespace: str, name: str) -> Path:
        folder = self.root / check_name(namespace, "namespace") / check_name(name, "project")
        return folder / CONFIG_FILENAME

    # Writing

    def create(self, namespace: str, name: str, config: ConfigInput = None) -> Project:
        """A new project; ProjectExistsError (409) when the name is taken."""
        path = self.path(namespace, name)
        text = self._validated(namespace, name, config, path.parent)
        exists = ProjectExistsError(
            f"project {namespace}/{name} already exists; change it with"
            f" PUT /v1/projects/{namespace}/{name}, or pick another name",
            code="project_exists",
        )
        if self.rows is not None:
            if path.is_file() or not self.rows.insert(namespace, name, text):
                raise exists
            return self.get(namespace, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_temp(path, text)
        try:
            os.link(tmp, path)  # atomic, and fails if another create won the race
        except FileExistsError:
            raise exists from None
        finally:
            tmp.unlink(missing_ok=True)
        return self.get(namespace, name)

    def update(self, namespace: str, name: str, config: ConfigInput) -> Project:
        """Replace the project's whole config (LlamaFarm's PUT is a full replacement)."""
        path = self.path(namespace, name)
        self.get(namespace, name)  # 404 before validating a body for nothing
        text = self._validated(namespace, name, config, path.parent)
        if self.rows is not None:  # a row, read before the operator's file of that name
            self.rows.put(namespace, name, text)
        else:
            os.replace(_write_temp(path, text), path)
        return self.get(namespace, name)

    def delete(self, namespace: str, name: str) -> Project:
        """Remove the project's folder; returns what it held (LlamaFarm returns it too)."""
        path = self.path(namespace, name)
        row = self._row(namespace, name)
        if row is None and not path.is_file():
            self.get(namespace, name)  # the 404
        text = row if row is not None else path.read_text(encoding="utf-8")
        try:
            config = self._parse(text, _source(namespace, name), path.parent)
        except ConfigError:
            config = FarmhandConfig(name=name, namespace=namespace)  # deleting a broken one
        if row is not None and self.rows is not None:
            self.rows.delete(namespace, name)
            return Project(namespace, name, path, text, config)
        shutil.rmtree(path.parent)
        folder = path.parent.parent
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        return Project(namespace, name, path, text, config)

    def _validated(self, namespace: str, name: str, config: ConfigInput, base: Path) -> str:
        """The file text to store for `config`; ConfigError (400) says what is wrong."""
        source = _source(namespace, name)
        if config is None or (isinstance(config, Mapping) and not config):
            text = f"version: v1\nname: '{name}'\nnamespace: '{namespace}'\n"
        elif isinstance(config, str):
            text = config
        elif isinstance(config, Mapping):
            text = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True)
        else:
            raise RequestError(
                "config must be a mapping (the farmhand.yaml keys) or YAML text",
                param="config",
            )
        text = text if text.endswith("\n") else text + "\n"
        parsed = self._parse(text + API_MARKER + "\n", source, base)
        raw = raw_mapping(text, self.max_depth)
        if _flow_style(text):  # `{...}`: lines added before it would not be YAML
            text = yaml.safe_dump(raw, sort_keys=False, allow_unicode=True) if raw else ""
        for key, expected in (("name", name), ("namespace", namespace)):
            value = raw.get(key)
            if value is not None and str(value) != expected:
                line = _key_line(text, key)
                raise ConfigError(
                    f"{source}:{line}: {key}: {value!r} does not match the {key} in the URL"
                    f" ({expected!r}); leave it out or make it {expected!r}"
                )
        self._check_servers(parsed, source, text)
        check_backends(parsed, self.policy, source)
        missing = "".join(
            f"{key}: '{value}'\n"  # quoted: "1.0" is a name, not a number
            for key, value in (("name", name), ("namespace", namespace))
            if key not in raw
        )
        return missing + text + API_MARKER + "\n"

    def _check_servers(self, config: FarmhandConfig, source: str, text: str) -> None:
        """A client's MCP servers meet the request policy, as a request's own would."""
        problems = []
        for i, server in enumerate(config.mcp.servers):
            try:
                self.policy.admit(server)
            except (PolicyError, ConfigError) as exc:
                problems.append(f"{format_path(('mcp', 'servers', i))}: {exc}")
        if problems:
            line = _key_line(text, "mcp")
            raise PolicyError("\n".join(f"{source}:{line}: {p}" for p in problems))


def check_backends(config: FarmhandConfig, policy: RequestPolicy, source: str) -> None:
    """A client's models send their turns only to hosts the operator allows
    (`server.backend_hosts`), every deployment's included; PolicyError (403) names the
    model, the key and the host."""
    for index, model in enumerate(config.runtime.models):
        here = ("runtime", "models", index)
        for place, url in enumerate(backend_urls(model)):
            key = (
                (*here, "deployments", place, "base_url")
                if model.deployments
                else (*here, "base_url")
            )
            policy.admit_backend(url, f"{source}: {format_path(key)} (model {model.name!r})")


def written_by_api(text: str) -> bool:
    return API_MARKER in text.splitlines()


def check_name(value: str, what: str) -> str:
    """`value` if it is a usable namespace or project name, else a 400 naming the rule."""
    if not _valid(value):
        raise RequestError(
            f"invalid {what} name {value!r}: use 1 to 64 letters, digits, '_', '.' or '-',"
            " starting with a letter or digit",
            param=what,
        )
    return value


def raw_mapping(text: str, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The YAML's top-level mapping as written (no `${env:VAR}` expansion), in JSON's types:
    what YAML reads as something else (a date, `!!binary`, `!!set`) is given as text or a
    list, so any file in the projects folder can be listed, shown and deleted."""
    try:
        check_yaml_shape(text, "", max_depth=max_depth, outside=False)
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ConfigError):
        return {}
    return _json_safe(data) if isinstance(data, dict) else {}


def _json_safe(value: Any) -> Any:
    """`value` in JSON's types: mapping keys as text, a date as its ISO text, binary as
    base64 (as YAML writes it), a set as a list."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else _key(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | set | tuple):
        return [_json_safe(item) for item in value]
    if isinstance(value, datetime.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _key(key: Any) -> str:
    return str(_json_safe(key))


def _flow_style(text: str) -> bool:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return False
    return isinstance(root, yaml.MappingNode) and bool(root.flow_style)


def state_for(state: ServiceState, project: Project) -> ServiceState:
    """The server's state with the project's config: same pool, provider cache (keyed by
    model config), task store and home, so a project chat costs no more than any other.
    The operator's `server:` section stays (a project cannot loosen the server's rules),
    and so does its `runtime.saved_results` (the disk is the operator's); a project written
    through the API counts as a client's config."""
    if project.from_api:  # the operator's backend_hosts may have changed since it was written
        check_backends(project.config, state.policy, _source(project.namespace, project.name))
    state.task_store()  # opened here, so the copy shares it rather than opening its own
    runtime = project.config.runtime.model_copy(
        update={"saved_results": state.config.runtime.saved_results}
    )
    config = project.config.model_copy(update={"server": state.config.server, "runtime": runtime})
    observer = state.observer.for_project(
        project.namespace,
        project.name,
        from_api=project.from_api,
        servers=[server.name for server in project.config.mcp.servers],
    )
    return dataclasses.replace(
        state, config=config, outside_config=project.from_api, observer=observer
    )


def store_for(state: ServiceState) -> ProjectStore:
    """The projects of the server's home, written and read under its request policy."""
    server = state.config.server
    return ProjectStore(
        state.home, state.policy, max_depth=server.max_config_depth, store=server.store
    )


def _valid(name: str) -> bool:
    # fullmatch: `$` would let a name end in a newline
    return bool(NAME_PATTERN.fullmatch(name)) and name not in (".", "..")


def _source(namespace: str, name: str) -> str:
    return f"{namespace}/{name}/{CONFIG_FILENAME}"


def _key_line(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^{re.escape(key)}\s*:", line):
            return number
    return 1


def _write_temp(path: Path, text: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=".farmhand-", suffix=".yaml.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)
