"""What a remote backend's failures say to the user, worded once for every HTTP provider
(OpenAI-compatible servers, Anthropic): an HTTP error status with the server's own
message, and a transport failure with the setting to change."""

from __future__ import annotations

import json

from farmhand.providers.backend_http import Timeouts, TransportError

SHOWN = 200
"""Characters of a bad line or body quoted in an error message."""


def clip(text: str, limit: int = SHOWN) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def error_detail(body: bytes) -> str:
    """The server's own error message from the body, whatever shape it uses."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return clip(text) or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return clip(str(error["message"]))
        for value in (error, data.get("detail"), data.get("message")):
            if isinstance(value, str) and value:
                return clip(value)
            if value:  # FastAPI validation errors: a list of dicts
                return clip(json.dumps(value, ensure_ascii=False))
    return clip(json.dumps(data, ensure_ascii=False))


def status_message(
    status: int, reason: str, body: bytes, *, url: str, base_url: str, model: str, keyed: bool
) -> str:
    """An HTTP error answer; `keyed`: an API key was sent."""
    message = f"{url} answered HTTP {status} {reason}: {error_detail(body)}"
    if status in (401, 403):
        sent = "an api key was sent but refused" if keyed else "no api key was sent"
        message += f" ({sent}; check the provider's api_key)"
    elif status == 404:
        message += f" (check base_url {base_url!r} and model {model!r})"
    return message


def transport_message(
    exc: TransportError, *, url: str, base_url: str, timeouts: Timeouts, provider: str
) -> str:
    """A request that failed before or while its answer arrived."""
    detail = exc.detail
    if exc.kind == "connect_timeout":
        return f"cannot reach {url}: no connection within {timeouts.connect}s (connect timeout)"
    if exc.kind == "read_timeout":
        return (
            f"{url} sent nothing for {timeouts.read}s (read timeout): the model is stuck or "
            f"slower than that; raise the timeout of provider {provider!r} if it is just slow"
        )
    if exc.kind == "connect":
        return f"cannot reach {url}: is the server running? ({detail})"
    if exc.kind == "invalid_url":
        example = "http://localhost:8080/v1"
        return f"invalid base_url {base_url!r} ({detail}); expected e.g. {example}"
    if exc.kind == "closed":
        return f"{url} closed the connection without answering ({detail}); is it restarting?"
    if exc.kind == "broke_off":
        return f"the connection to {url} broke off during the response ({detail})"
    return f"request to {url} failed: {detail}"
