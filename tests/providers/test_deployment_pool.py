"""DeploymentPool's routing, cooldowns, retries and health checks, over in-process fake
deployments and a fake clock (nothing here sleeps or times anything)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

import anyio
import pytest

from farmhand.errors import DeploymentsDownError, ProviderError
from farmhand.messages import Finish, Message, StreamEvent, TextDelta, Usage
from farmhand.providers.backend_errors import (
    BackendFailure,
    retry_after_seconds,
    status_error,
    transport_error,
)
from farmhand.providers.base import GenerationSettings
from farmhand.providers.deployment_pool import (
    FIRST_COOLDOWN,
    MAX_COOLDOWN,
    MAX_RETRY_AFTER,
    DeploymentPool,
)
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

ASK = [Message.user("hi")]
SETTINGS = GenerationSettings()
REFUSED = "refused"
BREAK = "break after the first part"
HOLD = "hold until released"
DIES = "break once released"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeDeployment:
    """A deployment that answers each turn as its script says: "ok" (two parts and a
    Finish), REFUSED (connection refused), BREAK (one part, then a broken connection),
    HOLD (one part, then waits for `release`), DIES (as HOLD, then a broken connection),
    or an exception to raise at once."""

    def __init__(self, url: str) -> None:
        self.base_url = url
        self.script: list[object] = []
        self.turns = 0
        self.probes = 0
        self.down = False  # what a health check finds
        self.hang = False  # a health check that never ends
        self.release = anyio.Event()
        self.closed = False

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.turns += 1
        step = self.script.pop(0) if self.script else "ok"
        if step == REFUSED:
            raise transport_error(f"cannot reach {self.base_url}: refused", "connect")
        if isinstance(step, Exception):
            raise step
        yield TextDelta(f"from {self.base_url}")
        if step == BREAK:
            raise transport_error(f"{self.base_url} broke off", "broke_off")
        if step in (HOLD, DIES):
            await self.release.wait()
        if step == DIES:
            raise transport_error(f"{self.base_url} broke off", "broke_off")
        yield Finish("stop", Usage())

    async def probe(self, seconds: float) -> None:
        self.probes += 1
        if self.hang:
            await anyio.sleep_forever()
        if self.down:
            raise transport_error(f"cannot reach {self.base_url}: refused", "connect")

    async def aclose(self) -> None:
        self.closed = True


def pool_of(
    *weights: float, clock: Clock | None = None
) -> tuple[DeploymentPool, list[FakeDeployment]]:
    fakes = [FakeDeployment(f"http://b{i}:8080/v1") for i in range(len(weights))]
    pool = DeploymentPool(
        "openai", "m", list(zip(fakes, weights, strict=True)), clock=clock or Clock()
    )
    return pool, fakes


async def answer(pool: DeploymentPool) -> list[StreamEvent]:
    return [event async for event in pool.stream(ASK, [], SETTINGS)]


def text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def settle() -> None:
    """Lets the health checks the pool started run to their end."""
    for _ in range(5):
        await anyio.sleep(0)


async def test_a_quiet_pool_takes_turns_in_proportion_to_weight() -> None:
    pool, fakes = pool_of(1, 2, 1)
    for _ in range(8):
        await answer(pool)
    assert [f.turns for f in fakes] == [2, 4, 2]
    assert [s.served for s in pool.snapshot()] == [2, 4, 2]
    assert all(s.health == "healthy" and s.in_flight == 0 for s in pool.snapshot())


async def test_each_turn_goes_to_the_deployment_with_the_fewest_in_flight() -> None:
    pool, fakes = pool_of(1, 1, 1)
    for fake in fakes:
        fake.script = [HOLD]
    held = [pool.stream(ASK, [], SETTINGS) for _ in range(3)]
    firsts = [await turn.__anext__() for turn in held]  # each holds one deployment busy
    assert sorted(text([e]) for e in firsts) == sorted(f"from {f.base_url}" for f in fakes)
    assert [s.in_flight for s in pool.snapshot()] == [1, 1, 1]
    fakes[1].release.set()
    rest = [e async for e in held[[text([e]) for e in firsts].index("from http://b1:8080/v1")]]
    assert isinstance(rest[-1], Finish)
    assert [s.in_flight for s in pool.snapshot()] == [1, 0, 1]
    # The next turn goes to the one that is free, though it has answered most.
    fakes[1].script = [HOLD]
    fourth = pool.stream(ASK, [], SETTINGS)
    assert text([await fourth.__anext__()]) == "from http://b1:8080/v1"
    for fake in fakes:
        fake.release.set()
    for turn in [*held, fourth]:
        await turn.aclose()
    assert [s.in_flight for s in pool.snapshot()] == [0, 0, 0]


async def test_a_heavier_deployment_takes_more_in_flight_before_it_counts_as_busier() -> None:
    pool, fakes = pool_of(1, 3)
    for fake in fakes:
        fake.script = [HOLD] * 4
    held = [pool.stream(ASK, [], SETTINGS) for _ in range(4)]
    for turn in held:
        await turn.__anext__()
    assert [s.in_flight for s in pool.snapshot()] == [1, 3]
    for fake in fakes:
        fake.release.set()
    for turn in held:
        await turn.aclose()


async def test_a_refused_turn_is_retried_on_another_and_the_failed_one_cools_down() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, 1, clock=clock)
    fakes[0].script = [REFUSED]
    events = await answer(pool)
    assert text(events) == "from http://b1:8080/v1"
    first, second = pool.snapshot()
    assert first.health == "cooling" and first.failures == 1 and first.sent == 1
    assert first.retry_in == FIRST_COOLDOWN
    assert first.last_error == "the model's backend could not be reached"
    assert second.served == 1
    # While it cools down, every turn goes to the other.
    for _ in range(3):
        await answer(pool)
    assert fakes[0].turns == 1 and fakes[1].turns == 4


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_a_429_or_5xx_before_the_first_part_is_retried(status: int) -> None:
    pool, fakes = pool_of(1, 1)
    fakes[0].script = [status_error(f"HTTP {status}", status)]
    assert text(await answer(pool)) == "from http://b1:8080/v1"
    assert pool.snapshot()[0].health == "cooling"


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_a_refusal_of_the_request_itself_is_not_retried_nor_cooled(status: int) -> None:
    pool, fakes = pool_of(1, 1)
    fakes[0].script = [status_error(f"HTTP {status}: bad request", status)]
    with pytest.raises(BackendFailure, match=f"HTTP {status}"):
        await answer(pool)
    assert fakes[1].turns == 0
    assert [s.health for s in pool.snapshot()] == ["healthy", "healthy"]


async def test_turns_that_fail_together_count_as_one_failure() -> None:
    pool, fakes = pool_of(1, 1)
    fakes[0].script = [DIES] * 3
    fakes[1].script = [HOLD] * 3
    held = [pool.stream(ASK, [], SETTINGS) for _ in range(6)]
    for turn in held:
        await turn.__anext__()
    assert [s.in_flight for s in pool.snapshot()] == [3, 3]
    fakes[0].release.set()  # it dies under its three answers at once
    fakes[1].release.set()
    broken = []
    for turn in held:
        try:
            async for _ in turn:
                pass
        except ProviderError as exc:
            broken.append(str(exc))
    assert len(broken) == 3
    assert all("b0:8080/v1 failed after its answer had begun" in m for m in broken)
    first, second = pool.snapshot()
    assert first.total_failures == 3 and first.failures == 1  # not 1 s, 2 s, 4 s at once
    assert first.retry_in == FIRST_COOLDOWN
    assert second.served == 3 and second.total_failures == 0


async def test_a_turn_is_sent_to_each_deployment_at_most_once() -> None:
    pool, fakes = pool_of(1, 1, 1)
    for fake in fakes:
        fake.script = [REFUSED, "ok"]
    with pytest.raises(DeploymentsDownError) as caught:
        await answer(pool)
    assert [f.turns for f in fakes] == [1, 1, 1]
    message = str(caught.value)
    assert "none of its 3 deployments can take the request" in message
    assert all(f.base_url in message for f in fakes)
    assert "the next is tried again in 1.0 s" in message
    assert caught.value.retry_after == 1


async def test_a_started_answer_is_never_sent_twice() -> None:
    pool, fakes = pool_of(1, 1)
    fakes[0].script = [BREAK]
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        async for event in pool.stream(ASK, [], SETTINGS):
            seen.append(event)
    assert text(seen) == "from http://b0:8080/v1"  # one part reached the caller, once
    assert fakes[1].turns == 0
    message = str(caught.value)
    assert "deployment http://b0:8080/v1 failed after its answer had begun" in message
    assert "never sent again to another deployment" in message
    assert caught.value.brief.endswith("after the answer had begun")
    assert pool.snapshot()[0].health == "cooling"  # and it is left out after it


async def test_cooldowns_double_up_to_a_bound_and_a_retry_after_is_honoured() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, 1, clock=clock)
    fakes[0].down = True
    waits = []
    for _ in range(9):
        fakes[0].script = [REFUSED]
        pool.deployments[0].cooling_until = None  # put it back in rotation by hand
        await answer(pool)
        waits.append(pool.snapshot()[0].retry_in)
    assert waits == [1, 2, 4, 8, 16, 30, 30, 30, 30]
    assert max(waits) == MAX_COOLDOWN
    pool.deployments[0].cooling_until = None
    pool.deployments[0].failures = 0
    fakes[0].script = [status_error("HTTP 429", 429, retry_after=42)]
    await answer(pool)
    assert pool.snapshot()[0].retry_in == 42
    pool.deployments[0].cooling_until = None
    fakes[0].script = [status_error("HTTP 429", 429, retry_after=10_000)]
    await answer(pool)
    assert pool.snapshot()[0].retry_in == MAX_RETRY_AFTER


async def test_a_cooled_deployment_returns_only_once_its_health_check_passes() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, 1, clock=clock)
    fakes[0].script = [REFUSED]
    await answer(pool)
    fakes[0].down = True
    clock.now += FIRST_COOLDOWN  # its time is up: the next turn starts a check
    assert text(await answer(pool)) == "from http://b1:8080/v1"  # it did not wait for it
    await settle()
    assert fakes[0].probes == 1 and fakes[0].turns == 1
    failed_check = pool.snapshot()[0]
    assert failed_check.health == "cooling" and failed_check.failures == 2
    assert failed_check.retry_in == 2 * FIRST_COOLDOWN
    fakes[0].down = False
    clock.now += 2 * FIRST_COOLDOWN
    await answer(pool)
    await settle()
    back = pool.snapshot()[0]
    assert back.health == "healthy" and back.failures == 0 and back.retry_in is None
    await answer(pool)
    await answer(pool)
    assert fakes[0].turns >= 2  # traffic returns to it


async def test_when_all_are_cooling_a_due_check_is_awaited_before_giving_up() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, 1, clock=clock)
    for fake in fakes:
        fake.script = [REFUSED]
    with pytest.raises(DeploymentsDownError):
        await answer(pool)
    with pytest.raises(DeploymentsDownError) as caught:
        await answer(pool)  # nothing is due yet: no check, no turn
    assert [f.probes for f in fakes] == [0, 0] and [f.turns for f in fakes] == [1, 1]
    assert "left out 1.0 s more after 1 failure(s), last: cannot reach" in str(caught.value)
    clock.now += FIRST_COOLDOWN
    assert text(await answer(pool)) in {f"from {f.base_url}" for f in fakes}
    assert [f.probes for f in fakes] == [1, 1]


async def test_a_health_check_that_fails_keeps_the_pool_down_with_the_next_time() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, clock=clock)
    fakes[0].script = [REFUSED]
    fakes[0].down = True
    with pytest.raises(DeploymentsDownError, match="none of its 1 deployment can take"):
        await answer(pool)
    clock.now += FIRST_COOLDOWN
    with pytest.raises(DeploymentsDownError, match=r"tried again in 2\.0 s") as caught:
        await answer(pool)
    assert caught.value.retry_after == 2 and fakes[0].turns == 1


def test_a_check_cut_short_by_the_end_of_an_event_loop_is_begun_again() -> None:
    clock = Clock()
    pool, fakes = pool_of(1, 1, clock=clock)
    fakes[0].script = [REFUSED]
    fakes[0].hang = True

    async def one_turn() -> None:
        await answer(pool)
        await settle()

    anyio.run(one_turn)  # the failure
    clock.now += FIRST_COOLDOWN
    anyio.run(one_turn)  # a check starts, and hangs until this loop ends
    assert fakes[0].probes == 1
    fakes[0].hang = False
    anyio.run(one_turn)  # a provider outlives its loop (`farmhand eval`): checked again
    assert fakes[0].probes == 2
    assert pool.snapshot()[0].health == "healthy"


async def test_a_client_that_goes_away_frees_its_slot() -> None:
    pool, fakes = pool_of(1)
    fakes[0].script = [HOLD]
    turn = pool.stream(ASK, [], SETTINGS)
    await turn.__anext__()
    assert pool.snapshot()[0].in_flight == 1
    await turn.aclose()
    state = pool.snapshot()[0]
    assert state.in_flight == 0 and state.failures == 0 and state.health == "healthy"


async def test_closing_the_pool_closes_every_deployment() -> None:
    pool, fakes = pool_of(1, 1)
    await pool.aclose()
    assert all(f.closed for f in fakes)


def test_the_snapshot_shows_no_credentials() -> None:
    fake = FakeDeployment("http://user:s3cret@b0:8080/v1?key=abc")
    pool = DeploymentPool("openai", "m", [(fake, 1.0)], clock=Clock())
    (state,) = pool.snapshot()
    assert state.url == "http://b0:8080/v1"


def test_which_failures_say_the_backend_is_down() -> None:
    assert transport_error("x", "connect").backend_down
    assert transport_error("x", "broke_off").backend_down
    assert not transport_error("x", "invalid_url").backend_down
    assert status_error("x", 429).backend_down and status_error("x", 503).backend_down
    assert not status_error("x", 400).backend_down


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("7") == 7
    assert retry_after_seconds("") is None and retry_after_seconds("soon") is None
    date = "Sat, 28 Nov 2026 06:00:30 GMT"
    assert retry_after_seconds(date, now=1795845600.0) == 30
