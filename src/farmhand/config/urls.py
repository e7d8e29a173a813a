"""The check every URL a config names passes (a model backend's, an MCP server's)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def http_url(value: str, owner: str = "") -> str:
    """`value` if it is an http:// or https:// URL with a host and a usable port; else a
    ValueError that says what to fix (the URL parser's own, for `[::1` or port 99999,
    included). `owner` follows the URL in the message, e.g. " of server 'fs'"."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - reading it checks the port: a number from 0 to 65535
    except ValueError as exc:
        raise ValueError(
            f"base_url {value!r}{owner} is not a valid URL ({exc}); write it like"
            " http://host:8080/v1"
        ) from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"base_url {value!r}{owner} must start with http:// or https://")
    if not parts.hostname:
        raise ValueError(
            f"base_url {value!r}{owner} names no host; write it like http://host:8080/v1"
        )
    return value


def shown_backend(url: str) -> str:
    """`url` as it may be shown to anyone: without a user, password or query string
    (where a key could ride)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(an invalid URL)"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
