"""`farmhand config show` and `farmhand config validate`."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
import yaml
from rich.syntax import Syntax

from farmhand.cli.common import ConfigOption, console, user_errors
from farmhand.config import FarmhandConfig, find_config, load_config, mask_secrets
from farmhand.config.loader import describe_source

config_app = typer.Typer(
    help="Inspect and check the config (farmhand.yaml, llamafarm.yaml layout).",
    no_args_is_help=True,
)


@config_app.command("show")
def show(
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of YAML.")] = False,
) -> None:
    """Print the resolved config: defaults filled in, ${env:...} expanded, secrets masked."""
    with user_errors():
        path = find_config(config)
        resolved = load_config(path)
    data = mask_secrets(resolved.model_dump(mode="json", exclude_none=True))
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    text = f"# {describe_source(path)}; secrets masked\n" + _to_yaml(data)
    if console.is_terminal:
        console.print(Syntax(text, "yaml", background_color="default"))
    else:
        typer.echo(text, nl=False)


@config_app.command("validate")
def validate(config: ConfigOption = None) -> None:
    """Check the config; print every problem with its file, line and key path."""
    with user_errors():
        path = find_config(config)
        resolved = load_config(path)
    typer.echo(f"ok: {describe_source(path)} ({_counts(resolved)})")


def _counts(config: FarmhandConfig) -> str:
    servers, models = len(config.mcp.servers), len(config.runtime.models)
    return (
        f"{servers} server{'' if servers == 1 else 's'}, {models} model{'' if models == 1 else 's'}"
    )


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML has no type stubs here
    """Writes multi-line strings (prompts) as `|` blocks instead of quoted one-liners."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def _to_yaml(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True))
