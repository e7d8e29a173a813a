"""The server's stores (and projects) on SQLite (files) and on a real PostgreSQL
(`server.store`): the same round trips on both, PostgreSQL's
migrations, and the `server.store` setting's checks."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from tests.support.postgres import fresh_database, postgres_server
from tests.support.real_servers import free_port

from farmhand.config import mask_secrets
from farmhand.config.loader import parse_config
from farmhand.errors import ConfigError, ProjectExistsError, ProjectNotFoundError
from farmhand.service.agent_tasks import AgentTaskQuery, AgentTaskRow, AgentTaskStore
from farmhand.service.postgres import migrate, shared_postgres
from farmhand.service.projects import ProjectStore
from farmhand.service.responses_store import ResponseStore
from farmhand.service.tasks import DATABASE_NAME, INTERRUPTED, TaskStore

__all__ = ["postgres_server"]  # the session fixture, used by name below


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | None]:
    """`server.store` as the server gets it: None (the SQLite file) or a fresh database."""
    if request.param == "sqlite":
        yield None
    else:
        yield fresh_database(request.getfixturevalue("postgres_server"))


def test_tasks_round_trip(store: str | None, tmp_path: Path) -> None:
    tasks = TaskStore.in_home(tmp_path, store)
    started = tasks.start(None, "m", "ollama")
    assert started.status == "working"
    again = tasks.start("mine", "m", "openai")
    tasks.finish(started.id)
    failed = tasks.finish("mine", error="boom")
    assert failed is not None and (failed.status, failed.error) == ("failed", "boom")
    tasks.close()
    reopened = TaskStore.in_home(tmp_path, store)
    found = reopened.get(started.id)
    assert found is not None and found.status == "completed" and found.dialect == "ollama"
    mine = reopened.get("mine")
    assert mine is not None and mine.created_at == again.created_at
    assert reopened.get("nobody") is None
    reopened.close()


def test_working_tasks_of_a_shared_store_are_left_to_their_replica(
    store: str | None, tmp_path: Path
) -> None:
    first = TaskStore.in_home(tmp_path, store)
    first.start("busy", "m", "ollama")
    second = TaskStore.in_home(tmp_path, store)  # another process starting
    failed = second.fail_unfinished()
    busy = second.get("busy")
    assert busy is not None
    if store is None:  # one process per SQLite file: what is working was interrupted
        assert (failed, busy.status) == (1, "failed")
    else:  # a replica's running task
        assert (failed, busy.status) == (0, "working")
    first.close()
    second.close()


def _response(response_id: str, text: str, previous: str | None = None) -> dict[str, object]:
    item = {"id": f"msg_{response_id}", "type": "message", "role": "assistant", "content": text}
    return {"id": response_id, "output": [item], "previous_response_id": previous}


def test_responses_round_trip(store: str | None, tmp_path: Path) -> None:
    responses = ResponseStore.in_home(tmp_path, store)
    said = {"id": "in_1", "role": "user", "content": "hello there"}
    responses.put(_response("resp_1", "hi"), [said], "m")
    responses.put(_response("resp_2", "again", "resp_1"), [said], "m")
    responses.close()
    reopened = ResponseStore.in_home(tmp_path, store)
    stored = reopened.get("resp_1")
    assert stored is not None and stored.model == "m"
    assert [i["id"] for i in stored.conversation] == ["in_1", "msg_resp_1"]
    assert reopened.item("msg_resp_2") == _response("resp_2", "again")["output"][0]  # type: ignore[index]
    sizes = reopened.item_sizes(["in_1", "msg_resp_1", "nothing"])
    assert set(sizes) == {"in_1", "msg_resp_1"} and all(n > 0 for n in sizes.values())
    assert set(reopened.items(["in_1", "msg_resp_2"])) == {"in_1", "msg_resp_2"}
    listed = reopened.conversations(10)
    assert [(c["id"], c["title"], c["turns"]) for c in listed] == [("resp_2", "hello there", 1)]
    assert reopened.delete("resp_2") is True
    assert reopened.delete("resp_2") is False
    assert reopened.get("resp_2") is None and reopened.item("msg_resp_2") is None
    reopened.close()


def test_agent_tasks_round_trip(store: str | None, tmp_path: Path) -> None:
    agents = AgentTaskStore.in_home(tmp_path, store)
    for n in range(5):
        row = AgentTaskRow(f"t{n}", "ctx" if n < 3 else "other", "working", 1000 + n, bytes([n]))
        agents.put("alice", row)
    agents.put("mallory", AgentTaskRow("t0", "ctx", "stolen", 1, b"x"))  # not hers
    got = agents.get("alice", "t0")
    assert got is not None and (got.state, got.document) == ("working", b"\x00")
    assert agents.get("mallory", "t0") is None
    page, total = agents.list("alice", AgentTaskQuery(), 2)
    assert total == 5 and [r.id for r in page] == ["t4", "t3"]
    after = (page[-1].status_ns, page[-1].id)
    rest, _ = agents.list("alice", AgentTaskQuery(after=after), 10)
    assert [r.id for r in rest] == ["t2", "t1", "t0"]
    assert [r.id for r in agents.in_context("alice", "ctx", 2)] == ["t1", "t2"]
    agents.delete("alice", "t4")
    assert agents.get("alice", "t4") is None
    agents.close()


def test_migrations_apply_once(postgres_server: str) -> None:
    url = fresh_database(postgres_server)
    assert migrate(url) == ["0001_stores", "0002_task_replicas", "0003_parked_questions"]
    assert migrate(url) == []  # idempotent: nothing left to apply
    with psycopg.connect(url) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema='public'"
            )
        }
    assert {"tasks", "responses", "response_items", "agent_tasks", "projects"} <= tables


def test_stores_of_one_url_share_one_pool(postgres_server: str, tmp_path: Path) -> None:
    url = fresh_database(postgres_server)
    tasks, responses = TaskStore.in_home(tmp_path, url), ResponseStore.in_home(tmp_path, url)
    database = shared_postgres(url)
    assert database.users == 3
    database.close()
    tasks.close()
    responses.close()
    assert database.pool.closed


def test_an_unreachable_database_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://farmhand:hunter2secret@127.0.0.1:{free_port()}/farmhand"
    with pytest.raises(ConfigError) as caught:
        TaskStore.in_home(tmp_path, url)
    message = str(caught.value)
    assert "server.store" in message and "check that the server is running" in message
    assert "hunter2secret" not in message


@pytest.mark.parametrize("value", ["mysql://u@h/db", "sqlite://x", "  "])
def test_store_other_than_postgresql_or_a_path_is_refused(value: str) -> None:
    text = f"server:\n  store: '{value}'\n"
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "farmhand.yaml")
    assert "store" in str(caught.value) and "postgresql://" in str(caught.value)


def test_store_url_and_path_are_accepted_and_the_password_masked() -> None:
    url = "postgresql://app:s3cretpass@db.internal:5432/farmhand"
    config = parse_config(f"server:\n  store: '{url}'\n", "farmhand.yaml")
    assert config.server.store == url
    shown = mask_secrets(config.model_dump(mode="json"))
    assert "s3cretpass" not in str(shown) and "db.internal:5432/farmhand" in str(shown)
    path = parse_config("server:\n  store: /var/lib/farmhand/store.sqlite3\n", "farmhand.yaml")
    assert path.server.store == "/var/lib/farmhand/store.sqlite3"


def test_a_store_path_is_the_sqlite_file_used(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "store.sqlite3"
    tasks = TaskStore.in_home(tmp_path / "home", str(target))
    tasks.start("t", "m", "ollama")
    tasks.close()
    assert target.is_file() and not (tmp_path / "home" / DATABASE_NAME).exists()


def test_projects_round_trip(store: str | None, tmp_path: Path) -> None:
    projects = ProjectStore(tmp_path, store=store)
    created = projects.create("team", "one", {"version": "v1"})
    assert created.from_api and created.config.name == "one"
    with pytest.raises(ProjectExistsError):
        projects.create("team", "one")
    projects.update("team", "one", {"mcp": {"servers": []}})
    again = ProjectStore(tmp_path, store=store)  # another process
    assert again.get("team", "one").to_json()["config"]["mcp"] == {"servers": []}
    assert again.namespaces() == ["team"]
    assert [p.name for p in again.list("team")] == ["one"]
    (tmp_path / "projects" / "team" / "disk").mkdir(parents=True)  # the operator's own file
    (tmp_path / "projects" / "team" / "disk" / "farmhand.yaml").write_text("name: disk\n")
    assert [p.name for p in again.list("team")] == ["disk", "one"]
    assert not again.get("team", "disk").from_api
    assert again.delete("team", "one").name == "one"
    with pytest.raises(ProjectNotFoundError):
        projects.get("team", "one")
    assert (tmp_path / "projects" / "team" / "disk" / "farmhand.yaml").is_file()


REPLICA = """
import sys, time
from pathlib import Path
from farmhand.service.tasks import TaskStore
tasks = TaskStore.in_home(Path(sys.argv[1]), sys.argv[2])
tasks.start("long", "m", "openai")
print("started", flush=True)
time.sleep(600)
"""


def test_a_task_whose_replica_was_killed_is_failed_by_the_others(
    postgres_server: str, tmp_path: Path
) -> None:
    """A replica killed (-9) mid-task: its PostgreSQL session ends and with it the lock that
    says it runs, so another replica reports the task failed instead of working forever;
    a live replica's task stays working."""
    url = fresh_database(postgres_server)
    here = TaskStore.in_home(tmp_path, url)
    here.start("mine", "m", "openai")
    replica = subprocess.Popen(
        [sys.executable, "-c", REPLICA, str(tmp_path / "other"), url],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert replica.stdout is not None and replica.stdout.readline().strip() == "started"
        running = here.get("long")
        assert running is not None and running.status == "working"  # it is alive
        assert here.fail_unfinished() == 0
    finally:
        replica.kill()
        replica.wait()
    for _ in range(100):  # the server ends the dead session's lock when it notices
        gone = here.get("long")
        assert gone is not None
        if gone.status != "working":
            break
        time.sleep(0.1)
    assert (gone.status, gone.error) == ("failed", INTERRUPTED)
    mine = here.get("mine")
    assert mine is not None and mine.status == "working"  # this replica's own: left alone
    here.close()


def test_a_server_starting_fails_the_tasks_of_replicas_that_are_gone(
    postgres_server: str, tmp_path: Path
) -> None:
    url = fresh_database(postgres_server)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(url)
        conn.execute(
            "INSERT INTO tasks (id, status, model, dialect, created_at, updated_at, replica)"
            " VALUES ('orphan', 'working', 'm', 'openai', 0, 0, 12345)"
        )
    starting = TaskStore.in_home(tmp_path, url)
    assert starting.fail_unfinished() == 1
    orphan = starting.get("orphan")
    assert orphan is not None and orphan.status == "failed"
    starting.close()
