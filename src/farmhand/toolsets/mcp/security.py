"""What a stdio MCP server may run and see: command checks and an allowlisted environment.

A server is a program farmhand starts on the user's machine, so it gets only the environment
it needs (never the API keys in farmhand's own), and commands that are shells, privilege
escalation, deletion or raw network tools are refused unless the config says
`allow_unsafe_command: true`. Servers started from an API request are held to more: no shell
metacharacters in their arguments, and path arguments inside the allowed directories.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError

# Variables a server may inherit from farmhand's environment: what programs need to find
# their tools, home, locale and temp space. Secrets reach a server only through its `env`.
INHERITED_VARIABLES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ",
        "TMPDIR", "TEMP", "TMP", "NODE_PATH", "PYTHONPATH", "VIRTUAL_ENV",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
        # Windows needs these to start most programs at all.
        "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA",
        "LOCALAPPDATA", "USERPROFILE", "PROGRAMFILES", "HOMEDRIVE", "HOMEPATH",
    }
)  # fmt: skip
INHERITED_PREFIXES = ("LC_",)

SHELLS = frozenset({"sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "csh", "tcsh", "ash"})
UNSAFE_COMMANDS = {
    **dict.fromkeys(SHELLS, "a shell (it would run any command line)"),
    **dict.fromkeys(("sudo", "su", "doas", "pkexec"), "privilege escalation"),
    **dict.fromkeys(("rm", "dd", "shred", "mkfs"), "a command that destroys data"),
    **dict.fromkeys(("curl", "wget", "nc", "ncat", "netcat", "socat"), "a raw network tool"),
}

# Characters a shell would interpret; a server started from a request must not carry them
# (it is not run through a shell, but its own scripts may pass arguments to one).
SHELL_METACHARACTERS = re.compile(r"[;&|`$<>(){}\[\]*?!~#\\\"'\n\r\t\x00]")


def server_environment(
    configured: Mapping[str, str], parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowlisted part of `parent` (farmhand's environment) plus exactly `configured`,
    which wins: a variable the config names is passed even when it is not on the allowlist."""
    source = os.environ if parent is None else parent
    inherited = {
        key: value
        for key, value in source.items()
        if (key.upper() in INHERITED_VARIABLES or key.startswith(INHERITED_PREFIXES))
        and not value.startswith("()")  # exported shell functions
    }
    return inherited | dict(configured)


def validate_command(
    server: McpServerConfig,
    *,
    from_request: bool = False,
    allowed_dirs: Sequence[Path] | None = None,
) -> None:
    """Refuse a stdio server whose command or arguments are unsafe; raise ConfigError.

    `from_request`: the server comes from an API request, not the user's own config, so its
    arguments may not contain shell metacharacters. `allowed_dirs`: path arguments must lie
    inside one of these directories.
    """
    if server.transport != "stdio" or server.command is None:
        return
    if not server.allow_unsafe_command:
        for name in _command_names(server.command):
            if name in UNSAFE_COMMANDS:
                raise ConfigError(
                    f"MCP server {server.name!r}: refusing to run {server.command!r}, which is"
                    f" {UNSAFE_COMMANDS[name]}; run the server's own program instead, or set"
                    " `allow_unsafe_command: true` on this server if you trust it"
                )
    if from_request:
        for arg in server.args:
            if SHELL_METACHARACTERS.search(arg):
                raise ConfigError(
                    f"MCP server {server.name!r}: argument {arg!r} contains shell metacharacters,"
                    " which servers started from an API request may not use; define the server"
                    " in the config file instead"
                )
    if allowed_dirs is not None:
        roots = [Path(d).expanduser().resolve() for d in allowed_dirs]
        for arg in server.args:
            path = _path_in(arg)
            if path is not None and not any(path.is_relative_to(root) for root in roots):
                allowed = ", ".join(str(r) for r in roots) or "none"
                raise ConfigError(
                    f"MCP server {server.name!r}: path argument {arg!r} is outside the allowed"
                    f" directories ({allowed}); use a path inside them"
                )


def _command_names(command: str) -> set[str]:
    """The command's own name and, when it is a link, the name of what it points to
    (so /usr/bin/sh -> dash, or a renamed copy of bash reached by a symlink, are caught)."""
    resolved = shutil.which(command) or command
    return {_bare(command), _bare(os.path.realpath(resolved))}


def _bare(command: str) -> str:
    name = Path(command).name.lower()
    return name.removesuffix(".exe")


def _path_in(arg: str) -> Path | None:
    """The path an argument names (`/x`, `./x`, `~/x`, `--root=/x`), resolved; else None."""
    value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
    if value.startswith(("/", "./", "../", "~")) or value in (".", ".."):
        return Path(value).expanduser().resolve()
    return None
