"""Pulling a catalog model on a client's request (Ollama's `/api/pull`), step by step.

Pulling pip-installs the model's pinned packages into the server's Python and writes a
file of up to a gigabyte, so it is the operator's call (`server.allow_pull`): by default
only clients on this machine may pull, which is what Ollama users expect (Ollama serves on
loopback and lets its clients pull); a server open to other machines pulls for them only
with `allow_pull: true`. Behind a reverse proxy every client looks local: set it to false
(or true) there explicitly.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncGenerator

import anyio.to_thread

from farmhand.errors import ModelError, PolicyError, UnknownModelError
from farmhand.models.catalog import CatalogModel, lookup
from farmhand.models.pulling import PullStep, pull_steps

__all__ = ["PullStep", "admit_pull", "catalog_model", "pull"]
from farmhand.service.state import ServiceState


def admit_pull(state: ServiceState, client_host: str | None) -> None:
    """PolicyError (403) unless the operator lets this client pull."""
    allowed = state.config.server.allow_pull
    if allowed is True:
        return
    if allowed == "loopback" and _is_loopback(client_host):
        return
    who = "any client" if allowed is False else f"clients on other machines ({client_host})"
    raise PolicyError(
        f"pulling models is not allowed for {who}: the operator decides with"
        " server.allow_pull in farmhand.yaml (loopback, true or false), or run"
        " `farmhand pull <model>` on the server"
    )


def catalog_model(name: str) -> CatalogModel:
    """The catalog model `name` names; UnknownModelError (404) listing the known ones."""
    try:
        return lookup(name)
    except ModelError as exc:
        raise UnknownModelError(f"{exc}; `farmhand models` lists them") from None


async def pull(
    state: ServiceState, name: str, client_host: str | None
) -> AsyncGenerator[PullStep, None]:
    """The steps of pulling model `name`; refused and unknown names fail before the first.
    The blocking work (pip, assembling, hashing) runs in worker threads, one step at a
    time."""
    admit_pull(state, client_host)
    model = catalog_model(name)
    yield PullStep("pulling manifest")
    async with state.files.pulling:
        steps = pull_steps(model)
        try:
            while (step := await anyio.to_thread.run_sync(next, steps, None)) is not None:
                yield step
        finally:
            steps.close()


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
