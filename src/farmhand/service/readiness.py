"""What `/ready` checks, cheaply enough for a load balancer to ask every few seconds: the
store answers a trivial statement, and each configured model could serve a turn (loaded
already; an embedded model's GGUF on disk, or its catalog packages installed so it can be
assembled; a backend's host accepts a TCP connection). No GGUF is loaded, no turn is asked.

The result names each check and a fixed short reason: the probe is open to anyone (a load
balancer sends no key), so no URL, path, host or error text goes into it. The reasons are
logged (warning) for the operator.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio

from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError
from farmhand.models.assemble import local_file, missing_packages
from farmhand.models.catalog import DEFAULT_MODEL, lookup
from farmhand.providers.factory import backend_urls
from farmhand.service.database import is_postgresql
from farmhand.service.state import ServiceState

log = logging.getLogger("farmhand.service.readiness")

CHECK_TIMEOUT = 2.0
"""Seconds one check may take before it counts as failed (a probe must answer quickly)."""
OK = "ok"


@dataclass(frozen=True)
class Readiness:
    """Each check's outcome: "ok" or a short fixed reason."""

    store: str
    models: dict[str, str]

    @property
    def ready(self) -> bool:
        return self.store == OK and all(state == OK for state in self.models.values())

    def to_json(self) -> dict[str, object]:
        return {
            "status": "ready" if self.ready else "not ready",
            "checks": {"store": self.store, "models": self.models},
        }


async def readiness(state: ServiceState) -> Readiness:
    """The store's and every configured model's state, checked at once."""
    models = state.config.runtime.models or [state.model_config(None)]
    loaded = {entry.config.name for entry in state.loaded()}
    results: dict[str, str] = {}

    # A state built with a provider factory of its own (a program's, a test's) answers with
    # providers the config's entries do not describe: there is nothing of theirs to check.
    own_providers = state.own_providers

    async def check_model(model: ModelConfig) -> None:
        if model.name in loaded or own_providers:
            results[model.name] = OK
        else:
            results[model.name] = await model_state(model)

    async with anyio.create_task_group() as tg:
        for model in models:
            tg.start_soon(check_model, model)
        store = await store_state(state)
    return Readiness(store, {m.name: results[m.name] for m in models})


async def store_state(state: ServiceState) -> str:
    """ "ok" when the store answers `SELECT 1` within CHECK_TIMEOUT."""

    def ping() -> None:
        state.task_store().ping()

    try:
        if not is_postgresql(state.config.server.store):
            ping()  # a local file: quicker than a thread hop
            return OK
        with anyio.fail_after(CHECK_TIMEOUT):
            await anyio.to_thread.run_sync(ping, abandon_on_cancel=True)
        return OK
    except TimeoutError:
        log.warning("not ready: the store did not answer within %.0f s", CHECK_TIMEOUT)
        return "timeout"
    except Exception as exc:  # psycopg's, the pool's, sqlite3's, a ConfigError: all say why
        log.warning("not ready: the store cannot be used: %s", exc)
        return "unreachable"


async def model_state(model: ModelConfig) -> str:
    """Whether `model` could serve a turn now, without loading it: with several
    deployments, whether one could (its pool routes around the others)."""
    urls = backend_urls(model)
    if not urls:
        return embedded_state(model)
    states: list[str] = []

    async def check(url: str) -> None:
        states.append(await backend_state(model.name, url))

    async with anyio.create_task_group() as tg:
        for url in urls:
            tg.start_soon(check, url)
    return OK if OK in states else states[0]


def embedded_state(model: ModelConfig) -> str:
    source = model.model_path or model.model or DEFAULT_MODEL
    if local_file(source) is not None:
        return OK
    try:
        missing = missing_packages(lookup(source))
    except ModelError:
        log.warning("not ready: model %s: its GGUF file is not there", model.name)
        return "model file missing"
    if missing:
        log.warning("not ready: model %s: packages not installed: %s", model.name, missing)
        return "not pulled"
    return OK  # assembled from its installed packages on first use


async def backend_state(name: str, url: str) -> str:
    """ "ok" when the backend's host accepts a TCP connection within CHECK_TIMEOUT (nothing
    is sent: a request would cost the backend a turn, or need its key)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with anyio.fail_after(CHECK_TIMEOUT):
            _, writer = await asyncio.open_connection(parts.hostname, port)
        writer.close()
        return OK
    except (OSError, TimeoutError, ValueError) as exc:
        log.warning("not ready: model %s: its backend is unreachable (%s)", name, exc)
        return "backend unreachable"
