"""The SDK's `TaskStore` over farmhand's SQLite file: each A2A task's whole record in
`service.agent_tasks` (scoped to the client that made it), and its status in the task
records every chat keeps (`service.tasks`, dialect "a2a"), so `GET /api/tasks/{id}`
answers for it too and a restart fails what it left running.

    A2A state                              farmhand's task record
    submitted, working, input-required     working
    completed                              completed
    failed, rejected, canceled             failed (the status message, or why, as error)
"""

from __future__ import annotations

from collections.abc import Callable

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    ListTasksResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor
from google.protobuf.json_format import MessageToDict

from farmhand.service.agent_tasks import AgentTaskQuery, AgentTaskRow
from farmhand.service.state import ServiceState
from farmhand.service.tasks import INTERRUPTED

DIALECT = "a2a"
DEFAULT_PAGE_SIZE = 50
TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_CANCELED,
    }
)
ENDED_WHY = {
    TaskState.TASK_STATE_CANCELED: "cancelled by the client",
    TaskState.TASK_STATE_REJECTED: "rejected by the agent",
    TaskState.TASK_STATE_FAILED: "failed",
}


def owner_of(context: ServerCallContext) -> str:
    """Whose task it is: the user the request's context names (a digest of its API key)."""
    return context.user.user_name


class FarmhandTaskStore(TaskStore):
    """A change of a task's status is written at once; a change that leaves the status as
    it was (a streamed piece of the answer) waits in memory for the next status change, or
    for a read (`get`, `list`, `delete` write what waits first). A running task changes
    with every token, and a write a token was most of what an answer cost: a task that
    was running when the server stopped reads as failed anyway."""

    def __init__(
        self, state: ServiceState, owner: Callable[[ServerCallContext], str] = owner_of
    ) -> None:
        self.state = state
        self.owner = owner
        self._working: set[str] = set()  # ids whose record is known to say working
        self._written: dict[str, tuple[int, int | None]] = {}  # id -> its status as written
        self._waiting: dict[str, tuple[str, AgentTaskRow]] = {}  # id -> (owner, row) unwritten

    async def save(self, task: Task, context: ServerCallContext) -> None:
        status_ns = (
            task.status.timestamp.ToNanoseconds() if task.status.HasField("timestamp") else None
        )
        row = AgentTaskRow(
            task.id,
            task.context_id,
            TaskState.Name(task.status.state),
            status_ns,
            task.SerializeToString(),
        )
        status = (task.status.state, status_ns)
        if self._written.get(task.id) == status and task.status.state not in TERMINAL:
            self._waiting[task.id] = (self.owner(context), row)
            return
        self._waiting.pop(task.id, None)
        self.state.agent_task_store().put(self.owner(context), row)
        if task.status.state in TERMINAL:
            self._written.pop(task.id, None)
        else:
            self._written[task.id] = status
        self._record(task)

    def _write_waiting(self, task_id: str | None = None) -> None:
        """Write what waits: one task's, or every task's (None)."""
        ids = list(self._waiting) if task_id is None else [task_id]
        for waiting in ids:
            held = self._waiting.pop(waiting, None)
            if held is not None:
                self.state.agent_task_store().put(*held)

    def _record(self, task: Task) -> None:
        """Keep farmhand's task record in step with the task's state."""
        records = self.state.task_store()
        if task.status.state not in TERMINAL:
            if task.id not in self._working:
                record = records.get(task.id)
                if record is None or record.status != "working":
                    model = MessageToDict(task.metadata).get("model", "")
                    records.start(task.id, str(model), DIALECT)
                self._working.add(task.id)
            return
        self._working.discard(task.id)
        record = records.get(task.id)
        if record is None or record.status != "working":
            return
        if task.status.state == TaskState.TASK_STATE_COMPLETED:
            records.finish(task.id)
        else:
            said = " ".join(p.text for p in task.status.message.parts if p.text)
            records.finish(task.id, said or ENDED_WHY[task.status.state])

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        self._write_waiting(task_id)
        row = self.state.agent_task_store().get(self.owner(context), task_id)
        if row is None:
            return None
        task: Task = Task.FromString(row.document)
        if task.status.state not in TERMINAL and task.id not in self._working:
            record = self.state.task_store().get(task.id)
            if record is not None and record.status == "failed":  # a previous run's
                task.status.state = TaskState.TASK_STATE_FAILED
                task.status.message.parts.add().text = record.error or INTERRUPTED
                await self.save(task, context)
        return task

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        self._write_waiting()
        after = None
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is None:
                raise InvalidParamsError(
                    message="page_token is not one this agent gave: send the nextPageToken"
                    " of the previous ListTasks answer, or none for the first page"
                )
            after = (cursor.timestamp_ns, cursor.task_id)
        query = AgentTaskQuery(
            context_id=params.context_id,
            state=TaskState.Name(params.status) if params.status else "",
            since_ns=params.status_timestamp_after.ToNanoseconds()
            if params.HasField("status_timestamp_after")
            else None,
            after=after,
        )
        size = params.page_size or DEFAULT_PAGE_SIZE
        rows, total = self.state.agent_task_store().list(self.owner(context), query, size + 1)
        page = rows[:size]
        token = ""
        if len(rows) > size:
            last = page[-1]
            token = encode_list_tasks_cursor(ListTasksCursor(last.status_ns, last.id))
        return ListTasksResponse(
            tasks=[Task.FromString(r.document) for r in page],
            next_page_token=token,
            page_size=size,
            total_size=total,
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._waiting.pop(task_id, None)
        self._written.pop(task_id, None)
        self.state.agent_task_store().delete(self.owner(context), task_id)
        self._working.discard(task_id)
