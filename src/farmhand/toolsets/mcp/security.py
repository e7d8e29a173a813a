"""What a stdio MCP server may run and see: command checks and an allowlisted environment.

A server is a program farmhand starts on the user's machine, so it gets only the environment
it needs (never the API keys in farmhand's own), and commands that are shells, privilege
escalation, deletion or raw network tools are refused unless the config says
`allow_unsafe_command: true`. Servers that come from API requests are held to an allowlist
instead (`policy.RequestPolicy`), before they reach this module.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
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


def validate_command(server: McpServerConfig) -> None:
    """Refuse a stdio server of the operator's config whose command is a shell, privilege
    escalation, deletion or a raw network tool, unless it says `allow_unsafe_command`."""
    if server.transport != "stdio" or server.command is None or server.allow_unsafe_command:
        return
    for name in _command_names(server.command):
        if name in UNSAFE_COMMANDS:
            raise ConfigError(
                f"MCP server {server.name!r}: refusing to run {server.command!r}, which is"
                f" {UNSAFE_COMMANDS[name]}; run the server's own program instead, or set"
                " `allow_unsafe_command: true` on this server if you trust it"
            )


def _command_names(command: str) -> set[str]:
    """The command's own name and, when it is a link, the name of what it points to
    (so /usr/bin/sh -> dash, or a renamed copy of bash reached by a symlink, are caught)."""
    resolved = shutil.which(command) or command
    return {_bare(command), _bare(os.path.realpath(resolved))}


def _bare(command: str) -> str:
    name = Path(command).name.lower()
    return name.removesuffix(".exe")
