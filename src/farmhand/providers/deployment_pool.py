"""One model served by several deployments (a model's `deployments:`): `DeploymentPool`,
a Provider over one HTTP provider per deployment.

- Each turn goes to the deployment with the fewest turns in flight per unit of weight;
  among equals, the one sent the fewest so far per weight (so a quiet pool takes turns),
  then the heavier.
- A deployment that fails as a backend does (no connection, a broken connection, a 429
  or a 5xx: `BackendFailure.backend_down`) is cooled down: left out for 1 s, doubling
  with each failure in a row up to 30 s, or as long as a Retry-After asked (up to 5
  min). When its time is up, a health check (`probe`: GET base_url/models) runs in the
  background; it rejoins only once that answers.
- A turn that fails before its first event is sent to another deployment, each at most
  once per turn: nothing of it reached the client yet. Once a turn has yielded an event,
  it is never sent again: a failure then ends it with an error that says so.
- When no deployment is left, `DeploymentsDownError` (503 with Retry-After) says how many
  there are, why each is out and when the next is tried.

All state is touched from the event loop only, never across an await between reading and
writing it, so it needs no lock. `snapshot()` is the read-only view (`/api/ps`, metrics).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal, Protocol

from farmhand.config.urls import shown_backend
from farmhand.errors import DeploymentsDownError, ProviderError
from farmhand.messages import Message, StreamEvent
from farmhand.providers.backend_errors import BackendFailure
from farmhand.providers.base import GenerationSettings
from farmhand.providers.token_count import TokenCounter
from farmhand.tools.definition import ToolDefinition

log = logging.getLogger("farmhand.providers.pool")

FIRST_COOLDOWN = 1.0
"""Seconds a deployment is left out after its first failure in a row."""
MAX_COOLDOWN = 30.0
"""The longest a run of failures leaves a deployment out before it is checked again."""
MAX_RETRY_AFTER = 300.0
"""The longest a backend's own Retry-After is honoured."""
PROBE_SECONDS = 5.0
"""How long a health check may take before the deployment counts as still down."""

Health = Literal["healthy", "cooling", "checking"]


class Deployed(Protocol):
    """What the pool needs of one deployment's provider (an `HTTPProvider`)."""

    base_url: str

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]: ...

    async def probe(self, seconds: float) -> None: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class DeploymentState:
    """One deployment as `DeploymentPool.snapshot()` sees it."""

    url: str
    """Its base_url without credentials or query."""
    weight: float
    health: Health
    """healthy: in rotation; cooling: left out after a failure; checking: its health check
    is running."""
    in_flight: int
    """Turns it is answering now."""
    sent: int
    """Turns sent to it since the pool was built."""
    served: int
    """Turns it answered to the end."""
    failures: int
    """Failures in a row (0 while it answers)."""
    total_failures: int
    retry_in: float | None
    """Seconds until its health check, while it cools down."""
    last_error: str
    """Why it last failed, in a few fixed words ("" if it never did)."""


@dataclass
class Deployment:
    """One deployment's provider and its counters, as the pool keeps them."""

    provider: Deployed
    weight: float
    index: int
    in_flight: int = 0
    sent: int = 0
    served: int = 0
    failures: int = 0
    total_failures: int = 0
    cooling_until: float | None = None
    checking: bool = False
    last_error: str = ""
    last_detail: str = ""

    @property
    def url(self) -> str:
        return shown_backend(self.provider.base_url)

    def rank(self) -> tuple[float, float, float, int]:
        return (self.in_flight / self.weight, self.sent / self.weight, -self.weight, self.index)


class DeploymentPool:
    """A Provider that spreads a model's turns over its deployments (see the module's
    docstring). `clock` is monotonic seconds (a test passes its own)."""

    def __init__(
        self,
        name: str,
        model: str,
        deployments: Sequence[tuple[Deployed, float]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not deployments:
            raise ValueError("a deployment pool needs at least one deployment")
        self.name = name
        self.model = model
        """The config's name of the model, for messages."""
        self.deployments = [Deployment(p, w, i) for i, (p, w) in enumerate(deployments)]
        self._clock = clock
        self._checks: dict[int, asyncio.Task[None]] = {}

    def snapshot(self) -> list[DeploymentState]:
        """Every deployment's state now, in the config's order."""
        now = self._clock()
        return [
            DeploymentState(
                url=d.url,
                weight=d.weight,
                health=_health(d),
                in_flight=d.in_flight,
                sent=d.sent,
                served=d.served,
                failures=d.failures,
                total_failures=d.total_failures,
                retry_in=None if d.cooling_until is None else max(0.0, d.cooling_until - now),
                last_error=d.last_error,
            )
            for d in self.deployments
        ]

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        tried: set[int] = set()
        while True:
            deployment = await self._choose(tried)
            tried.add(deployment.index)
            deployment.in_flight += 1
            deployment.sent += 1
            events_sent = 0
            try:
                turn = deployment.provider.stream(messages, tools, settings)
                async with aclosing(turn) as events:
                    async for event in events:
                        events_sent += 1
                        yield event
            except ProviderError as exc:
                down = isinstance(exc, BackendFailure) and exc.backend_down
                if down:
                    self._cool(deployment, exc)
                if events_sent:
                    raise _cut_short(self.model, deployment, events_sent, exc) from exc
                if not down:
                    raise
                log.warning("model %r: retrying a turn elsewhere: %s", self.model, exc)
                continue
            finally:
                deployment.in_flight -= 1
            deployment.served += 1
            deployment.failures = 0
            return

    async def aclose(self) -> None:
        checks, self._checks = list(self._checks.values()), {}
        for check in checks:
            check.cancel()
        for deployment in self.deployments:
            await deployment.provider.aclose()

    async def _choose(self, tried: set[int]) -> Deployment:
        """The deployment for the next try of a turn; waits for health checks that are
        running when nothing else is left; DeploymentsDownError when nothing is."""
        self._start_due_checks()
        ready = self._ready(tried)
        if not ready:
            loop = asyncio.get_running_loop()
            running = [
                task
                for i, task in self._checks.items()
                if i not in tried and not task.done() and task.get_loop() is loop
            ]
            if running:
                await asyncio.wait(running, timeout=PROBE_SECONDS)
                ready = self._ready(tried)
        if not ready:
            raise self._all_down(tried)
        return min(ready, key=Deployment.rank)

    def _ready(self, tried: set[int]) -> list[Deployment]:
        return [d for d in self.deployments if d.cooling_until is None and d.index not in tried]

    def _start_due_checks(self) -> None:
        now, loop = self._clock(), asyncio.get_running_loop()
        for deployment in self.deployments:
            due = deployment.cooling_until is not None and deployment.cooling_until <= now
            running = self._checks.get(deployment.index)
            # A check begun in an event loop that has since ended never finishes (a
            # provider can outlive a loop: tests, `farmhand eval` runs): start another.
            if running is not None and running.get_loop() is loop:
                continue
            if due:
                deployment.checking = True
                self._checks[deployment.index] = loop.create_task(self._check(deployment))

    async def _check(self, deployment: Deployment) -> None:
        try:
            await deployment.provider.probe(PROBE_SECONDS)
        except ProviderError as exc:
            self._cool(deployment, exc)
        except Exception as exc:  # a check must never kill the loop's task silently
            self._cool(deployment, ProviderError(f"health check failed: {exc!r}"))
        else:
            log.info("model %r: deployment %s is back", self.model, deployment.url)
            deployment.cooling_until = None
            deployment.failures = 0
        finally:
            deployment.checking = False
            if self._checks.get(deployment.index) is asyncio.current_task():
                del self._checks[deployment.index]

    def _cool(self, deployment: Deployment, exc: ProviderError) -> None:
        deployment.total_failures += 1
        deployment.last_error, deployment.last_detail = exc.brief, str(exc)
        now = self._clock()
        if deployment.cooling_until is not None and deployment.cooling_until > now:
            # Turns that were in flight when it went down fail together: one failure.
            return
        deployment.failures += 1
        seconds = min(MAX_COOLDOWN, FIRST_COOLDOWN * 2 ** (deployment.failures - 1))
        asked = exc.retry_after if isinstance(exc, BackendFailure) else None
        if asked is not None:
            seconds = max(seconds, min(asked, MAX_RETRY_AFTER))
        deployment.cooling_until = now + seconds
        log.warning(
            "model %r: deployment %s left out for %.1f s (%d failures in a row): %s",
            self.model,
            deployment.url,
            seconds,
            deployment.failures,
            exc,
        )

    def _all_down(self, tried: set[int]) -> DeploymentsDownError:
        now = self._clock()
        count = len(self.deployments)
        reasons = "; ".join(f"{d.url}: {_why_out(d, now, tried)}" for d in self.deployments)
        waits = [d.cooling_until - now for d in self.deployments if d.cooling_until is not None]
        wait = max(0.0, min(waits)) if waits else 0.0
        return DeploymentsDownError(
            f"model {self.model!r}: none of its {count} deployment{'s' if count > 1 else ''}"
            f" can take the request ({reasons}); the next is tried again in {wait:.1f} s:"
            " retry then, or check those servers",
            retry_after=max(1, math.ceil(wait)),
        )


class CountingDeploymentPool(DeploymentPool):
    """A pool whose deployments count tokens (Anthropic's `/messages/count_tokens`): a
    count goes to a deployment as a turn does, and to another when that one is down."""

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        tried: set[int] = set()
        while True:
            deployment = await self._choose(tried)
            tried.add(deployment.index)
            counter = deployment.provider
            assert isinstance(counter, TokenCounter)  # the factory builds this pool for those
            try:
                return await counter.count_tokens(messages, tools)
            except BackendFailure as exc:
                if not exc.backend_down:
                    raise
                self._cool(deployment, exc)


def _health(deployment: Deployment) -> Health:
    if deployment.checking:
        return "checking"
    return "healthy" if deployment.cooling_until is None else "cooling"


def _why_out(deployment: Deployment, now: float, tried: set[int]) -> str:
    if deployment.cooling_until is None:
        return "failed for this request" if deployment.index in tried else "healthy"
    left = max(0.0, deployment.cooling_until - now)
    what = "health check running" if deployment.checking else f"left out {left:.1f} s more"
    return f"{what} after {deployment.failures} failure(s), last: {deployment.last_detail}"


def _cut_short(
    model: str, deployment: Deployment, events: int, exc: ProviderError
) -> ProviderError:
    return ProviderError(
        f"model {model!r}: deployment {deployment.url} failed after its answer had begun"
        f" ({events} part(s) sent); a started answer is never sent again to another"
        f" deployment, so this one ends here: {exc}",
        brief=f"{exc.brief} after the answer had begun",
    )
