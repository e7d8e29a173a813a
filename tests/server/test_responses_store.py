"""Stored responses: SQLite under the home, beside the tasks, surviving a reopen."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from farmhand.service.responses_store import KEPT_SECONDS, ResponseStore
from farmhand.service.tasks import DATABASE_NAME, TaskStore


def test_a_response_is_kept_continued_and_deleted(tmp_path: Path) -> None:
    store = ResponseStore.in_home(tmp_path)
    asked = [{"type": "message", "role": "user", "content": "hi"}]
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}
    store.put({"id": "resp_1", "output": [answer]}, asked, "farm")
    store.close()

    reopened = ResponseStore(tmp_path / DATABASE_NAME)
    stored = reopened.get("resp_1")
    assert stored is not None and stored.model == "farm"
    assert stored.conversation == [*asked, answer]
    assert reopened.delete("resp_1") is True
    assert reopened.get("resp_1") is None
    assert reopened.delete("resp_1") is False
    reopened.close()


def test_responses_and_tasks_share_the_file(tmp_path: Path) -> None:
    tasks = TaskStore.in_home(tmp_path)
    responses = ResponseStore.in_home(tmp_path)
    task = tasks.start(None, "farm", "openai")
    responses.put({"id": "resp_2", "output": []}, [], "farm")
    assert tasks.get(task.id) is not None and responses.get("resp_2") is not None
    assert responses.path == tasks.path
    tasks.close()
    responses.close()


def test_responses_older_than_30_days_are_gone_when_the_store_opens(tmp_path: Path) -> None:
    store = ResponseStore.in_home(tmp_path)
    store.put({"id": "resp_old", "output": []}, [], "farm")
    store.put({"id": "resp_new", "output": []}, [], "farm")
    with sqlite3.connect(store.path) as db:
        db.execute(
            "UPDATE responses SET created_at=? WHERE id='resp_old'",
            (time.time() - KEPT_SECONDS - 60,),
        )
    store.close()
    reopened = ResponseStore.in_home(tmp_path)
    assert reopened.get("resp_old") is None
    assert reopened.get("resp_new") is not None
    reopened.close()


def test_the_items_of_stored_responses_are_found_by_id(tmp_path: Path) -> None:
    store = ResponseStore.in_home(tmp_path)
    asked = {"id": "msg_in", "type": "message", "role": "user", "content": "hi"}
    call = {"id": "fc_1", "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    store.put({"id": "resp_1", "output": [call]}, [asked], "farm")
    output = {"type": "function_call_output", "call_id": "c", "output": "ok"}  # no id
    later = {"id": "msg_2", "type": "message", "role": "assistant", "content": "done"}
    store.put({"id": "resp_2", "output": [later]}, [asked, call, output], "farm")
    assert store.item("fc_1") == call and store.item("msg_in") == asked
    assert store.item("msg_2") == later and store.item("nope") is None
    store.delete("resp_2")
    assert store.item("msg_2") is None
    assert store.item("fc_1") == call  # resp_1 still holds it
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE responses SET created_at=?", (time.time() - KEPT_SECONDS - 60,))
    store.close()
    reopened = ResponseStore.in_home(tmp_path)
    assert reopened.item("fc_1") is None
    with sqlite3.connect(reopened.path) as db:
        assert db.execute("SELECT COUNT(*) FROM response_items").fetchone() == (0,)
    reopened.close()


def test_the_index_knows_each_items_size_without_reading_it(tmp_path: Path) -> None:
    store = ResponseStore.in_home(tmp_path)
    small = {"id": "msg_s", "type": "message", "role": "user", "content": "hi"}
    large = {"id": "msg_l", "type": "message", "role": "user", "content": "é" * 5000}
    store.put({"id": "resp_1", "output": []}, [small, large], "farm")
    expected = {i["id"]: len(json.dumps(i, ensure_ascii=False)) for i in (small, large)}
    assert store.item_sizes(["msg_l", "msg_s", "msg_l", "nope"]) == expected
    many = [f"id_{n}" for n in range(1200)]  # more ids than one SQL statement takes
    assert store.item_sizes([*many, "msg_s"]) == {"msg_s": expected["msg_s"]}
    assert store.items(["msg_l", "nope", "msg_s"]) == {"msg_l": large, "msg_s": small}
    assert store.items([*many, "msg_s"]) == {"msg_s": small}
    store.close()


def test_a_file_from_before_sizes_were_indexed_gets_them_when_it_opens(tmp_path: Path) -> None:
    item = {"id": "msg_old", "type": "message", "role": "user", "content": "kept"}
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:  # the previous layout
        db.execute(
            "CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " created_at REAL NOT NULL, input_items TEXT NOT NULL, response TEXT NOT NULL)"
        )
        db.execute(
            "CREATE TABLE response_items (item_id TEXT NOT NULL, response_id TEXT NOT NULL,"
            " PRIMARY KEY (item_id, response_id))"
        )
        db.execute(
            "INSERT INTO responses VALUES ('resp_old', 'farm', ?, ?, ?)",
            (time.time(), json.dumps([item]), json.dumps({"id": "resp_old", "output": []})),
        )
        db.execute("INSERT INTO response_items VALUES ('msg_old', 'resp_old')")
    store = ResponseStore.in_home(tmp_path)
    assert store.item_sizes(["msg_old"]) == {"msg_old": len(json.dumps(item))}
    assert store.item("msg_old") == item
    store.close()
