"""The A2A tasks that hold a chat, per client: running in an execution of the agent, or
parked on a question (the chat waits in the service's runner for the task's next
message). A task outlives the request that started it, so these are bounded
(`server.limits.max_agent_tasks`, `max_agent_tasks_total`) before a chat starts.

A parked question that timed out (`server.question_timeout`, its chat declined and ended)
no longer holds a slot: it is forgotten the next time slots are counted.
"""

from __future__ import annotations

from a2a.utils.errors import InvalidRequestError

from farmhand.config.limits import LimitsConfig
from farmhand.runtime.events import InputRequested
from farmhand.runtime.questions import PendingAnswers


class TaskSlots:
    def __init__(self, answers: PendingAnswers, limits: LimitsConfig) -> None:
        self.answers = answers
        self.limits = limits
        self._running: dict[str, str] = {}  # task id -> owner
        self._parked: dict[str, tuple[str, InputRequested]] = {}

    def take(self, task_id: str, owner: str) -> None:
        """A slot for a new chat of `owner`'s; InvalidRequestError when it has none left."""
        self._forget_unasked()
        owners = [*self._running.values(), *(o for o, _ in self._parked.values())]
        if owners.count(owner) >= self.limits.max_agent_tasks:
            raise InvalidRequestError(
                message=f"this client has {self.limits.max_agent_tasks} tasks running or"
                " waiting on a question (server.limits.max_agent_tasks): wait for one to"
                " finish, answer its question, or cancel it (CancelTask)"
            )
        if len(owners) >= self.limits.max_agent_tasks_total:
            raise InvalidRequestError(
                message=f"the agent runs {self.limits.max_agent_tasks_total} tasks already"
                " (server.limits.max_agent_tasks_total); send the message again later"
            )
        self._running[task_id] = owner

    def park(self, task_id: str, question: InputRequested) -> None:
        """The task's chat waits on `question` until the task's next message."""
        owner = self._running.pop(task_id, "")
        self._parked[task_id] = (owner, question)

    def unpark(self, task_id: str) -> InputRequested | None:
        """The question the task waits on, its slot running again; None when it waits on
        none (it timed out, or the server restarted since)."""
        self._forget_unasked()
        owner, question = self._parked.pop(task_id, ("", None))
        if question is not None:
            self._running[task_id] = owner
        return question

    def drop(self, task_id: str) -> InputRequested | None:
        """Free the task's slot; the question it was parked on, if any."""
        self._running.pop(task_id, None)
        _, question = self._parked.pop(task_id, ("", None))
        return question

    def release(self, task_id: str) -> None:
        """The task's execution ended: free its slot unless it parked on a question."""
        self._running.pop(task_id, None)

    def _forget_unasked(self) -> None:
        gone = [t for t, (_, q) in self._parked.items() if self.answers.get(q.id) is None]
        for task_id in gone:
            del self._parked[task_id]
