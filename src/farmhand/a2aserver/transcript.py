"""The conversation a context holds so far: A2A groups a client's tasks by `contextId`,
and a new message in one continues it. Each completed task adds its first message (the
user's) and its answer; failed or cancelled tasks add nothing (their answer is missing).
"""

from __future__ import annotations

from a2a.types.a2a_pb2 import Role, Task, TaskState

from farmhand.a2aserver.answer import ANSWER
from farmhand.a2aserver.parts import user_text
from farmhand.errors import RequestError
from farmhand.messages import Message
from farmhand.service.agent_tasks import AgentTaskStore

MAX_TURNS = 100
"""Tasks of one context read back at most (the latest): the model's context is smaller."""


def earlier_turns(
    store: AgentTaskStore, owner: str, context_id: str, task_id: str
) -> list[Message]:
    """The user and assistant turns of the context's completed tasks, oldest first."""
    turns: list[Message] = []
    done = TaskState.Name(TaskState.TASK_STATE_COMPLETED)
    for row in store.in_context(owner, context_id, MAX_TURNS):
        if row.id == task_id or row.state != done:
            continue
        task = Task.FromString(row.document)
        asked = next((m for m in task.history if m.role == Role.ROLE_USER), None)
        answer = next((a for a in task.artifacts if a.artifact_id == ANSWER), None)
        if asked is None or answer is None:
            continue
        try:
            question = user_text(asked)
        except RequestError:
            continue
        turns += [Message.user(question), Message.assistant("".join(p.text for p in answer.parts))]
    return turns
