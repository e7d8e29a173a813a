"""An async client for llama.cpp's llama-server HTTP API.

It knows no endpoint in particular: the llama_* tools name them. What it owns is turning
every way a request can fail into one LlamaServerError whose text tells a model (or a person)
what to do next: start the server, wait for the model, shorten the request, set the key.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import httpx

from farmhand.errors import LlamaServerError
from farmhand.llamaserver.settings import LlamaServerSettings

NO_MODEL = "No model loaded. Use llama_load_model or start llama-server with -m flag."


class LlamaServerClient:
    """Requests to one llama-server. `url` can move (llama_start on another port)."""

    def __init__(
        self, settings: LlamaServerSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.settings = settings
        self.url = settings.url
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._http = httpx.AsyncClient(transport=transport, headers=headers)

    def retarget(self, url: str) -> None:
        """Send later requests to `url` (the server llama_start just started)."""
        self.url = url.rstrip("/")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get_json(self, path: str, *, timeout_ms: int | None = None) -> Any:
        return _json_of(await self.request("GET", path, timeout_ms=timeout_ms), path)

    async def post_json(self, path: str, body: Any, *, timeout_ms: int | None = None) -> Any:
        response = await self.request("POST", path, body=body, timeout_ms=timeout_ms)
        return _json_of(response, path)

    async def get_text(self, path: str) -> str:
        return (await self.request("GET", path)).text

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        timeout_ms: int | None = None,
        accept: Collection[int] = (),
    ) -> httpx.Response:
        """The response to `method path` if it was a success or its status is in `accept`;
        a LlamaServerError otherwise."""
        ms = timeout_ms or self.settings.timeout_ms
        try:
            request = self._http.build_request(
                method, self.url + path, json=body, timeout=ms / 1000
            )
            response = await _send_once_more_if_stale(self._http, request)
        except httpx.TimeoutException:
            raise LlamaServerError(
                f"Request timed out after {ms}ms. Try reducing max_tokens or check server load."
            ) from None
        except (httpx.ConnectError, httpx.RemoteProtocolError):
            # RemoteProtocolError: the server closed the connection mid-request (it crashed
            # or is shutting down), which to the caller is the same as not running.
            raise LlamaServerError(
                f"Cannot connect to llama-server at {self.url}. Is it running?"
                " Use llama_start or start it manually."
            ) from None
        except httpx.HTTPError as exc:
            raise LlamaServerError(
                f"Request to llama-server at {self.url}{path} failed: {exc}"
            ) from None
        if response.is_success or response.status_code in accept:
            return response
        raise LlamaServerError(explain_failure(method, path, response))


def server_message(response: httpx.Response) -> str:
    """The error text llama-server put in its body ({"error": {"message"}}), else the body."""
    try:
        payload = response.json()
    except ValueError:
        return response.text.strip()[:500]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return json.dumps(payload)[:500]


def explain_failure(method: str, path: str, response: httpx.Response) -> str:
    """What went wrong with an HTTP error answer, and what to do about it."""
    status = response.status_code
    message = server_message(response)
    lowered = message.lower()
    if status == 401:
        return (
            f"llama-server refused the request ({message or 'invalid API key'}). Set"
            " LLAMA_API_KEY to the key llama-server was started with (--api-key)."
        )
    if status == 503 and "loading" in lowered:
        return (
            "llama-server is still loading its model. Try again in a moment;"
            " llama_health says when it is ready."
        )
    if "model name is missing" in lowered:
        return (
            "llama-server is in router mode: name the model to use (`model`; llama_models"
            f" lists them) or load one with llama_load_model. (llama-server said: {message})"
        )
    if "no model" in lowered or "not loaded" in lowered:
        return f"{NO_MODEL} (llama-server said: {message})"
    if status == 404 and not message.startswith("{"):
        return (
            f"llama-server has no endpoint {method} {path} ({message or 'not found'}):"
            " this build or mode of llama-server does not serve it."
        )
    detail = f": {message}" if message else ""
    return f"llama-server answered {status} to {method} {path}{detail}"


def _json_of(response: httpx.Response, path: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise LlamaServerError(
            f"llama-server answered {path} with something other than JSON:"
            f" {response.text[:200]!r}. Is LLAMA_SERVER_URL pointing at a llama-server?"
        ) from None


async def _send_once_more_if_stale(
    client: httpx.AsyncClient, request: httpx.Request
) -> httpx.Response:
    """`client.send(request)`, sent once more if the server closed the connection before
    answering: a kept-alive connection closed as it was reused (the router mode's proxy,
    llama-server's idle timeout) never delivered the request, so sending it again is safe;
    a server that is really gone fails the second try to connect."""
    try:
        return await client.send(request)
    except httpx.RemoteProtocolError:
        return await client.send(request)
