"""Loading and unloading models on a llama-server in router mode.

The router answers POST /models/load at once and starts the model's own server process in
the background; a request routed to it before it is up fails ("proxy error: Could not
establish connection"). So a load here returns when GET /models reports the model
`loaded` (or its process failed, or the request timeout passed), and an unload when it
reports `unloaded`: what someone who asked to load a model expects to be true afterwards.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio

from farmhand.errors import LlamaServerError
from farmhand.llamaserver.client import LlamaServerClient

Action = Literal["load", "unload"]
POLL_SECONDS = 0.1


async def change_model(client: LlamaServerClient, action: Action, model: str) -> dict[str, Any]:
    """{model, status, response}: `status` is the router's word for the model afterwards."""
    response = await client.request(
        "POST", f"/models/{action}", body={"model": model}, accept={404}
    )
    if response.status_code == 404:
        raise LlamaServerError(
            f"llama-server knows no model {model!r} to {action}. llama_models lists the ones"
            " it has (in router mode, the GGUF files of its --models-dir, named without"
            " .gguf); a llama-server started with one model (-m) cannot load others."
        )
    wanted = "loaded" if action == "load" else "unloaded"
    status = await _settle(client, model, wanted, action)
    return {"model": model, "status": status, "response": response.json()}


async def _settle(client: LlamaServerClient, model: str, wanted: str, action: Action) -> str:
    deadline = time.monotonic() + client.settings.timeout_ms / 1000
    while True:
        status = await _status(client, model)
        value = status.get("value")
        if value is None or value == wanted:
            return wanted  # reached, or a build that reports no status: its answer stands
        if status.get("failed"):
            raise LlamaServerError(
                f"llama-server could not {action} model {model!r}: its process exited with"
                f" code {status.get('exit_code')}. llama-server's log says why."
            )
        if time.monotonic() > deadline:
            return str(value)  # still e.g. "loading": say so rather than wait forever
        await anyio.sleep(POLL_SECONDS)  # the router has no per-model wait: poll, bounded


async def _status(client: LlamaServerClient, model: str) -> dict[str, Any]:
    response = await client.request("GET", "/models", accept={404})
    if response.status_code == 404:
        return {}
    listing = response.json()
    entries = listing.get("data", []) if isinstance(listing, dict) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == model:
            status = entry.get("status")
            return status if isinstance(status, dict) else {}
    return {}
