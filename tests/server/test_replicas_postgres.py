"""Two real `farmhand serve` processes on one real PostgreSQL (`server.store`) behave as one
server: what one stored, the other finds. Each has a FARMHAND_HOME of its own, so nothing
reaches the other through files; the model is the scripted OpenAI-compatible backend."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml
from tests.support.postgres import fresh_database, postgres_server
from tests.support.real_servers import free_port
from tests.support.scripted_backend import (
    ScriptedBackend,
    answer_with_result,
    call,
    model_config,
    say,
)
from tests.support.serve_process import serving

from farmhand.service.database_types import MIGRATIONS

__all__ = ["postgres_server"]  # the session fixture, used by name below


class Replicas:
    def __init__(self, a: str, b: str, backend: ScriptedBackend, store: str) -> None:
        self.a, self.b, self.backend, self.store = a, b, backend, store


def serve_replicas(stack: ExitStack, tmp_path: Path, config: dict[str, Any]) -> list[str]:
    """Two `farmhand serve` processes on `config`, each with its own home; their URLs."""
    urls = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "farmhand.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        env = {"FARMHAND_API_KEYS": "", "FARMHAND_HOME": str(folder / "home")}
        stack.enter_context(serving("--port", str(port), cwd=folder, env=env))
        urls.append(f"http://127.0.0.1:{port}")
    return urls


@pytest.fixture
def replicas(postgres_server: str, tmp_path: Path) -> Iterator[Replicas]:
    store = fresh_database(postgres_server)
    turns = [say("first answer"), say("second answer"), say("a task's answer"), say("from B")]
    with ScriptedBackend(turns) as backend, ExitStack() as stack:
        backend_host = backend.url.split("/")[2]  # a project written through the API may use it
        server = {"store": store, "backend_hosts": [backend_host]}
        config = {"runtime": {"models": [model_config(backend.url)]}, "server": server}
        a, b = serve_replicas(stack, tmp_path, config)
        yield Replicas(a, b, backend, store)


def test_two_replicas_on_one_postgresql_behave_as_one_server(replicas: Replicas) -> None:
    with psycopg.connect(replicas.store) as conn:  # migrated as serve started, before a request
        applied = conn.execute("SELECT migration_id FROM _yoyo_migration").fetchall()
        every = sorted(path.stem for path in (MIGRATIONS / "postgresql").glob("*.sql"))
        assert [row[0] for row in applied] == every and "0001_stores" in every
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)
    first = httpx.post(
        f"{replicas.a}/v1/responses",
        json={"model": "scripted", "input": "remember the word kumquat"},
        timeout=60,
    )
    assert first.status_code == 200, first.text
    # continued on the other replica: it reads the conversation A stored
    second = httpx.post(
        f"{replicas.b}/v1/responses",
        json={
            "model": "scripted",
            "input": "which word?",
            "previous_response_id": first.json()["id"],
        },
        timeout=60,
    )
    assert second.status_code == 200, second.text
    sent = str(replicas.backend.requests[1]["messages"])
    assert "remember the word kumquat" in sent and "first answer" in sent
    assert httpx.get(f"{replicas.a}/v1/responses/{second.json()['id']}").status_code == 200

    # a task started on A, looked up on B
    chat = httpx.post(
        f"{replicas.a}/api/chat",
        json={
            "model": "scripted",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": False,
        },
        timeout=60,
    )
    assert chat.status_code == 200, chat.text
    task = httpx.get(f"{replicas.b}/api/tasks/{chat.json()['task_id']}", timeout=30)
    assert task.status_code == 200, task.text
    assert task.json()["task_status"] == "completed" and task.json()["model"] == "scripted"


def test_a_streamed_response_is_on_the_other_replica_once_its_last_event_arrives(
    replicas: Replicas,
) -> None:
    """A client holds a streamed response once `response.completed` arrives, and may go on
    from it through the other replica at once: it is stored before that event is sent (not
    after the stream), so B finds it while A's stream is still open."""
    body = {"model": "scripted", "input": "remember the word kumquat", "stream": True}
    with httpx.stream("POST", f"{replicas.a}/v1/responses", json=body, timeout=60) as streamed:
        assert streamed.status_code == 200
        completed = None
        for line in streamed.iter_lines():
            event = json.loads(line[len("data: ") :]) if line.startswith("data: ") else {}
            if event.get("type") == "response.completed":
                completed = event["response"]
                break
        assert completed is not None and completed["status"] == "completed"
        found = httpx.get(f"{replicas.b}/v1/responses/{completed['id']}", timeout=30)
    assert found.status_code == 200, found.text
    assert found.json()["output"] == completed["output"]


def test_a_project_written_on_one_replica_is_served_by_the_other(replicas: Replicas) -> None:
    project = {
        "name": "shared",
        "config": {"runtime": {"models": [model_config(replicas.backend.url)]}},
    }
    created = httpx.post(f"{replicas.a}/v1/projects/team", json=project, timeout=30)
    assert created.status_code == 200, created.text
    served = httpx.get(f"{replicas.b}/v1/projects/team/shared", timeout=30)
    assert served.status_code == 200, served.text
    assert served.json()["project"]["config"]["runtime"]["models"][0]["name"] == "scripted"
    again = httpx.post(f"{replicas.b}/v1/projects/team", json=project, timeout=30)
    assert again.status_code == 409  # the name is taken on every replica
    listed = httpx.get(f"{replicas.b}/v1/projects/team", timeout=30).json()
    assert [p["name"] for p in listed["projects"]] == ["shared"]
    # B chats on it: the project's model, from the row A wrote
    for _ in range(3):
        replicas.backend.turns.pop(0)  # the turns the other test uses
    chat = httpx.post(
        f"{replicas.b}/v1/projects/team/shared/chat/completions",
        json={"model": "scripted", "messages": [{"role": "user", "content": "hi"}]},
        timeout=60,
    )
    assert chat.status_code == 200, chat.text
    assert chat.json()["choices"][0]["message"]["content"] == "from B"
    assert httpx.delete(f"{replicas.b}/v1/projects/team/shared", timeout=30).status_code == 200
    assert httpx.get(f"{replicas.a}/v1/projects/team/shared", timeout=30).status_code == 404


def test_serve_stops_with_a_clear_error_when_the_store_cannot_be_used(tmp_path: Path) -> None:
    store = f"postgresql://farmhand:hunter2secret@127.0.0.1:{free_port()}/nowhere"
    (tmp_path / "farmhand.yaml").write_text(yaml.safe_dump({"server": {"store": store}}))
    done = subprocess.run(
        [sys.executable, "-m", "farmhand", "serve", "--port", str(free_port())],
        cwd=tmp_path,
        env={**os.environ, "FARMHAND_HOME": str(tmp_path / "home"), "FARMHAND_API_KEYS": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "server.store: cannot use the PostgreSQL database" in done.stderr
    assert "Traceback" not in done.stderr and "hunter2secret" not in done.stderr


ASKING = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "asking_server.py"


def test_a_question_answered_through_the_other_replica_is_a_409_naming_its_replica(
    postgres_server: str, tmp_path: Path
) -> None:
    """A chat paused on an approval lives in the replica that runs it (its call is in
    flight there): the other replica answers 409 naming where it waits, and the answer sent
    there is taken. (docs/serve.md: sticky sessions.)"""
    store = fresh_database(postgres_server)
    gate = {
        "name": "gate",
        "command": sys.executable,
        "args": [str(ASKING)],
        "require_approval": "always",
    }
    turns = [call("gate:wipe", {"target": "barn"}), answer_with_result()]
    with ScriptedBackend(turns) as backend, ExitStack() as stack:
        config = {
            "mcp": {"servers": [gate]},
            "runtime": {"models": [model_config(backend.url)]},
            "server": {"store": store},
        }
        a, b = serve_replicas(stack, tmp_path, config)
        asked = httpx.post(
            f"{a}/v1/responses", json={"model": "scripted", "input": "Wipe the barn"}, timeout=60
        )
        assert asked.status_code == 200, asked.text
        question = asked.json()["output"][-1]
        assert question["type"] == "mcp_approval_request"
        answer = {
            "model": "scripted",
            "previous_response_id": asked.json()["id"],
            "input": [
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": question["id"],
                    "approve": True,
                }
            ],
        }
        wrong = httpx.post(f"{b}/v1/responses", json=answer, timeout=60)
        assert wrong.status_code == 409, wrong.text
        message = wrong.json()["error"]["message"]
        assert question["id"] in message and "sticky sessions" in message
        assert f"{socket.gethostname()}:" in message  # the replica that holds it
        right = httpx.post(f"{a}/v1/responses", json=answer, timeout=60)  # still open there
        assert right.status_code == 200, right.text
        assert "wiped barn" in str(right.json()["output"])
        again = httpx.post(f"{b}/v1/responses", json=answer, timeout=60)
        assert again.status_code == 404  # answered: no replica holds it any more
