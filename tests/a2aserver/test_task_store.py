"""The A2A task store over farmhand's SQLite file: one client's tasks are its own, listing
pages through them newest first, farmhand's task records follow the tasks' states, and a
task a stopped server left running reads as failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import ListTasksRequest, Task, TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError
from tests.support.live import scripted_config

from farmhand.a2aserver.task_store import FarmhandTaskStore
from farmhand.service.state import ServiceState
from farmhand.service.tasks import INTERRUPTED
from farmhand.toolsets.mcp.pool import MCPPool

pytestmark = pytest.mark.anyio


def state_in(home: Path) -> ServiceState:
    return ServiceState(config=scripted_config(), home=home, pool=MCPPool())


def task(
    task_id: str,
    state: TaskState = TaskState.TASK_STATE_WORKING,
    *,
    at: int = 0,
    context: str = "c",
) -> Task:
    made = Task(id=task_id, context_id=context, status=TaskStatus(state=state))
    made.status.timestamp.FromNanoseconds(at or 1_000)
    made.metadata.update({"model": "farm"})
    return made


@pytest.fixture
def store(tmp_path: Path) -> FarmhandTaskStore:
    return FarmhandTaskStore(state_in(tmp_path), owner=owner)


def ctx(name: str) -> ServerCallContext:
    """A request's context whose client is `name`."""
    return ServerCallContext(state={"owner": name})


def owner(context: ServerCallContext) -> str:
    return str(context.state["owner"])


async def test_a_task_is_its_owners_alone(store: FarmhandTaskStore) -> None:
    await store.save(task("t1"), ctx("ada"))
    assert (await store.get("t1", ctx("ada"))) == task("t1")
    assert await store.get("t1", ctx("bob")) is None
    # Another client naming the same id writes nothing over it.
    await store.save(task("t1", TaskState.TASK_STATE_COMPLETED), ctx("bob"))
    found = await store.get("t1", ctx("ada"))
    assert found is not None and found.status.state == TaskState.TASK_STATE_WORKING
    await store.delete("t1", ctx("bob"))
    assert await store.get("t1", ctx("ada")) is not None
    await store.delete("t1", ctx("ada"))
    assert await store.get("t1", ctx("ada")) is None


async def test_a_streamed_piece_waits_for_the_next_status_or_a_read(
    store: FarmhandTaskStore,
) -> None:
    def on_disk() -> Task:
        row = store.state.agent_task_store().get("ada", "t1")
        assert row is not None
        stored: Task = Task.FromString(row.document)
        return stored

    streaming = task("t1")
    await store.save(streaming, ctx("ada"))
    streaming.artifacts.add(artifact_id="answer").parts.add().text = "hay"
    await store.save(streaming, ctx("ada"))  # the same status: a piece of the answer
    assert list(on_disk().artifacts) == []
    found = await store.get("t1", ctx("ada"))  # a read writes it first
    assert found is not None and found.artifacts[0].parts[0].text == "hay"
    streaming.artifacts[0].parts.add().text = " is dry"
    await store.save(streaming, ctx("ada"))
    listed = await store.list(ListTasksRequest(), ctx("ada"))
    assert [p.text for p in listed.tasks[0].artifacts[0].parts] == ["hay", " is dry"]
    done = task("t1", TaskState.TASK_STATE_COMPLETED, at=2_000)
    await store.save(done, ctx("ada"))  # a new status: written at once
    assert on_disk().status.state == TaskState.TASK_STATE_COMPLETED


async def test_listing_pages_newest_first_with_filters(store: FarmhandTaskStore) -> None:
    for n in range(5):
        done = TaskState.TASK_STATE_COMPLETED if n % 2 else TaskState.TASK_STATE_WORKING
        await store.save(
            task(f"t{n}", done, at=1_000 + n, context="even" if n % 2 == 0 else "odd"), ctx("ada")
        )
    await store.save(task("other"), ctx("bob"))
    seen: list[str] = []
    token = ""
    while True:
        page = await store.list(ListTasksRequest(page_size=2, page_token=token), ctx("ada"))
        assert page.total_size == 5
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == ["t4", "t3", "t2", "t1", "t0"]
    odd = await store.list(ListTasksRequest(context_id="odd"), ctx("ada"))
    assert [t.id for t in odd.tasks] == ["t3", "t1"]
    done = await store.list(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED), ctx("ada"))
    assert [t.id for t in done.tasks] == ["t3", "t1"]
    with pytest.raises(InvalidParamsError, match="page_token is not one this agent gave"):
        await store.list(ListTasksRequest(page_token="not a token"), ctx("ada"))


async def test_farmhand_task_records_follow_the_states(store: FarmhandTaskStore) -> None:
    records = store.state.task_store()
    await store.save(task("t1", TaskState.TASK_STATE_SUBMITTED), ctx("ada"))
    record = records.get("t1")
    assert record is not None and (record.status, record.dialect, record.model) == (
        "working",
        "a2a",
        "farm",
    )
    await store.save(task("t1", TaskState.TASK_STATE_INPUT_REQUIRED), ctx("ada"))
    assert records.get("t1").status == "working"  # type: ignore[union-attr]
    await store.save(task("t1", TaskState.TASK_STATE_CANCELED), ctx("ada"))
    record = records.get("t1")
    assert record is not None and (record.status, record.error) == (
        "failed",
        "cancelled by the client",
    )
    failed = task("t2", TaskState.TASK_STATE_WORKING)
    await store.save(failed, ctx("ada"))
    failed.status.state = TaskState.TASK_STATE_FAILED
    failed.status.message.parts.add().text = "the model backend failed"
    await store.save(failed, ctx("ada"))
    assert records.get("t2").error == "the model backend failed"  # type: ignore[union-attr]
    await store.save(task("t3", TaskState.TASK_STATE_WORKING), ctx("ada"))
    await store.save(task("t3", TaskState.TASK_STATE_COMPLETED), ctx("ada"))
    assert records.get("t3").status == "completed"  # type: ignore[union-attr]


async def test_a_task_left_running_by_a_stopped_server_reads_as_failed(tmp_path: Path) -> None:
    first = state_in(tmp_path)
    before = FarmhandTaskStore(first, owner=owner)
    await before.save(task("t1", TaskState.TASK_STATE_INPUT_REQUIRED), ctx("ada"))
    await first.aclose()

    second = state_in(tmp_path)  # a new server over the same home
    after = FarmhandTaskStore(second, owner=owner)
    found = await after.get("t1", ctx("ada"))
    assert found is not None and found.status.state == TaskState.TASK_STATE_FAILED
    assert found.status.message.parts[0].text == INTERRUPTED
    again = await after.get("t1", ctx("ada"))
    assert again == found  # written back: read once, the same after
    await second.aclose()
