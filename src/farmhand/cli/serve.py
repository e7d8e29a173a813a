"""`farmhand serve`: the OpenAI- and Ollama-compatible HTTP APIs (and /mcp, /a2a) under uvicorn.

Loopback by default. Any other address needs API keys (FARMHAND_API_KEYS), since the API
runs models and starts MCP servers on this machine. Ctrl-C / SIGTERM drain: new requests get
a 503, the ones in flight finish (up to `server.drain_timeout` or --drain-timeout seconds),
then the MCP pool and the models close and the process exits 0 (`draining_server.py`).
"""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path
from typing import Annotated

import typer

from farmhand.cli.common import (
    ConfigOption,
    err_console,
    fail,
    project_config,
    user_errors,
)
from farmhand.cli.log_format import LogFormat, serve_logging
from farmhand.config.loader import describe_source
from farmhand.config.template_files import serve_with_template_file
from farmhand.server.auth import API_KEYS_VARIABLE, api_keys_from_env

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 14345
log = logging.getLogger("farmhand.serve")


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
    drain_timeout: Annotated[
        float | None,
        typer.Option(
            "--drain-timeout",
            "--graceful-timeout",
            help="Seconds the requests in flight get to finish after SIGTERM or Ctrl-C"
            " (default: server.drain_timeout, 30).",
            min=0.1,
            max=3600,
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A Host name clients use to reach the API besides loopback (repeatable;"
            " also server.allowed_hosts);"
            " --host is allowed already when it is a name or address other than 0.0.0.0/::.",
        ),
    ] = None,
    log_level: Annotated[
        str,
        typer.Option(
            help="farmhand's and uvicorn's log level: debug adds each request's start and the"
            " chats' MCP servers, tools and calls; warning drops the line per request."
        ),
    ] = "info",
    log_format: Annotated[
        LogFormat | None,
        typer.Option(
            help="text, or json: one JSON object a line (default: server.log_format, text)."
        ),
    ] = None,
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
    from farmhand.cli.draining_server import CUT_GRACE, DrainingServer
    from farmhand.server.drain import Drain
    from farmhand.service.database import is_postgresql, prepare_store

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
        form = log_format or cfg.server.log_format
        serve_logging(log_level, form)
        hosts = list(allowed_host or [])
        if not is_loopback(host) and host not in ("0.0.0.0", "::", "[::]"):
            hosts.append(host)
        drain = Drain(drain_timeout or cfg.server.drain_timeout)
        app = create_app(cfg, api_keys=keys, allowed_hosts=hosts, drain=drain)
        prepare_store(cfg.server.store)  # a shared store's tables, before any request
        banner = (
            f"farmhand serving on http://{host}:{port} (playground: /, OpenAI: /v1, Ollama: /api)"
            + (" with API keys" if keys else "")
            + f"; config: {describe_source(cfg.source)}"
        )
        if form == "json":  # every line on stderr is one JSON object
            log.info(banner)
        else:
            err_console.print(banner, highlight=False)
        log.debug(
            "models: %s; store: %s; %d API key(s); drain_timeout %g s",
            ", ".join(f"{m.name} ({m.provider})" for m in cfg.runtime.models) or "default",
            "postgresql" if is_postgresql(cfg.server.store) else "sqlite",
            len(keys),
            drain.timeout,
        )
        server = DrainingServer(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level=log_level,
                # farmhand's request log (`server/request_log.py`) replaces uvicorn's.
                access_log=False,
                # json: uvicorn's lines go through the root handler and its JSON formatter
                log_config=None if form == "json" else uvicorn.config.LOGGING_CONFIG,
                timeout_graceful_shutdown=CUT_GRACE,
                lifespan="on",
            ),
            drain,
        )
        server.run()
        if not server.started:  # uvicorn said why (the port is taken, ...)
            raise typer.Exit(3)
