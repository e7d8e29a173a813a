"""Tasks: the SQLite store, and tasks that outlive the server that ran them."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import anyio
import httpx
from tests.server.ollama_serving import make_config, serving

from farmhand.messages import Message, StreamEvent, TextDelta
from farmhand.providers.base import GenerationSettings
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.tasks import DATABASE_NAME, INTERRUPTED, TaskStore, iso_time
from farmhand.tools.definition import ToolDefinition


def test_start_finish_get(tmp_path: Path) -> None:
    store = TaskStore.in_home(tmp_path)
    task = store.start(None, "qwen", "ollama")
    assert (task.status, task.model, task.dialect, task.error) == (
        "working",
        "qwen",
        "ollama",
        None,
    )
    assert len(task.id) == 36  # a UUID, as Ollama's task ids are
    done = store.finish(task.id)
    assert done is not None and done.status == "completed"
    assert done.created_at == task.created_at <= done.updated_at
    failed = store.finish(store.start(None, "qwen", "openai").id, "backend is down")
    assert failed is not None and (failed.status, failed.error) == ("failed", "backend is down")
    assert store.get("missing") is None
    store.close()


def test_a_client_task_id_runs_again(tmp_path: Path) -> None:
    store = TaskStore.in_home(tmp_path)
    first = store.start("job-7", "a", "ollama")
    store.finish("job-7", "oops")
    again = store.start("job-7", "b", "ollama")
    assert (again.status, again.model, again.error) == ("working", "b", None)
    assert again.created_at == first.created_at
    store.close()


def test_tasks_survive_reopening_and_unfinished_ones_fail(tmp_path: Path) -> None:
    store = TaskStore.in_home(tmp_path)
    done = store.start(None, "m", "ollama").id
    store.finish(done)
    running = store.start(None, "m", "ollama").id
    store.close()

    reopened = TaskStore(tmp_path / DATABASE_NAME)
    assert reopened.fail_unfinished() == 1
    finished = reopened.get(done)
    assert finished is not None and finished.status == "completed"
    interrupted = reopened.get(running)
    assert interrupted is not None
    assert (interrupted.status, interrupted.error) == ("failed", INTERRUPTED)
    reopened.close()


def test_task_json_shape(tmp_path: Path) -> None:
    store = TaskStore.in_home(tmp_path)
    task = store.start("t1", "m", "ollama")
    data = task.to_json()
    assert data["task_id"] == "t1"
    assert data["task_status"] == "working"
    assert data["created_at"] == iso_time(task.created_at)
    assert data["created_at"].endswith("Z") and "T" in data["created_at"]
    store.close()


def test_a_task_is_working_while_the_loop_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seen: list[str] = []

    def check_status(_: Sequence[Message], __: Sequence[ToolDefinition]) -> None:
        # A second connection to the same file, as another process would read it.
        reader = TaskStore.in_home(home)
        task = reader.get("watched")
        reader.close()
        assert task is not None
        seen.append(task.status)

    provider = ScriptedProvider([Step.text("hi", expect=check_status)])
    with serving(make_config(), provider, home) as url:
        body = {
            "model": "plain",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": False,
            "task_id": "watched",
        }
        response = httpx.post(f"{url}/api/chat", json=body, timeout=30)
        assert response.json()["task_status"] == "completed"
    assert seen == ["working"]


def test_tasks_survive_a_server_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = make_config()
    body = {"model": "plain", "messages": [{"role": "user", "content": "hi"}], "stream": False}
    with serving(config, ScriptedProvider([Step.text("before")]), home) as url:
        task_id = httpx.post(f"{url}/api/chat", json=body, timeout=30).json()["task_id"]
        before = httpx.get(f"{url}/api/tasks/{task_id}").json()

    with serving(config, ScriptedProvider(), home) as url:
        after = httpx.get(f"{url}/api/tasks/{task_id}")
    assert after.status_code == 200
    assert after.json() == before
    assert before["task_status"] == "completed"


class StallingProvider:
    """Writes a little, then never finishes its turn."""

    name = "stalling"

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        yield TextDelta("partial ")
        await anyio.sleep_forever()

    async def aclose(self) -> None:
        pass


def test_a_client_that_leaves_mid_stream_fails_its_task(tmp_path: Path) -> None:
    body = {"model": "plain", "messages": [{"role": "user", "content": "hi"}]}
    with serving(make_config(), StallingProvider(), tmp_path / "home") as url:
        with httpx.stream("POST", f"{url}/api/chat", json=body, timeout=30) as response:
            lines = response.iter_lines()
            first = json.loads(next(lines))
            task_id = first["task_id"]
            assert first["task_status"] == "working"
            still = httpx.get(f"{url}/api/tasks/{task_id}").json()
            assert still["task_status"] == "working"
        # Leaving the block closes the connection mid-answer.
        deadline = time.monotonic() + 20
        while True:
            task = httpx.get(f"{url}/api/tasks/{task_id}").json()
            if task["task_status"] != "working" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
    assert task["task_status"] == "failed"
    assert "disconnected" in task["error"]


def test_a_task_id_that_is_still_working_is_a_409(tmp_path: Path) -> None:
    body = {"model": "plain", "messages": [{"role": "user", "content": "hi"}], "task_id": "busy"}
    with (
        serving(make_config(), StallingProvider(), tmp_path / "home") as url,
        httpx.stream("POST", f"{url}/api/chat", json=body, timeout=30) as response,
    ):
        lines = response.iter_lines()  # kept: a dropped iterator closes the connection
        assert json.loads(next(lines))["task_id"] == "busy"
        again = httpx.post(f"{url}/api/chat", json={**body, "stream": False}, timeout=30)
        assert again.status_code == 409
        assert "still working" in again.json()["error"]
        assert httpx.get(f"{url}/api/tasks/busy").json()["task_status"] == "working"
