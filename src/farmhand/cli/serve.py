"""`farmhand serve`: the OpenAI- and Ollama-compatible HTTP APIs (and /mcp, /a2a) under uvicorn.

Loopback by default. Any other address needs API keys (FARMHAND_API_KEYS), since the API
runs models and starts MCP servers on this machine. Ctrl-C / SIGTERM shut down gracefully:
in-flight requests finish (up to --graceful-timeout seconds), then the MCP pool closes.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from farmhand.cli.common import (
    ConfigOption,
    err_console,
    fail,
    project_config,
    quiet_logging,
    user_errors,
)
from farmhand.config.loader import describe_source
from farmhand.config.template_files import serve_with_template_file
from farmhand.server.auth import API_KEYS_VARIABLE, api_keys_from_env

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 14345


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.", min=0, max=65535)] = DEFAULT_PORT,
    graceful_timeout: Annotated[
        int, typer.Option(help="Seconds in-flight requests get to finish on shutdown.")
    ] = 30,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A Host name clients use to reach the API besides loopback (repeatable;"
            " also server.allowed_hosts);"
            " --host is allowed already when it is a name or address other than 0.0.0.0/::.",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    chat_template_file: Annotated[
        Path | None,
        typer.Option(
            "--chat-template-file",
            help="A Jinja chat template for the default model (the embedded one a request"
            " gets when it names none), instead of its GGUF's own.",
            dir_okay=False,
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the OpenAI (/v1) and Ollama (/api) APIs with server-side MCP tools, /mcp and /a2a."""
    import uvicorn

    from farmhand.assembly import create_app
    from farmhand.service.database import prepare_store

    with user_errors():
        cfg = project_config(config)
        if chat_template_file is not None:
            cfg = serve_with_template_file(cfg, chat_template_file)
        keys = api_keys_from_env() | frozenset(k for k in cfg.server.api_keys if k)
        if not is_loopback(host) and not keys:
            fail(
                f"refusing to listen on {host}, which is reachable from other machines, without"
                f" API keys; set {API_KEYS_VARIABLE}=<key>[,<key>...] or server.api_keys in the"
                " config (clients send"
                " `Authorization: Bearer <key>`), or listen on 127.0.0.1"
            )
        quiet_logging(log_level)
        hosts = list(allowed_host or [])
        if not is_loopback(host) and host not in ("0.0.0.0", "::", "[::]"):
            hosts.append(host)
        app = create_app(cfg, api_keys=keys, allowed_hosts=hosts)
        prepare_store(cfg.server.store)  # a shared store's tables, before any request
        err_console.print(
            f"farmhand serving on http://{host}:{port} (playground: /, OpenAI: /v1, Ollama: /api)"
            + (" with API keys" if keys else "")
            + f"; config: {describe_source(cfg.source)}",
            highlight=False,
        )
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level=log_level,
            # Above info the access log prints nothing, but uvicorn would still build each
            # line's arguments for every request.
            access_log=log_level.lower() in ("trace", "debug", "info"),
            timeout_graceful_shutdown=graceful_timeout,
            lifespan="on",
        )
